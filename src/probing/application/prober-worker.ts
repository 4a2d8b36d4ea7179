/**
 * Prober worker: takes probe jobs from the transport, loads the endpoint at the job's
 * configuration version or newer, probes it and records the check. Redelivered jobs are
 * dropped by the recorder (same job id), so a crash between recording and acknowledging
 * records nothing twice.
 */
import type { ProbeRecorder } from './probe-recorder.js';
import type { Platform } from '../../platform/platform.js';
import { DROP_REASONS, type JobConsumer, type JobDelivery, type ProbeJob } from '../../platform/transport/probe-transport.port.js';
import type { HttpProber } from '../prober/http-prober.js';
import { ANNOUNCEMENT, ANNOUNCEMENT_HORIZON_MS, announcementLease } from '../domain/regions.js';

export interface ProberWorkerOptions {
  maxInFlight: number;
  ackWaitMs: number;
}

/**
 * A job's slot is held for its whole wall time (probe, then recording on a busy event loop), so
 * jobs per second per process are at most maxInFlight / that time: slow targets need more slots
 * for the same rate. PROBER_MAX_IN_FLIGHT sets it per deployment.
 */
export const DEFAULT_PROBER_OPTIONS: ProberWorkerOptions = { maxInFlight: 256, ackWaitMs: 30_000 };

export type JobResult = 'recorded' | 'duplicate' | 'skipped';

export class ProberWorker {
  private consumer: JobConsumer | null = null;
  /** The deliveries being handled: one sweep keeps them all alive (see keepAliveEveryMs). */
  private readonly running = new Set<JobDelivery>();
  private keepAlive: NodeJS.Timeout | null = null;

  constructor(
    private readonly platform: Platform,
    private readonly recorder: ProbeRecorder,
    private readonly prober: HttpProber,
    private readonly options: ProberWorkerOptions = DEFAULT_PROBER_OPTIONS,
  ) {}

  async start(): Promise<void> {
    const transport = this.platform.transport;
    if (!transport || this.consumer) return;
    // Announces the region while this worker runs (GET /api/v2/regions).
    await this.platform.leases.want(this.announcement());
    await this.removeGoneAnnouncements();
    // Both reasons show as 0 from the start, so a rate over them works before the first drop.
    for (const reason of DROP_REASONS) this.platform.metrics.probeJobsDropped.inc({ reason }, 0);
    const keepAlive = setInterval(() => this.running.forEach((delivery) => delivery.inProgress()), this.keepAliveEveryMs());
    try {
      this.consumer = await transport.consume((delivery) => this.handleDelivery(delivery), {
        ...this.options,
        onDropped: (job, reason) => {
          this.platform.metrics.probeJobsDropped.inc({ reason });
          this.platform.logger.debug({ job_id: job.jobId, reason }, 'probe job dropped, not probed');
        },
      });
    } catch (error) {
      clearInterval(keepAlive);
      throw error;
    }
    this.keepAlive = keepAlive;
  }

  async stop(): Promise<void> {
    const [consumer, keepAlive] = [this.consumer, this.keepAlive];
    this.consumer = null;
    this.keepAlive = null;
    await consumer?.stop();
    if (keepAlive !== null) clearInterval(keepAlive);
    if (consumer) await this.platform.leases.release(this.announcement()).catch(() => undefined);
  }

  /**
   * Each prober start adds an announcement row; this removes, at the same place, those released
   * (clean stops) and those not renewed within the horizon (killed probers, any region), so the
   * rows stay bounded by the probers running plus those gone within the horizon. A failure here
   * only delays the cleanup to the next start.
   */
  private async removeGoneAnnouncements(): Promise<void> {
    try {
      const removed = await this.platform.coordination.removeLeases(ANNOUNCEMENT, Date.now() - ANNOUNCEMENT_HORIZON_MS);
      if (removed > 0) this.platform.logger.debug({ removed }, 'removed announcements of probers gone');
    } catch (error) {
      this.platform.logger.warn({ err: error }, 'could not remove announcements of probers gone');
    }
  }

  private announcement(): string {
    return announcementLease(this.platform.config.probeRegion, this.platform.instanceId);
  }

  /**
   * A job's ack deadline is extended at most this long after it was delivered or last extended,
   * half its ack wait: one interval for every running job, where a timer per job cost a timer's
   * setup and teardown on every check.
   */
  private keepAliveEveryMs(): number {
    return Math.max(100, Math.floor(this.options.ackWaitMs / 2));
  }

  private async handleDelivery(delivery: JobDelivery): Promise<void> {
    this.running.add(delivery);
    this.platform.metrics.probeJobsInFlight.inc();
    try {
      await this.handle(delivery.job);
    } catch (error) {
      this.platform.logger.warn({ err: error, job_id: delivery.job.jobId }, 'probe job failed; it will be redelivered');
      throw error;
    } finally {
      this.running.delete(delivery);
      this.platform.metrics.probeJobsInFlight.dec();
    }
  }

  async handle(job: ProbeJob): Promise<JobResult> {
    // Another region's job (the transport hands out none; a defence against a misrouted one).
    if (job.region !== undefined && job.region !== this.platform.config.probeRegion) return 'skipped';
    const endpoint = await this.recorder.loadEndpoint(job.endpointId);
    if (!endpoint || endpoint.team_id !== job.teamId) return 'skipped';
    if (endpoint.configuration_version < job.configurationVersion) {
      // The store has not shown us that version yet: try again later.
      throw new Error(`endpoint ${job.endpointId} is at version ${endpoint.configuration_version}, job wants ${job.configurationVersion}`);
    }
    if (!endpoint.destination_verified) return 'skipped';
    if (job.source === 'scheduled' && !endpoint.enabled) return 'skipped';
    const outcome = await this.prober.probe(endpoint.configuration);
    const result = await this.recorder.record({ jobId: job.jobId, source: job.source, endpoint, outcome, region: this.platform.config.probeRegion, regional: job.region !== undefined });
    return result.check ? 'recorded' : 'duplicate';
  }
}
