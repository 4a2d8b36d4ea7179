/**
 * The probe transport port: a durable work queue of probe jobs between the scheduler and prober
 * workers. Adapters: in-process queue, NATS JetStream.
 * Contract suite: test/contract/probe-transport.contract.ts.
 *
 * The queue is bounded, so that a backlog (every prober down, probers too slow) never turns into
 * a burst of probes later:
 * - it holds at most one scheduled job per endpoint: publishing a scheduled job replaces the one
 *   of the same endpoint still waiting (the newest slot wins; manual jobs are never replaced);
 * - a job older than its `maxAgeMs` when a consumer would take it is dropped, not handed out
 *   (`onDropped` reason `stale`). Age is measured by the queue's own clock (the NATS server's
 *   message timestamps, the in-process queue's monotonic clock), never by comparing the
 *   publisher's clock with the consumer's;
 * - a job whose handler failed on its `maxDeliver`-th delivery is dropped (`max_deliver`).
 *
 * Regions: a transport belongs to one probe region (PROBE_REGION). Its consumers take the jobs
 * without a region and the jobs of their own region, never another region's; a scheduled job is
 * kept per endpoint and region.
 */

export interface ProbeJob {
  /** Unique per job; the check recorder drops a second result for the same job id. */
  jobId: string;
  teamId: number;
  endpointId: number;
  /** Configuration version the scheduler saw; the prober loads the endpoint at this version or newer. */
  configurationVersion: number;
  source: 'scheduled' | 'manual';
  /** RFC 3339: when the job was due (scheduling delay = start - scheduledAt). */
  scheduledAt: string;
  /**
   * A job not taken within this many milliseconds of being published is dropped, not probed:
   * the scheduler sets the endpoint's interval, since the next slot is due by then. Absent: no limit.
   */
  maxAgeMs?: number;
  /**
   * Only a prober of this region may take the job (the endpoint lists regions; one job per region
   * and slot). Absent: any prober takes it, whatever its region.
   */
  region?: string;
}

/** Why a job was dropped without being handled (the `reason` label of `monitor_probe_jobs_dropped_total`). */
export const DROP_REASONS = ['stale', 'max_deliver'] as const;
export type DropReason = (typeof DROP_REASONS)[number];

/** Limits every adapter applies (NATS: the consumer's `max_deliver`). */
export interface QueueLimits {
  /** A job is handed out at most this many times; a failure on the last one drops it. */
  maxDeliver: number;
}

export const DEFAULT_QUEUE_LIMITS: QueueLimits = { maxDeliver: 5 };

export interface JobDelivery {
  job: ProbeJob;
  /** 1 on first delivery, more after redelivery. */
  deliveryCount: number;
  /** Extends the ack deadline for long jobs. */
  inProgress(): void;
}

/**
 * The handler resolving acknowledges the job; throwing (or the worker dying) leaves it
 * unacknowledged, and it is delivered again after `ackWaitMs`.
 */
export type JobHandler = (delivery: JobDelivery) => Promise<void>;

export interface ConsumeOptions {
  /** At most this many unacknowledged jobs held by this consumer at once. */
  maxInFlight: number;
  /** Redelivery happens when a job stays unacknowledged this long. */
  ackWaitMs: number;
  /** Told of every job this consumer dropped instead of handing it to the handler. */
  onDropped?: (job: ProbeJob, reason: DropReason) => void;
}

export interface JobConsumer {
  /** Stops taking jobs and waits for the handlers in flight. */
  stop(): Promise<void>;
}

export interface ProbeTransport {
  publish(job: ProbeJob): Promise<void>;
  consume(handler: JobHandler, options: ConsumeOptions): Promise<JobConsumer>;
  /** Jobs published and not yet acknowledged (backlog), for status and benchmarks. */
  pending(): Promise<number>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
