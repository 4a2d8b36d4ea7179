/**
 * JetStream publishing with the stream's acknowledgement awaited, on one reply subscription for
 * every publish of the connection.
 *
 * Why not `JetStreamClient.publish`: it is a request per job, and the client's request costs a
 * timer, a deferred and, once answered, a `Cancelled` error with its stack trace (thrown away:
 * nats.js rejects the settled deferred on the way out). At saturation that error alone was a
 * tenth of the transport's CPU per job. Here a publish is a `PUB` with a reply subject under this
 * publisher's inbox, a map entry, and one JSON parse of the ack; one sweep every second fails the
 * publishes whose ack is overdue (the client's default deadline, 5 s).
 */
import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from 'nats';
import { StoreUnavailableError } from '../../event-store/event-store.port.js';

/** How long a publish waits for its acknowledgement (nats.js JetStream's default). */
export const PUBLISH_ACK_TIMEOUT_MS = 5000;
const SWEEP_MS = 1000;

interface PendingAck {
  resolve(): void;
  reject(error: Error): void;
  deadline: number;
  what: string;
}

/** The PubAck's JSON: `{stream, seq, duplicate?}` or `{error: {code, description}}`. */
interface PubAck {
  stream?: string;
  error?: { code?: number; description?: string };
}

/** A stream refused the message (not a connection problem: the caller's bug or the stream's settings). */
export class PublishRefusedError extends Error {}

export class AckedPublisher {
  private readonly inbox: string;
  private readonly subscription: Subscription;
  private readonly pending = new Map<string, PendingAck>();
  private next = 0;
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs = PUBLISH_ACK_TIMEOUT_MS,
  ) {
    this.inbox = createInbox();
    this.subscription = nc.subscribe(`${this.inbox}.*`, { callback: (error, msg) => error === null && this.settle(msg) });
  }

  /**
   * Publishes `data` to `subject`, stored once per `msgId` inside the stream's duplicate window;
   * the promise resolves once the stream has stored it. No responders (no stream takes the
   * subject) and an overdue ack reject with StoreUnavailableError, a refusal with
   * PublishRefusedError; the client's own errors (a closed connection) are thrown at once.
   */
  publish(subject: string, data: Uint8Array, msgId: string, what: string): Promise<void> {
    const token = String(this.next++);
    const hdrs = headers();
    hdrs.set('Nats-Msg-Id', msgId);
    this.nc.publish(subject, data, { reply: `${this.inbox}.${token}`, headers: hdrs });
    // The sweep runs in the loop's check phase, after its I/O poll: timers run before sockets
    // are read, so a sweep in the timers phase after a long task failed acks already received.
    this.sweeper ??= setInterval(() => setImmediate(() => this.sweep()), SWEEP_MS).unref();
    return new Promise<void>((resolve, reject) => this.pending.set(token, { resolve, reject, deadline: Date.now() + this.timeoutMs, what }));
  }

  /** Fails the publishes still waiting (the connection is closing) and stops listening. */
  close(): void {
    this.subscription.unsubscribe();
    this.failAll((what) => new StoreUnavailableError(`NATS unavailable: ${what} (connection closed)`));
  }

  private settle(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    const waiting = this.pending.get(token);
    if (waiting === undefined) return; // overdue, already failed
    this.pending.delete(token);
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      waiting.reject(new StoreUnavailableError(`NATS unavailable: ${waiting.what} (no stream for the subject)`));
      return;
    }
    let ack: PubAck;
    try {
      ack = msg.json<PubAck>();
    } catch {
      waiting.reject(new PublishRefusedError(`${waiting.what}: the acknowledgement is not JSON`));
      return;
    }
    if (ack.error !== undefined || !ack.stream) {
      waiting.reject(new PublishRefusedError(`${waiting.what}: ${ack.error?.description ?? 'no stream in the acknowledgement'} (${ack.error?.code ?? '-'})`));
      return;
    }
    waiting.resolve();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [token, waiting] of this.pending) {
      if (waiting.deadline > now) continue;
      this.pending.delete(token);
      waiting.reject(new StoreUnavailableError(`NATS unavailable: ${waiting.what} (no acknowledgement within ${this.timeoutMs} ms)`));
    }
    this.stopSweepingWhenIdle();
  }

  private failAll(error: (what: string) => Error): void {
    const waiting = [...this.pending.values()];
    this.pending.clear();
    this.stopSweepingWhenIdle();
    for (const entry of waiting) entry.reject(error(entry.what));
  }

  /** The sweep runs while publishes wait (it stops at the first sweep that finds none). */
  private stopSweepingWhenIdle(): void {
    if (this.pending.size > 0 || this.sweeper === null) return;
    clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
