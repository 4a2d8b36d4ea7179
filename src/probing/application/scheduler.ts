/**
 * Scheduler: every enabled and verified endpoint is probed every interval_seconds.
 *
 * - Endpoints are split into SHARDS shards (endpoint_id mod SHARDS); a scheduler process owns a
 *   shard while it holds the lease `scheduler-shard-<n>` (kept by the process's LeaseKeeper,
 *   all shards in one renewal write), so exactly one scheduler publishes each endpoint's jobs.
 * - Due times are `k * interval + offset`, offset a hash of the endpoint id within the interval,
 *   so endpoints on the same interval are spread over it instead of firing together.
 * - The job id is `${endpointId}:${dueTimeMs}`: a slot published twice (e.g. around a lease
 *   hand-over) is recorded once.
 * - An endpoint with `regions` has each slot published once per region, as `${endpointId}:${dueTimeMs}:${region}`
 *   with the job's `region` set: only probers of that region take it (see the probe transport port).
 * - The endpoint list comes from the `probing` view (`schedule`), looked at every second, so a
 *   configuration change (enable, disable, interval) takes effect within one interval. The rows
 *   are read again only when the collection's stamp or the shards held changed (a read store
 *   without stamps: every second): with thousands of endpoints the re-read was most of an idle
 *   process's CPU and its longest event-loop stall.
 * - Missed slots (process paused) are not replayed: the next job is the next slot after now.
 *   A job nobody took is replaced by its endpoint's next one and dropped once older than the
 *   interval (`maxAgeMs`; see the probe transport port), so probers coming back after an outage
 *   probe each endpoint's current slot once, not the missed ones.
 */
import { createHash } from 'node:crypto';
import type { Platform } from '../../platform/platform.js';
import type { ProbeJob } from '../../platform/transport/probe-transport.port.js';
import { schedulableRows } from '../views/probing/queries.js';
import { PROBING_VIEW, SCHEDULE } from '../views/probing/view.js';

export const SCHEDULER_SHARDS = 16;
const REFRESH_MS = 1_000;
const TICK_MS = 50;

export interface ScheduledEndpoint {
  endpointId: number;
  teamId: number;
  intervalMs: number;
  configurationVersion: number;
  nextDue: number;
  /** Probe regions; empty: one job any prober takes. */
  regions: string[];
}

export function spreadOffset(endpointId: number, intervalMs: number): number {
  const digest = createHash('sha256').update(`endpoint:${endpointId}`).digest();
  return digest.readUInt32BE(0) % intervalMs;
}

const shardLease = (shard: number) => `scheduler-shard-${shard}`;

/** First slot `k * interval + offset` at or after `from`. */
export function nextSlot(endpointId: number, intervalMs: number, from: number): number {
  const offset = spreadOffset(endpointId, intervalMs);
  return Math.ceil((from - offset) / intervalMs) * intervalMs + offset;
}

export interface SchedulerOptions {
  shards?: number;
  /** Called after each publish with the scheduling delay (publish time - due time), for benchmarks. */
  onPublish?: (job: ProbeJob, delayMs: number) => void;
}

export class Scheduler {
  private readonly shards: number;
  private readonly owned = new Set<number>();
  private readonly endpoints = new Map<number, ScheduledEndpoint>();
  private tickTimer: NodeJS.Timeout | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private ticking = false;
  private stopped = true;
  /** What the endpoint list was last read from: the schedule's stamp and the shards held. */
  private readFrom: string | null = null;

  constructor(
    private readonly platform: Platform,
    private readonly options: SchedulerOptions = {},
  ) {
    this.shards = options.shards ?? SCHEDULER_SHARDS;
  }

  start(): void {
    if (!this.platform.transport || !this.stopped) return;
    this.stopped = false;
    const refresh = () => {
      if (this.stopped || this.refreshing) return;
      this.refreshing = this.refresh()
        .catch((error) => this.platform.logger.warn({ err: error }, 'scheduler refresh failed'))
        .finally(() => {
          this.refreshing = null;
        });
    };
    refresh();
    this.refreshTimer = setInterval(refresh, REFRESH_MS);
    this.tickTimer = setInterval(() => void this.tick(), TICK_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.tickTimer) clearInterval(this.tickTimer);
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    await this.refreshing;
    for (let shard = 0; shard < this.shards; shard++) await this.platform.leases.release(shardLease(shard)).catch(() => undefined);
    this.owned.clear();
    this.endpoints.clear();
    this.readFrom = null;
  }

  /** Shards this process schedules right now. */
  ownedShards(): number[] {
    return [...this.owned].sort((a, b) => a - b);
  }

  async refresh(now = Date.now()): Promise<void> {
    const leases = Array.from({ length: this.shards }, (_, shard) => shardLease(shard));
    await this.platform.leases.want(...leases);
    for (let shard = 0; shard < this.shards; shard++) {
      if (this.platform.leases.holds(leases[shard])) this.owned.add(shard);
      else this.owned.delete(shard);
    }
    const stamp = await this.platform.reader.stamps(PROBING_VIEW, SCHEDULE);
    const readFrom = stamp ? `${stamp.collection}@${stamp.changed}/${this.ownedShards().join(',')}` : null;
    if (readFrom !== null && readFrom === this.readFrom) return;
    const rows = await schedulableRows(this.platform.reader);
    this.readFrom = readFrom;
    const seen = new Set<number>();
    for (const row of rows) {
      const endpointId = Number(row.endpoint_id);
      if (!this.owned.has(endpointId % this.shards)) continue;
      seen.add(endpointId);
      const intervalMs = Math.max(1, Number(row.interval_seconds)) * 1000;
      const existing = this.endpoints.get(endpointId);
      const slot = nextSlot(endpointId, intervalMs, now);
      const regions = row.snapshot?.configuration?.regions ?? [];
      if (!existing) {
        this.endpoints.set(endpointId, { endpointId, teamId: Number(row.team_id), intervalMs, configurationVersion: Number(row.configuration_version), nextDue: slot, regions });
        continue;
      }
      existing.configurationVersion = Number(row.configuration_version);
      existing.regions = regions;
      if (existing.intervalMs !== intervalMs) {
        existing.intervalMs = intervalMs;
        existing.nextDue = Math.min(existing.nextDue, slot);
      }
    }
    for (const endpointId of this.endpoints.keys()) if (!seen.has(endpointId)) this.endpoints.delete(endpointId);
  }

  async tick(now = Date.now()): Promise<void> {
    const transport = this.platform.transport;
    if (this.ticking || this.stopped || !transport) return;
    this.ticking = true;
    try {
      const due: ScheduledEndpoint[] = [];
      // A shard lost since the last refresh publishes nothing more (holds() turns false before another process may take it).
      for (const endpoint of this.endpoints.values()) if (endpoint.nextDue <= now && this.platform.leases.holds(shardLease(endpoint.endpointId % this.shards))) due.push(endpoint);
      const jobs: ProbeJob[] = [];
      for (const endpoint of due) {
        const dueAt = endpoint.nextDue;
        endpoint.nextDue = nextSlot(endpoint.endpointId, endpoint.intervalMs, now + 1);
        const job: ProbeJob = {
          jobId: `${endpoint.endpointId}:${dueAt}`,
          teamId: endpoint.teamId,
          endpointId: endpoint.endpointId,
          configurationVersion: endpoint.configurationVersion,
          source: 'scheduled',
          scheduledAt: new Date(dueAt).toISOString(),
          // Once the next slot is due this one is worth nothing: dropped, not probed late.
          maxAgeMs: endpoint.intervalMs,
        };
        if (endpoint.regions.length === 0) jobs.push(job);
        for (const region of endpoint.regions) jobs.push({ ...job, jobId: `${job.jobId}:${region}`, region });
      }
      await Promise.all(
        jobs.map(async (job) => {
          const dueAt = Date.parse(job.scheduledAt);
          try {
            await transport.publish(job);
            const delayMs = Date.now() - dueAt;
            this.platform.metrics.schedulingDelay.observe(Math.max(0, delayMs) / 1000);
            this.options.onPublish?.(job, delayMs);
          } catch (error) {
            this.platform.logger.warn({ err: error, job_id: job.jobId }, 'probe job not published');
          }
        }),
      );
    } finally {
      this.ticking = false;
    }
  }
}
