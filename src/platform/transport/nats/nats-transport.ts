/**
 * Probe transport over NATS JetStream: a work-queue stream and one durable pull consumer that
 * every prober process binds to, so processes compete for jobs and a job a dead worker held is
 * redelivered after `ackWaitMs`. Jobs are published with `msgID = jobId`, so a job re-published
 * inside the stream's duplicate window is stored once.
 */
import {
  AckPolicy,
  DeliverPolicy,
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
} from 'nats';
import { StoreUnavailableError } from '../../event-store/event-store.port.js';
import { assertConsumeOptions } from '../consume-options.js';
import type {
  ConsumeOptions,
  JobConsumer,
  JobHandler,
  ProbeJob,
  ProbeTransport,
} from '../probe-transport.port.js';

export interface NatsTransportOptions {
  url: string;
  /** Defaults: stream PROBES, subject probes.jobs, durable consumer probers. */
  stream?: string;
  subject?: string;
  durable?: string;
  /** How long one pull waits for jobs before asking again (NATS minimum 1000). */
  pullExpiresMs?: number;
  /** Re-publishing a job id inside this window is a no-op. */
  duplicateWindowMs?: number;
}

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

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly js: JetStreamClient,
    private readonly names: { stream: string; subject: string; durable: string },
    private readonly pullExpiresMs: number,
  ) {}

  /** Connects (NATS_URL may list a cluster's servers, comma-separated) and makes sure the stream exists; the durable consumer is made by consume(). */
  static async connect(options: NatsTransportOptions): Promise<NatsTransport> {
    const names = {
      stream: options.stream ?? 'PROBES',
      subject: options.subject ?? 'probes.jobs',
      durable: options.durable ?? 'probers',
    };
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
      await ensureStream(jsm, names.stream, names.subject, options.duplicateWindowMs ?? 120_000);
      return new NatsTransport(nc, jsm, nc.jetstream(), names, Math.max(1000, options.pullExpiresMs ?? 5000));
    } catch (error) {
      await nc.close();
      throw unavailable(error, `cannot set up stream ${names.stream}`);
    }
  }

  async publish(job: ProbeJob): Promise<void> {
    try {
      await this.js.publish(this.names.subject, encode(job), { msgID: job.jobId });
    } catch (error) {
      throw unavailable(error, `cannot publish job ${job.jobId}`);
    }
  }

  async consume(handler: JobHandler, options: ConsumeOptions): Promise<JobConsumer> {
    assertConsumeOptions(options);
    let consumer: Consumer;
    try {
      await ensureDurable(this.jsm, this.names.stream, this.names.durable, options.ackWaitMs);
      consumer = await this.js.consumers.get(this.names.stream, this.names.durable);
    } catch (error) {
      throw unavailable(error, `cannot bind to consumer ${this.names.durable}`);
    }
    const jobConsumer = new NatsJobConsumer(consumer, handler, options, this.pullExpiresMs, () =>
      this.consumers.delete(jobConsumer),
    );
    this.consumers.add(jobConsumer);
    jobConsumer.start();
    return jobConsumer;
  }

  /** Work-queue retention removes a job on ack, so the stream's message count is the backlog. */
  async pending(): Promise<number> {
    try {
      return (await this.jsm.streams.info(this.names.stream)).state.messages;
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

  /** Stops the consumers (waiting for their handlers), flushes their acks, then closes the connection. */
  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    await flushAtMost(this.nc, CLOSE_FLUSH_MS);
    await this.nc.close();
  }
}

/** While the server is unreachable a flush would wait for the reconnect; a lost ack means one redelivery. */
async function flushAtMost(nc: NatsConnection, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  await Promise.race([nc.flush().catch(() => undefined), deadline]);
  clearTimeout(timer);
}

async function ensureStream(jsm: JetStreamManager, stream: string, subject: string, duplicateWindowMs: number) {
  try {
    await jsm.streams.info(stream);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await jsm.streams.add({
      name: stream,
      subjects: [subject],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: nanos(duplicateWindowMs),
    });
  }
}

/**
 * The durable is shared by every prober process. max_ack_pending is left at the server default:
 * it counts across all processes, so the per-process `maxInFlight` is enforced by pulling at
 * most that many jobs at a time. The latest consume() sets ack_wait.
 */
async function ensureDurable(jsm: JetStreamManager, stream: string, durable: string, ackWaitMs: number) {
  const ackWait = nanos(ackWaitMs);
  try {
    const info = await jsm.consumers.info(stream, durable);
    if (info.config.ack_wait !== ackWait) await jsm.consumers.update(stream, durable, { ack_wait: ackWait });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: ackWait,
      deliver_policy: DeliverPolicy.All,
    });
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof NatsError && error.api_error?.code === 404;
}

class NatsJobConsumer implements JobConsumer {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly slotFreed = new Set<() => void>();
  private batch: ConsumerMessages | null = null;
  private loop: Promise<void> = Promise.resolve();
  private stopping = false;

  constructor(
    private readonly consumer: Consumer,
    private readonly handler: JobHandler,
    private readonly options: ConsumeOptions,
    private readonly pullExpiresMs: number,
    private readonly onStopped: () => void,
  ) {}

  start(): void {
    this.loop = this.pullLoop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.batch?.stop();
    this.wake();
    await this.loop;
    await Promise.all([...this.inFlight]);
    this.onStopped();
  }

  /** Pulls only as many jobs as there are free slots, so this process never holds more than maxInFlight. */
  private async pullLoop(): Promise<void> {
    while (!this.stopping) {
      await this.freeSlot();
      if (this.stopping) return;
      try {
        this.batch = await this.consumer.fetch({
          max_messages: this.options.maxInFlight - this.inFlight.size,
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
    const delivery = { job, deliveryCount: msg.info.redeliveryCount, inProgress: () => msg.working() };
    const running = Promise.resolve()
      .then(() => this.handler(delivery))
      .then(
        () => this.ack(msg),
        () => msg.nak(this.options.ackWaitMs),
      )
      .finally(() => {
        this.inFlight.delete(running);
        this.wake();
      });
    this.inFlight.add(running);
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

  private freeSlot(): Promise<void> {
    if (this.stopping || this.inFlight.size < this.options.maxInFlight) return Promise.resolve();
    return new Promise((resolve) => this.slotFreed.add(resolve));
  }

  private wake(): void {
    for (const resolve of this.slotFreed) resolve();
    this.slotFreed.clear();
  }
}

function encode(job: ProbeJob): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(job));
}

function decode(msg: JsMsg): ProbeJob | null {
  try {
    const job = JSON.parse(new TextDecoder().decode(msg.data)) as ProbeJob;
    return typeof job?.jobId === 'string' ? job : null;
  } catch {
    return null;
  }
}

/** `nats://n1:4222,nats://n2:4222` as the client wants it: one entry per server. */
export function natsServers(url: string): string[] {
  return url.split(',').map((server) => server.trim()).filter((server) => server !== '');
}
