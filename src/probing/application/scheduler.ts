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
 * - Due endpoints are kept in a min-heap by due time, and one timer is set for the earliest, on a
 *   grid of ticks: jobs due within the same tick go out together. The grouping is on purpose:
 *   their checks are then recorded in one group commit and applied to the views in one batch per
 *   projection, and every per-batch cost (a view commit, each projection's checkpoint, a group
 *   commit) is shared by the tick's checks. Each endpoint's slots stay exactly one interval
 *   apart: a slot goes out at the first tick at or after it, the same offset into its tick every
 *   interval. The tick (`tickFor`) is as long as it takes a batch to fall due at the schedule's
 *   rate, from 50 ms to 500 ms and at most a tenth of the shortest interval (a job is worth
 *   nothing once its interval has passed: `maxAgeMs`). The batch is 25 jobs on a quiet schedule
 *   (up to 60 jobs a second): its turns hold the event loop a few ms each, but only about twice
 *   a second, under 1 % of the time. On a busier schedule it is 10 jobs, whose turns stay under
 *   2 ms: 25 there held the loop past 5 ms two to four times as often. Measured (docs/benchmarks.md,
 *   "Probing, steady"): at 50 checks/s 10 jobs (200 ms) cost about a third less CPU per check than
 *   2-3 (50 ms), and 25 (500 ms) about a tenth less again; at 100 checks/s 10 jobs (100 ms) cost
 *   a sixth less than 5. Publishing each job at its own slot (one check per event-loop turn)
 *   cost 18-27 % more CPU per check at 2,000 endpoints and did not shorten the loop's stretches.
 *   Nothing is walked per tick, and an idle scheduler sets no timer.
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
/** Jobs due within one tick go out together (see the file comment): the tick's bounds and what it aims to gather. */
const MIN_TICK_MS = 50;
const MAX_TICK_MS = 500;
/** Jobs a tick gathers on a quiet schedule (up to QUIET_JOBS_PER_SECOND), and on a busier one (see the file comment). */
const JOBS_PER_QUIET_TICK = 25;
const JOBS_PER_BUSY_TICK = 10;
const QUIET_JOBS_PER_SECOND = 60;
/** The tick is at most this share of the shortest interval scheduled, so a job keeps most of its age (its interval) for the prober. */
const MAX_TICK_SHARE_OF_INTERVAL = 1 / 10;
/** A due endpoint whose shard is not held (a renewal pending) is looked at again this much later. */
const NOT_HELD_RETRY_MS = 50;
/** The tick timer is never set further ahead than this (a wall-clock step is then noticed within it). */
const MAX_WAIT_MS = 60_000;

export interface ScheduledEndpoint {
  endpointId: number;
  teamId: number;
  intervalMs: number;
  configurationVersion: number;
  nextDue: number;
  /** Probe regions; empty: one job any prober takes. */
  regions: string[];
}

/** A scheduled endpoint with what the due queue needs: its spread offset and when to look at it next. */
interface Entry extends ScheduledEndpoint {
  offset: number;
  lease: string;
  /** The due queue's key for this endpoint; a queued item with another key is stale. */
  lookAt: number;
}

interface Queued {
  at: number;
  entry: Entry;
}

/** Binary min-heap of endpoints by the time to look at them. Stale items are skipped when popped. */
class DueQueue {
  private readonly items: Queued[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Queued | undefined {
    return this.items[0];
  }

  push(item: Queued): void {
    const items = this.items;
    let i = items.push(item) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent].at <= item.at) break;
      items[i] = items[parent];
      i = parent;
    }
    items[i] = item;
  }

  pop(): Queued | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const child = left + 1 < items.length && items[left + 1].at < items[left].at ? left + 1 : left;
      if (items[child].at >= last.at) break;
      items[i] = items[child];
      i = child;
    }
    items[i] = last;
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }
}

/**
 * The scheduler's tick for a schedule that publishes `jobsPerSecond` and whose shortest interval
 * is `shortestIntervalMs`: long enough for a batch (25 jobs on a quiet schedule, 10 on a busy one)
 * to fall due in it, a multiple of MIN_TICK_MS, at most MAX_TICK_MS and at most a tenth of the
 * shortest interval (rounded down to the grid; never under MIN_TICK_MS).
 */
export function tickFor(jobsPerSecond: number, shortestIntervalMs = Infinity): number {
  const batch = jobsPerSecond <= QUIET_JOBS_PER_SECOND ? JOBS_PER_QUIET_TICK : JOBS_PER_BUSY_TICK;
  const gathering = jobsPerSecond > 0 ? (batch / jobsPerSecond) * 1000 : MAX_TICK_MS;
  const ceiling = Math.min(MAX_TICK_MS, Math.floor((shortestIntervalMs * MAX_TICK_SHARE_OF_INTERVAL) / MIN_TICK_MS) * MIN_TICK_MS);
  return Math.max(MIN_TICK_MS, Math.min(ceiling, Math.ceil(gathering / MIN_TICK_MS) * MIN_TICK_MS));
}

export function spreadOffset(endpointId: number, intervalMs: number): number {
  const digest = createHash('sha256').update(`endpoint:${endpointId}`).digest();
  return digest.readUInt32BE(0) % intervalMs;
}

const shardLease = (shard: number) => `scheduler-shard-${shard}`;

/** First slot `k * interval + offset` at or after `from`. */
export function nextSlot(endpointId: number, intervalMs: number, from: number): number {
  return slotAt(spreadOffset(endpointId, intervalMs), intervalMs, from);
}

function slotAt(offset: number, intervalMs: number, from: number): number {
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
  private readonly endpoints = new Map<number, Entry>();
  private readonly due = new DueQueue();
  private readonly leaseNames: string[];
  private tickTimer: NodeJS.Timeout | null = null;
  /** When the armed tick timer fires (ms since the epoch); Infinity when none is armed. */
  private armedFor = Infinity;
  private refreshTimer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;
  private ticking = false;
  private stopped = true;
  /** The grid the due jobs go out on (`tickFor` the endpoints scheduled here). */
  private tickMs = MIN_TICK_MS;
  /** What the endpoint list was last read from: the schedule's stamp and the shards held. */
  private readFrom: string | null = null;

  constructor(
    private readonly platform: Platform,
    private readonly options: SchedulerOptions = {},
  ) {
    this.shards = options.shards ?? SCHEDULER_SHARDS;
    this.leaseNames = Array.from({ length: this.shards }, (_, shard) => shardLease(shard));
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
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.disarm();
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    await this.refreshing;
    for (let shard = 0; shard < this.shards; shard++) await this.platform.leases.release(shardLease(shard)).catch(() => undefined);
    this.owned.clear();
    this.endpoints.clear();
    this.due.clear();
    this.readFrom = null;
  }

  /** Sets the tick timer for the earliest due endpoint (the first tick of the grid at or after it), unless one is set as early. */
  private arm(): void {
    if (this.stopped) return;
    const top = this.due.peek();
    if (!top) return;
    const now = Date.now();
    const at = Math.ceil(Math.max(top.at, now + 1) / this.tickMs) * this.tickMs;
    if (at >= this.armedFor) return;
    this.disarm();
    const wait = Math.min(at - now, MAX_WAIT_MS);
    this.armedFor = now + wait;
    this.tickTimer = setTimeout(() => {
      this.tickTimer = null;
      this.armedFor = Infinity;
      void this.tick();
    }, wait);
  }

  private disarm(): void {
    if (this.tickTimer) clearTimeout(this.tickTimer);
    this.tickTimer = null;
    this.armedFor = Infinity;
  }

  private lookAt(entry: Entry, at: number): void {
    entry.lookAt = at;
    this.due.push({ at, entry });
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
      const regions = row.snapshot?.configuration?.regions ?? [];
      if (!existing) {
        const offset = spreadOffset(endpointId, intervalMs);
        const entry: Entry = {
          endpointId,
          teamId: Number(row.team_id),
          intervalMs,
          configurationVersion: Number(row.configuration_version),
          nextDue: slotAt(offset, intervalMs, now),
          regions,
          offset,
          lease: this.leaseNames[endpointId % this.shards],
          lookAt: 0,
        };
        this.endpoints.set(endpointId, entry);
        this.lookAt(entry, entry.nextDue);
        continue;
      }
      existing.configurationVersion = Number(row.configuration_version);
      existing.regions = regions;
      if (existing.intervalMs !== intervalMs) {
        existing.intervalMs = intervalMs;
        existing.offset = spreadOffset(endpointId, intervalMs);
        const slot = slotAt(existing.offset, intervalMs, now);
        if (slot < existing.nextDue) {
          existing.nextDue = slot;
          this.lookAt(existing, slot);
        }
      }
    }
    // Their queued items go stale: skipped when popped.
    for (const endpointId of this.endpoints.keys()) if (!seen.has(endpointId)) this.endpoints.delete(endpointId);
    let jobsPerSecond = 0;
    let shortestIntervalMs = Infinity;
    for (const entry of this.endpoints.values()) {
      jobsPerSecond += (Math.max(1, entry.regions.length) * 1000) / entry.intervalMs;
      shortestIntervalMs = Math.min(shortestIntervalMs, entry.intervalMs);
    }
    this.tickMs = tickFor(jobsPerSecond, shortestIntervalMs);
    this.arm();
  }

  async tick(now = Date.now()): Promise<void> {
    const transport = this.platform.transport;
    if (this.ticking || this.stopped || !transport) return;
    this.ticking = true;
    try {
      const due: Entry[] = [];
      const notHeld: Entry[] = [];
      for (let top = this.due.peek(); top !== undefined && top.at <= now; top = this.due.peek()) {
        this.due.pop();
        const entry = top.entry;
        if (this.endpoints.get(entry.endpointId) !== entry || entry.lookAt !== top.at) continue;
        // A shard lost since the last refresh publishes nothing more (holds() turns false before another process may take it).
        if (this.platform.leases.holds(entry.lease)) due.push(entry);
        else notHeld.push(entry);
      }
      for (const entry of notHeld) this.lookAt(entry, now + NOT_HELD_RETRY_MS);
      const jobs: ProbeJob[] = [];
      for (const endpoint of due) {
        const dueAt = endpoint.nextDue;
        endpoint.nextDue = slotAt(endpoint.offset, endpoint.intervalMs, now + 1);
        this.lookAt(endpoint, endpoint.nextDue);
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
      this.arm();
    }
  }
}
