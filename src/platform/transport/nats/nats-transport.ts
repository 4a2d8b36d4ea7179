/**
 * Probe transport over NATS JetStream: a work-queue stream and one durable pull consumer that
 * every prober process binds to, so processes compete for jobs and a job a dead worker held is
 * redelivered after `ackWaitMs`. Jobs are published with `msgID = jobId`, so a job re-published
 * inside the stream's duplicate window is stored once.
 *
 * Bounded (see the port): scheduled jobs go to a subject per endpoint (`<subject>.<endpointId>`)
 * and the stream keeps one message per subject (`max_msgs_per_subject: 1`, discard old), so a
 * new slot replaces the waiting one; manual jobs get a subject each. Stale jobs are dropped by
 * the consumer, their age measured on the server's clock (see ServerClock).
 *
 * Regions: jobs for a region go to a second work-queue stream (`<stream>_REGIONS`, subjects
 * `<subject>-region.<region>.<endpointId>`, same bound), where each region has its own durable
 * consumer (`<durable>-<region>`, filtered on its region's subjects). Separate streams because a
 * work-queue stream allows no filtered consumer beside the unfiltered `<durable>` (NATS 2.9), and
 * that durable keeps the subjects earlier versions used. A prober consumes from both: the jobs
 * without a region, and its region's. Its PROBER_MAX_IN_FLIGHT is shared by the two: each pull
 * asks for the slots free across both, so two pulls in flight at once may exceed it by one batch.
 */
import { performance } from 'node:perf_hooks';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  ErrorCode,
  NatsError,
  RetentionPolicy,
  StorageType,
  connect,
  nanos,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  type StreamConfig,
} from 'nats';
import { StoreUnavailableError } from '../../event-store/event-store.port.js';
import { AckedPublisher } from './acked-publisher.js';
import { DEFAULT_REGION } from '../../config/region.js';
import { assertConsumeOptions, assertQueueLimits } from '../consume-options.js';
import {
  DEFAULT_QUEUE_LIMITS,
  type ConsumeOptions,
  type DropReason,
  type JobConsumer,
  type JobDelivery,
  type JobHandler,
  type ProbeJob,
  type ProbeTransport,
  type QueueLimits,
} from '../probe-transport.port.js';

export interface NatsTransportOptions extends Partial<QueueLimits> {
  url: string;
  /** Defaults: stream PROBES, subjects probes.jobs.>, durable consumer probers. */
  stream?: string;
  /** Prefix of the job subjects; the stream takes `<subject>.>`. */
  subject?: string;
  durable?: string;
  /** How long one pull waits for jobs before asking again (NATS minimum 1000). */
  pullExpiresMs?: number;
  /** Re-publishing a job id inside this window is a no-op. */
  duplicateWindowMs?: number;
  /** PROBE_REGION: consume() takes the jobs without a region and this region's (default `local`). */
  region?: string;
  /** Stream replicas (NATS_STREAM_REPLICAS): 1 on a single server, 3 in a cluster. */
  replicas?: number;
  /**
   * The consumer's `max_ack_pending` (NATS_MAX_ACK_PENDING): jobs handed out and not yet
   * acknowledged, across every prober process. It caps the probers' combined PROBER_MAX_IN_FLIGHT.
   */
  maxAckPending?: number;
}

export const DEFAULT_NATS_SETTINGS = { replicas: 1, maxAckPending: 10_000 };

const CLOSE_FLUSH_MS = 2000;

const UNAVAILABLE_CODES = new Set<string>([
  ErrorCode.ConnectionClosed,
  ErrorCode.ConnectionDraining,
  ErrorCode.ConnectionRefused,
  ErrorCode.ConnectionTimeout,
  ErrorCode.Disconnect,
  ErrorCode.NoResponders,
  ErrorCode.Timeout,
]);

/** Connection trouble becomes StoreUnavailableError (callers answer 503); anything else is a bug. */
function unavailable(error: unknown, what: string): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const connectionError =
    (error instanceof NatsError && UNAVAILABLE_CODES.has(error.code)) ||
    ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT'].includes((error as { code?: string })?.code ?? '');
  return connectionError ? new StoreUnavailableError(`NATS unavailable: ${what}`, { cause: error }) : error;
}

export class NatsTransport implements ProbeTransport {
  private readonly consumers = new Set<NatsJobConsumer>();
  private readonly publisher: AckedPublisher;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly js: JetStreamClient,
    private readonly names: TransportNames,
    private readonly pullExpiresMs: number,
    private readonly consumerLimits: { maxDeliver: number; maxAckPending: number },
  ) {
    this.publisher = new AckedPublisher(nc);
  }

  /**
   * Connects (NATS_URL may list a cluster's servers, comma-separated) and makes sure the stream
   * exists with this version's settings, updating one an earlier version (or other settings)
   * created; the durable consumer is made by consume().
   */
  static async connect(options: NatsTransportOptions): Promise<NatsTransport> {
    const names = transportNames(options);
    const limits = {
      maxDeliver: options.maxDeliver ?? DEFAULT_QUEUE_LIMITS.maxDeliver,
      maxAckPending: options.maxAckPending ?? DEFAULT_NATS_SETTINGS.maxAckPending,
    };
    const replicas = options.replicas ?? DEFAULT_NATS_SETTINGS.replicas;
    assertQueueLimits(limits);
    for (const [name, value] of [['replicas', replicas], ['maxAckPending', limits.maxAckPending]] as const) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer, got ${value}`);
    }
    let nc: NatsConnection;
    try {
      // noAsyncTraces: no stack captured per request (a quarter of the client's CPU per job);
      // errors reach callers wrapped with the operation that failed (see unavailable()).
      nc = await connect({ servers: natsServers(options.url), name: 'probe-transport', maxReconnectAttempts: -1, noAsyncTraces: true });
    } catch (error) {
      throw unavailable(error, `cannot connect to ${options.url}`);
    }
    try {
      const jsm = await nc.jetstreamManager();
      const settings = {
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        max_msgs_per_subject: 1,
        discard: DiscardPolicy.Old,
        num_replicas: replicas,
        duplicate_window: nanos(options.duplicateWindowMs ?? 120_000),
      };
      await ensureStream(jsm, { name: names.stream, subjects: [`${names.subject}.>`], ...settings }, names.subject);
      await ensureStream(jsm, { name: names.regionalStream, subjects: [`${names.regionalSubject}.>`], ...settings }, names.regionalSubject);
      return new NatsTransport(nc, jsm, nc.jetstream(), names, Math.max(1000, options.pullExpiresMs ?? 5000), limits);
    } catch (error) {
      await nc.close();
      throw unavailable(error, `cannot set up stream ${names.stream}`);
    }
  }

  /** Resolves once the stream stored the job (see AckedPublisher: no request per job). */
  publish(job: ProbeJob): Promise<void> {
    const prefix = job.region === undefined ? this.names.subject : `${this.names.regionalSubject}.${job.region}`;
    const what = `cannot publish job ${job.jobId}`;
    try {
      return this.publisher.publish(jobSubject(prefix, job), encode(job), job.jobId, what);
    } catch (error) {
      return Promise.reject(unavailable(error, what));
    }
  }

  /** Binds to the shared durable (jobs without a region) and to this region's durable; they share the slots. */
  async consume(handler: JobHandler, options: ConsumeOptions): Promise<JobConsumer> {
    assertConsumeOptions(options);
    const slots = new SlotPool(options.maxInFlight);
    const shared = await this.consumeFrom(this.names.stream, this.names.durable, undefined, handler, options, slots);
    let regional: NatsJobConsumer;
    try {
      regional = await this.consumeFrom(this.names.regionalStream, this.names.regionalDurable, `${this.names.regionalSubject}.${this.names.region}.>`, handler, options, slots);
    } catch (error) {
      await shared.stop();
      throw error;
    }
    return { stop: async () => void (await Promise.all([shared.stop(), regional.stop()])) };
  }

  private async consumeFrom(stream: string, durable: string, filter: string | undefined, handler: JobHandler, options: ConsumeOptions, slots: SlotPool): Promise<NatsJobConsumer> {
    let consumer: Consumer;
    try {
      await ensureDurable(
        this.jsm,
        stream,
        durable,
        { ack_wait: nanos(options.ackWaitMs), max_deliver: this.consumerLimits.maxDeliver, max_ack_pending: this.consumerLimits.maxAckPending },
        filter,
      );
      consumer = await this.js.consumers.get(stream, durable);
    } catch (error) {
      throw unavailable(error, `cannot bind to consumer ${durable}`);
    }
    const clock = new ServerClock(async () => {
      const { state } = await this.jsm.streams.info(stream);
      return state.last_seq > 0 ? Date.parse(state.last_ts) : null;
    });
    const jobConsumer = new NatsJobConsumer(consumer, handler, options, this.consumerLimits.maxDeliver, clock, this.pullExpiresMs, slots, () =>
      this.consumers.delete(jobConsumer),
    );
    this.consumers.add(jobConsumer);
    jobConsumer.start();
    return jobConsumer;
  }

  /** Work-queue retention removes a job on ack, so the streams' message count is the backlog (every region's). */
  async pending(): Promise<number> {
    try {
      const [shared, regional] = await Promise.all([this.jsm.streams.info(this.names.stream), this.jsm.streams.info(this.names.regionalStream)]);
      return shared.state.messages + regional.state.messages;
    } catch (error) {
      throw unavailable(error, 'cannot read stream state');
    }
  }

  async ping(): Promise<void> {
    try {
      await this.jsm.streams.info(this.names.stream);
    } catch (error) {
      throw unavailable(error, 'ping failed');
    }
  }

  /**
   * Stops the consumers (waiting for their handlers), flushes their acks, then closes the
   * connection. The consumers are stopped whatever the connection's state: on a connection
   * closed underneath, their pull loops would otherwise retry (and keep the process alive) for ever.
   */
  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    if (!this.nc.isClosed()) await flushAtMost(this.nc, CLOSE_FLUSH_MS);
    this.publisher.close();
    if (!this.nc.isClosed()) await this.nc.close();
  }
}

/** While the server is unreachable a flush would wait for the reconnect; a lost ack means one redelivery. */
async function flushAtMost(nc: NatsConnection, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([nc.flush().catch(() => undefined), deadline]);
  clearTimeout(timer);
}

interface TransportNames {
  stream: string;
  subject: string;
  durable: string;
  region: string;
  regionalStream: string;
  regionalSubject: string;
  regionalDurable: string;
}

/** Defaults: stream PROBES (and PROBES_REGIONS), subjects probes.jobs.> (and probes.jobs-region.>), durable probers (and probers-<region>). */
export function transportNames(options: Pick<NatsTransportOptions, 'stream' | 'subject' | 'durable' | 'region'>): TransportNames {
  const stream = options.stream ?? 'PROBES';
  const subject = options.subject ?? 'probes.jobs';
  const durable = options.durable ?? 'probers';
  const region = options.region ?? DEFAULT_REGION;
  return { stream, subject, durable, region, regionalStream: `${stream}_REGIONS`, regionalSubject: `${subject}-region`, regionalDurable: `${durable}-${region}` };
}

/** `<prefix>.<endpointId>` for scheduled jobs (one kept per endpoint), `<prefix>.manual.<id>` for manual ones. */
export function jobSubject(prefix: string, job: ProbeJob): string {
  if (job.source === 'scheduled') return `${prefix}.${job.endpointId}`;
  return `${prefix}.manual.${Buffer.from(job.jobId).toString('base64url')}`;
}

type StreamSettings = Pick<
  StreamConfig,
  'name' | 'subjects' | 'retention' | 'storage' | 'max_msgs_per_subject' | 'discard' | 'num_replicas' | 'duplicate_window'
>;

/**
 * Creates the stream, or brings an existing one to these settings (streams.update). A stream of
 * an earlier version took every job on the bare `subject` with no per-endpoint limit: that
 * backlog is purged (missed slots; the scheduler publishes the next ones) before the update.
 */
async function ensureStream(jsm: JetStreamManager, wanted: StreamSettings, legacySubject: string) {
  let current: StreamConfig;
  try {
    current = (await jsm.streams.info(wanted.name)).config;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await jsm.streams.add(wanted);
    return;
  }
  if (current.retention !== wanted.retention) {
    throw new Error(`stream ${wanted.name} has retention ${current.retention}, not ${wanted.retention}: delete it (it holds only probe jobs) and start again`);
  }
  if (current.subjects.includes(legacySubject)) await jsm.streams.purge(wanted.name, { filter: legacySubject });
  const differs =
    current.subjects.join(',') !== wanted.subjects.join(',') ||
    current.max_msgs_per_subject !== wanted.max_msgs_per_subject ||
    current.discard !== wanted.discard ||
    current.num_replicas !== wanted.num_replicas ||
    current.duplicate_window !== wanted.duplicate_window;
  if (differs) await jsm.streams.update(wanted.name, { ...current, ...wanted });
}

type DurableSettings = { ack_wait: number; max_deliver: number; max_ack_pending: number };

/**
 * The durable is shared by every prober process. max_ack_pending counts across all of them; the
 * per-process `maxInFlight` is enforced by pulling at most that many jobs at a time. The latest
 * consume() sets ack_wait, max_deliver and max_ack_pending.
 */
async function ensureDurable(jsm: JetStreamManager, stream: string, durable: string, wanted: DurableSettings, filterSubject?: string) {
  try {
    const { config } = await jsm.consumers.info(stream, durable);
    const differs = (Object.keys(wanted) as (keyof DurableSettings)[]).some((key) => config[key] !== wanted[key]);
    if (differs) await jsm.consumers.update(stream, durable, wanted);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ...(filterSubject === undefined ? {} : { filter_subject: filterSubject }),
      ...wanted,
    });
  }
}

/**
 * The NATS server's clock as this process can know it without comparing clocks: the newest
 * message timestamp the server reported (a message delivered, or the stream's last message),
 * advanced by this process's monotonic clock since. It never runs ahead of the server's clock
 * (beyond the two clocks' rate difference), so a job's age is never over-estimated: a job is
 * dropped as stale only when it really is. Without a scheduler publishing it lags, and stale
 * jobs may be probed once.
 */
export class ServerClock {
  private anchor: { serverMs: number; localMs: number } | null = null;
  private lastRead = -Infinity;

  constructor(
    private readonly readLastMessageTime: () => Promise<number | null>,
    private readonly readEveryMs = 1000,
  ) {}

  now(): number | null {
    return this.anchor && this.anchor.serverMs + (performance.now() - this.anchor.localMs);
  }

  observe(serverMs: number): void {
    const now = this.now();
    if (now === null || serverMs > now) this.anchor = { serverMs, localMs: performance.now() };
  }

  /** Reads the stream's last message time, at most once per `readEveryMs`; failures are left to the pull. */
  async refresh(): Promise<void> {
    if (performance.now() - this.lastRead < this.readEveryMs) return;
    this.lastRead = performance.now();
    const last = await this.readLastMessageTime().catch(() => null);
    if (last !== null && Number.isFinite(last)) this.observe(last);
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof NatsError && error.api_error?.code === 404;
}

/** A prober's PROBER_MAX_IN_FLIGHT, shared by its consumers (the jobs without a region, its region's). */
class SlotPool {
  running = 0;
  private readonly waiting = new Set<() => void>();

  constructor(readonly max: number) {}

  free(): number {
    return Math.max(0, this.max - this.running);
  }

  /** Resolves once a slot is free (or `stopped` says so). */
  whenFree(stopped: () => boolean): Promise<void> {
    if (stopped() || this.running < this.max) return Promise.resolve();
    return new Promise((resolve) => this.waiting.add(resolve));
  }

  wake(): void {
    for (const resolve of this.waiting) resolve();
    this.waiting.clear();
  }
}

class NatsJobConsumer implements JobConsumer {
  /** The jobs being handled, by their message. */
  private readonly inFlight = new Map<JsMsg, Promise<void>>();
  private batch: ConsumerMessages | null = null;
  private loop: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly consumer: Consumer,
    private readonly handler: JobHandler,
    private readonly options: ConsumeOptions,
    private readonly maxDeliver: number,
    private readonly clock: ServerClock,
    private readonly pullExpiresMs: number,
    private readonly slots: SlotPool,
    private readonly onStopped: () => void,
  ) {}

  start(): void {
    this.loop = this.pullLoop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.batch?.stop();
    this.slots.wake();
    await this.loop;
    await Promise.all([...this.inFlight.values()]);
    this.onStopped();
  }

  /** Pulls only as many jobs as there are free slots (see SlotPool). */
  private async pullLoop(): Promise<void> {
    while (!this.stopping) {
      await this.slots.whenFree(() => this.stopping);
      if (this.stopping) return;
      try {
        await this.clock.refresh();
        this.batch = await this.consumer.fetch({
          max_messages: Math.max(1, this.slots.free()),
          expires: this.pullExpiresMs,
        });
        for await (const msg of this.batch) {
          if (this.stopping) msg.nak();
          else this.run(msg);
        }
      } catch {
        // Disconnects and missed heartbeats end the pull; the client reconnects, so pull again.
        if (!this.stopping) await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        this.batch = null;
      }
    }
  }

  private run(msg: JsMsg): void {
    const job = decode(msg);
    if (!job) {
      msg.term(); // a payload that is not a job would be redelivered forever
      return;
    }
    // nats.js parses the reply subject once and keeps it (`info`).
    const { redeliveryCount: deliveryCount, timestampNanos } = msg.info;
    // Nanoseconds beyond 2^53: precise to a microsecond, plenty for milliseconds.
    const storedAtMs = timestampNanos / 1e6;
    this.clock.observe(storedAtMs);
    if (job.maxAgeMs !== undefined && this.clock.now()! - storedAtMs > job.maxAgeMs) {
      this.drop(msg, job, 'stale');
      return;
    }
    this.inFlight.set(msg, this.handle(msg, { job, deliveryCount, inProgress: () => msg.working() }));
    this.slots.running++;
  }

  /**
   * The job's handler, then its ack (or nak, or drop past maxDeliver); the slot freed. One async
   * function: a chain of then/then/finally on a resolved promise was four promises a job.
   */
  private async handle(msg: JsMsg, delivery: JobDelivery): Promise<void> {
    try {
      // The handler runs as a task of its own, a microtask after the delivery was taken.
      await undefined;
      let handled = true;
      try {
        await this.handler(delivery);
      } catch {
        handled = false;
      }
      if (handled) this.ack(msg);
      else if (delivery.deliveryCount >= this.maxDeliver) this.drop(msg, delivery.job, 'max_deliver');
      else msg.nak(this.options.ackWaitMs);
    } finally {
      this.inFlight.delete(msg);
      this.slots.running--;
      this.slots.wake();
    }
  }

  /**
   * A plain ack, not ackAck: waiting for the server's confirmation held a probing slot for a
   * round trip and cost a request per job (about 40% of the client's CPU per job), and its
   * answer changed nothing. A lost ack means one redelivery, which the check recorder drops by
   * job id; close() flushes so that acks written before it reach the server.
   */
  private ack(msg: JsMsg): void {
    msg.ack();
  }

  /** term() removes the message from the work queue without redelivery. */
  private drop(msg: JsMsg, job: ProbeJob, reason: DropReason): void {
    msg.term();
    this.options.onDropped?.(job, reason);
  }

}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function encode(job: ProbeJob): Uint8Array {
  return encoder.encode(JSON.stringify(job));
}

function decode(msg: JsMsg): ProbeJob | null {
  try {
    const job = JSON.parse(decoder.decode(msg.data)) as ProbeJob;
    return typeof job?.jobId === 'string' ? job : null;
  } catch {
    return null;
  }
}

/** `nats://n1:4222,nats://n2:4222` as the client wants it: one entry per server. */
export function natsServers(url: string): string[] {
  return url.split(',').map((server) => server.trim()).filter((server) => server !== '');
}
