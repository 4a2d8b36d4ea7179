/**
 * In-memory probe transport with JetStream work-queue semantics, for the embedded
 * all-in-one process and for tests: each job is held by one consumer at a time, acknowledged
 * when its handler resolves, and handed out again `ackWaitMs` after a failure or a silent
 * handler. Bounded as the port says: one waiting scheduled job per endpoint, stale jobs and jobs
 * past `maxDeliver` dropped. Nothing survives the process.
 *
 * The process is one probe region: a job for another region is not queued (no consumer of this
 * process may take it; that region's checks are missing, and alerting counts it unknown).
 */
import { performance } from 'node:perf_hooks';
import { StoreUnavailableError } from '../../event-store/event-store.port.js';
import {
  DEFAULT_QUEUE_LIMITS,
  type ConsumeOptions,
  type DropReason,
  type JobConsumer,
  type JobHandler,
  type ProbeJob,
  type ProbeTransport,
  type QueueLimits,
} from '../probe-transport.port.js';
import { assertConsumeOptions, assertQueueLimits } from '../consume-options.js';
import { DEFAULT_REGION } from '../../config/region.js';

interface Entry {
  job: ProbeJob;
  /** performance.now() at publication: the job's age is measured on this process's monotonic clock. */
  publishedAt: number;
  deliveryCount: number;
  /** The current delivery; a timer or ack holding an older one is stale. */
  delivery: object | null;
  timer: NodeJS.Timeout | null;
}

/** The NATS adapter's subject, as a key: one per endpoint (and region) for scheduled jobs, one per job for manual ones. */
export function queueKey(job: ProbeJob): string {
  return job.source === 'scheduled' ? `endpoint:${job.endpointId}:${job.region ?? ''}` : `job:${job.jobId}`;
}

export class InProcessTransport implements ProbeTransport {
  private readonly entries = new Map<string, Entry>();
  /** Queue key -> the job id holding it (see queueKey). */
  private readonly byKey = new Map<string, string>();
  /** Job ids ready for delivery, oldest first. */
  private readonly ready: string[] = [];
  private readonly consumers: InProcessConsumer[] = [];
  private readonly limits: QueueLimits;
  private nextConsumer = 0;
  private closed = false;

  constructor(
    limits: Partial<QueueLimits> = {},
    private readonly region: string = DEFAULT_REGION,
  ) {
    this.limits = { ...DEFAULT_QUEUE_LIMITS, ...limits };
    assertQueueLimits(this.limits);
  }

  async publish(job: ProbeJob): Promise<void> {
    this.assertOpen();
    if (job.region !== undefined && job.region !== this.region) return;
    if (this.entries.has(job.jobId)) return; // same job still pending: de-duplicated
    const key = queueKey(job);
    const replaced = this.byKey.get(key);
    if (replaced !== undefined) this.remove(this.entries.get(replaced)!);
    this.byKey.set(key, job.jobId);
    this.entries.set(job.jobId, { job: { ...job }, publishedAt: performance.now(), deliveryCount: 0, delivery: null, timer: null });
    this.ready.push(job.jobId);
    this.dispatch();
  }

  async consume(handler: JobHandler, options: ConsumeOptions): Promise<JobConsumer> {
    this.assertOpen();
    assertConsumeOptions(options);
    const consumer = new InProcessConsumer(this, handler, options);
    this.consumers.push(consumer);
    this.dispatch();
    return consumer;
  }

  async pending(): Promise<number> {
    return this.entries.size;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  /** Stops every consumer (waiting for their handlers) and drops timers and the backlog. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.consumers.map((consumer) => consumer.stop()));
    for (const entry of this.entries.values()) if (entry.timer) clearTimeout(entry.timer);
    this.entries.clear();
    this.byKey.clear();
    this.ready.length = 0;
  }

  /** @internal */
  detach(consumer: InProcessConsumer): void {
    const index = this.consumers.indexOf(consumer);
    if (index >= 0) this.consumers.splice(index, 1);
  }

  /** @internal Hands ready jobs to consumers with a free slot, round robin so that consumers compete. */
  dispatch(): void {
    while (this.ready.length > 0) {
      const consumer = this.nextFreeConsumer();
      if (!consumer) return;
      const entry = this.entries.get(this.ready.shift()!);
      if (entry) this.deliver(entry, consumer);
    }
  }

  private nextFreeConsumer(): InProcessConsumer | undefined {
    for (let i = 0; i < this.consumers.length; i++) {
      const index = (this.nextConsumer + i) % this.consumers.length;
      if (this.consumers[index]!.hasFreeSlot()) {
        this.nextConsumer = index + 1;
        return this.consumers[index];
      }
    }
    return undefined;
  }

  private deliver(entry: Entry, consumer: InProcessConsumer): void {
    const { maxAgeMs } = entry.job;
    if (maxAgeMs !== undefined && performance.now() - entry.publishedAt > maxAgeMs) {
      this.drop(entry, consumer, 'stale');
      return;
    }
    const delivery = {};
    entry.deliveryCount += 1;
    entry.delivery = delivery;
    const { ackWaitMs } = consumer.options;
    this.armTimer(entry, delivery, ackWaitMs);
    consumer.run({
      job: { ...entry.job },
      deliveryCount: entry.deliveryCount,
      inProgress: () => this.armTimer(entry, delivery, ackWaitMs),
      ack: () => this.ack(entry),
      fail: () => {
        if (entry.delivery === delivery && entry.deliveryCount >= this.limits.maxDeliver) this.drop(entry, consumer, 'max_deliver');
        else this.armTimer(entry, delivery, ackWaitMs);
      },
    });
  }

  private drop(entry: Entry, consumer: InProcessConsumer, reason: DropReason): void {
    if (this.entries.get(entry.job.jobId) !== entry) return;
    this.remove(entry);
    consumer.options.onDropped?.({ ...entry.job }, reason);
  }

  /** Forgets a job, wherever it is: waiting, delivered or waiting for redelivery. */
  private remove(entry: Entry): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    this.entries.delete(entry.job.jobId);
    const key = queueKey(entry.job);
    if (this.byKey.get(key) === entry.job.jobId) this.byKey.delete(key);
    // Only a job that is not being handled sits in `ready`; searching it on every ack would cost
    // the whole backlog per job.
    if (entry.delivery === null) {
      const index = this.ready.indexOf(entry.job.jobId);
      if (index >= 0) this.ready.splice(index, 1);
    }
    entry.delivery = null;
  }

  /** (Re)starts the ack deadline of a delivery; no effect once the delivery is stale or acked. */
  private armTimer(entry: Entry, delivery: object, ackWaitMs: number): void {
    if (entry.delivery !== delivery || this.entries.get(entry.job.jobId) !== entry) return;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.redeliver(entry, delivery), ackWaitMs);
  }

  /**
   * The ack deadline passed: hand the job out again, unless that was its last delivery (like
   * JetStream, which then stops redelivering; the job stays until acknowledged, failed or replaced).
   */
  private redeliver(entry: Entry, delivery: object): void {
    if (entry.delivery !== delivery) return;
    entry.timer = null;
    if (entry.deliveryCount >= this.limits.maxDeliver) return;
    entry.delivery = null;
    this.ready.push(entry.job.jobId);
    this.dispatch();
  }

  /** Like JetStream, a late ack from an older delivery still removes the job. */
  private ack(entry: Entry): void {
    if (this.entries.get(entry.job.jobId) !== entry) return;
    this.remove(entry);
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreUnavailableError('in-process probe transport is closed');
  }
}

interface Delivery {
  job: ProbeJob;
  deliveryCount: number;
  inProgress(): void;
  ack(): void;
  fail(): void;
}

class InProcessConsumer implements JobConsumer {
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly transport: InProcessTransport,
    private readonly handler: JobHandler,
    readonly options: ConsumeOptions,
  ) {}

  hasFreeSlot(): boolean {
    return !this.stopped && this.inFlight.size < this.options.maxInFlight;
  }

  run(delivery: Delivery): void {
    const { job, deliveryCount, inProgress } = delivery;
    const running = Promise.resolve()
      .then(() => this.handler({ job, deliveryCount, inProgress }))
      .then(delivery.ack, delivery.fail)
      .finally(() => {
        this.inFlight.delete(running);
        this.transport.dispatch();
      });
    this.inFlight.add(running);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.transport.detach(this);
    await Promise.all([...this.inFlight]);
  }
}
