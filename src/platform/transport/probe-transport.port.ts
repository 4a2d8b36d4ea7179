/**
 * The probe transport port: a durable work queue of probe jobs between the scheduler (and the
 * manual-check route) and prober workers. Adapters: in-process queue, NATS JetStream.
 * Contract suite: test/contract/probe-transport.contract.ts.
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
}

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
