import {
  ANY,
  BACKWARDS,
  END,
  ErrorType,
  EventStoreDBClient,
  FORWARDS,
  NO_STREAM,
  START,
  StreamNotFoundError,
  WrongExpectedVersionError,
  excludeSystemEvents,
  jsonEvent,
  type AllStreamResolvedEvent,
  type AllStreamSubscription,
  type AppendExpectedRevision,
  type EventData,
  type JSONType,
  type ReadPosition,
  type ResolvedEvent,
  type RecordedEvent as EsdbRecordedEvent,
  type StreamingRead,
} from '@eventstore/db-client';
import {
  type AppendOptions,
  type AppendResult,
  type EventMetadata,
  idempotencyMetadata,
  chainMetadata,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
  isSelected,
  StoreUnavailableError,
  WrongExpectedRevisionError,
} from '../event-store.port.js';

/**
 * Positions are the event's commit position in the transaction file, as a number.
 * - Unique per event: appends over gRPC are implicit transactions whose events each carry their
 *   own log position as commit (= prepare) position, so (commit, commit) rebuilds the full
 *   Position when we resume. (Legacy explicit transactions, TCP-only, are not used here.)
 * - Safe as a number: it is a byte offset in the log; Number.MAX_SAFE_INTEGER bytes is 8 PiB,
 *   far beyond any single EventStoreDB database.
 */
function toPosition(commit: bigint): Position {
  return Number(commit);
}

function fromPosition(position: Position): ReadPosition {
  const value = BigInt(position);
  return { commit: value, prepare: value };
}

/** What we keep in EventStoreDB's metadata: ours plus its own correlation keys. */
interface StoredMetadata extends EventMetadata {
  schema_version: number;
  $correlationId?: string;
  $causationId?: string;
}

const READ_PAGE = 200;

/**
 * How long the server may stay silent: an append or a ping must finish, a read must deliver its
 * next event, a subscription must be confirmed within it. The client passes no deadline for
 * reads and subscriptions, and its appends wait for the connection without one, so a half-open
 * server would otherwise hang every command.
 */
export const DEFAULT_DEADLINE_MS = 10_000;

const PING_DEADLINE_MS = 5_000;

/** EventStoreDB refuses one append larger than its MaxAppendSize, 1 MiB by default. */
export const SERVER_MAX_APPEND_BYTES = 1024 * 1024;
/** What one append call carries at most: the server's limit less room for what it counts besides. */
export const APPEND_BUDGET_BYTES = 768 * 1024;
/** Per event, besides data, metadata and type: id, content type, protobuf framing. */
const EVENT_OVERHEAD_BYTES = 128;

/** Bytes an event takes in an append, as EventStoreDB counts it (JSON data and metadata). */
export function appendSize(event: EventData): number {
  const json = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));
  return json(event.data) + json(event.metadata) + Buffer.byteLength(event.type) + EVENT_OVERHEAD_BYTES;
}

/**
 * Consecutive runs of events, each under `budget` bytes (an event alone over it goes on its own:
 * the server then refuses it, which no split could avoid). Order is kept.
 */
export function appendBatches(events: EventData[], budget = APPEND_BUDGET_BYTES): EventData[][] {
  const batches: EventData[][] = [];
  let current: EventData[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = appendSize(event);
    if (current.length > 0 && bytes + size > budget) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

export interface EsdbEventStoreOptions {
  /** Our own deadline in milliseconds (see DEFAULT_DEADLINE_MS). */
  deadlineMs?: number;
  /** Bytes one append call carries at most (see APPEND_BUDGET_BYTES). */
  appendBudgetBytes?: number;
}

function silentServer(what: string, ms: number): StoreUnavailableError {
  return new StoreUnavailableError(`EventStoreDB did not answer ${what} within ${ms} ms`);
}

/** Rejects with StoreUnavailableError when `work` has not settled within `ms`. */
async function withinDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(silentServer(what, ms)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The events of a read, failing with StoreUnavailableError (and cancelling the call) when the
 * server sends nothing for `ms`: a long read that keeps delivering is never cut short.
 */
async function* whileAnswering<T>(read: StreamingRead<T>, ms: number, what: string): AsyncGenerator<T> {
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => {
      read.destroy(silentServer(what, ms));
      read.cancel().catch(() => undefined);
    }, ms);
  };
  arm();
  try {
    for await (const item of read) {
      clearTimeout(timer);
      yield item;
      arm();
    }
  } finally {
    clearTimeout(timer);
  }
}

export class EsdbEventStore implements EventStore {
  private readonly client: EventStoreDBClient;
  private readonly subscriptions = new Set<EventSubscription>();
  private readonly deadline: number;
  private readonly appendBudget: number;
  private closed = false;

  constructor(connectionString: string, options: EsdbEventStoreOptions = {}) {
    // A connection string the client refuses is a configuration error (loadConfig reports it
    // at start), never "store unavailable": let the client's own error through.
    this.client = EventStoreDBClient.connectionString(connectionString);
    this.deadline = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
    this.appendBudget = options.appendBudgetBytes ?? APPEND_BUDGET_BYTES;
  }

  async append(
    streamId: string,
    events: NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    if (events.length === 0) throw new Error('append needs at least one event');
    const now = new Date().toISOString();
    const payload = events.map((event) =>
      jsonEvent({
        type: event.type,
        data: (event.data ?? null) as JSONType,
        metadata: storedMetadata(event, now) as unknown as JSONType,
      }),
    );
    // Over one server write, the events go in consecutive appends, in order. The first carries
    // the caller's expectation; after it, an exact expectation chains each append to the
    // previous one, so nothing slips in between. Not atomic across appends: a failure midway
    // leaves the earlier ones written.
    let expected = toEsdbExpected(options.expectedRevision);
    let last: AppendResult | null = null;
    try {
      for (const batch of appendBatches(payload, this.appendBudget)) {
        const result = await withinDeadline(
          this.client.appendToStream(streamId, batch, { expectedRevision: expected, deadline: this.deadline }),
          this.deadline,
          `an append to ${streamId}`,
        );
        if (options.expectedRevision !== 'any') expected = result.nextExpectedRevision;
        last = {
          nextExpectedRevision: Number(result.nextExpectedRevision),
          position: result.position ? toPosition(result.position.commit) : -1,
        };
      }
      return last!;
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        const actual = error.actualVersion === NO_STREAM ? -1 : typeof error.actualVersion === 'bigint' ? Number(error.actualVersion) : null;
        throw new WrongExpectedRevisionError(streamId, options.expectedRevision, actual);
      }
      throw toStoreError(error);
    }
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const backwards = options.direction === 'backwards';
    const events: RecordedEvent[] = [];
    try {
      const read = this.client.readStream(streamId, {
        direction: backwards ? BACKWARDS : FORWARDS,
        fromRevision: options.fromRevision === undefined ? (backwards ? END : START) : BigInt(options.fromRevision),
        maxCount: options.maxCount ?? Number.MAX_SAFE_INTEGER,
        deadline: this.deadline,
      });
      for await (const resolved of whileAnswering(read, this.deadline, `a read of ${streamId}`)) {
        const event = fromResolved(resolved);
        if (event) events.push(event);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw toStoreError(error);
    }
    return events;
  }

  /** $all has no server-side filter on reads in this client: page and drop system events (and streams not selected) here. */
  async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    const result: RecordedEvent[] = [];
    let after = options.after ?? null;
    try {
      while (result.length < options.maxCount) {
        let seen = 0;
        const read = this.client.readAll({
          direction: FORWARDS,
          // fromPosition is inclusive for reads: start at `after` and drop it below.
          fromPosition: after === null ? START : fromPosition(after),
          maxCount: READ_PAGE,
          deadline: this.deadline,
        });
        for await (const resolved of whileAnswering(read, this.deadline, 'a read of $all')) {
          seen += 1;
          const event = fromResolved(resolved);
          if (!event || (after !== null && event.position <= after)) continue;
          after = event.position;
          if (isSystemEvent(event) || !isSelected(options.streams, event.streamId)) continue;
          result.push(event);
          if (result.length === options.maxCount) break;
        }
        if (seen < READ_PAGE) break;
      }
    } catch (error) {
      throw toStoreError(error);
    }
    return result;
  }

  subscribeToAll(options: { after?: Position | null }): EventSubscription {
    const after = options.after ?? null;
    // fromPosition is exclusive for subscriptions: the event at `after` is not delivered again.
    const inner = this.client.subscribeToAll({
      fromPosition: after === null ? START : fromPosition(after),
      filter: excludeSystemEvents(),
    });
    this.confirmWithin(inner, this.deadline);
    const subscriptions = this.subscriptions;
    const subscription: EventSubscription = {
      async close() {
        subscriptions.delete(subscription);
        await inner.unsubscribe();
      },
      async *[Symbol.asyncIterator]() {
        try {
          for await (const resolved of inner) {
            const event = fromResolved(resolved);
            if (event && !isSystemEvent(event) && (after === null || event.position > after)) yield event;
          }
        } catch (error) {
          throw toStoreError(error);
        } finally {
          await subscription.close();
        }
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  /** Newest user event's position: lag is measured against what subscribers can see. */
  async headPosition(): Promise<Position | null> {
    let before: ReadPosition = END;
    try {
      for (;;) {
        let seen = 0;
        let last: AllStreamResolvedEvent | null = null;
        const read = this.client.readAll({ direction: BACKWARDS, fromPosition: before, maxCount: READ_PAGE, deadline: this.deadline });
        for await (const resolved of whileAnswering(read as StreamingRead<AllStreamResolvedEvent>, this.deadline, 'a backward read of $all')) {
          seen += 1;
          last = resolved;
          const event = fromResolved(resolved);
          if (event && !isSystemEvent(event)) return event.position;
        }
        const lastPosition: ReadPosition | undefined = last?.event?.position;
        if (seen < READ_PAGE || !lastPosition) return null;
        // Backward reads start before this position, so the page boundary is not read twice.
        before = lastPosition;
      }
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /**
   * EventStoreDB cannot delete single events: it truncates a stream's prefix (`$tb` in the
   * stream's metadata; reads of the stream skip it at once, the disk space comes back at the
   * next scavenge, which operators schedule, see README). So this sets `$tb` past the longest
   * prefix up to `throughRevision` made only of `types`; an event of another type stops it
   * (kept, and so is everything after it, until a later call can pass it).
   */
  async removeEvents(streamId: string, options: { throughRevision: number; types: string[] }): Promise<{ removed: number }> {
    const types = new Set(options.types);
    try {
      const { metadata } = await this.client.getStreamMetadata(streamId, { deadline: this.deadline });
      const current = typeof metadata?.truncateBefore === 'number' ? metadata.truncateBefore : 0;
      let cut = current;
      const read = this.client.readStream(streamId, { direction: FORWARDS, fromRevision: BigInt(current), maxCount: options.throughRevision - current + 1, deadline: this.deadline });
      for await (const resolved of read) {
        const event = resolved.event;
        if (!event || Number(event.revision) > options.throughRevision || !types.has(event.type)) break;
        cut = Number(event.revision) + 1;
      }
      if (cut === current) return { removed: 0 };
      await this.client.setStreamMetadata(streamId, { ...(metadata ?? {}), truncateBefore: cut }, { deadline: this.deadline });
      return { removed: cut - current };
    } catch (error) {
      if (error instanceof StreamNotFoundError) return { removed: 0 };
      throw toStoreError(error);
    }
  }

  async ping(): Promise<void> {
    try {
      // Readiness answers within 5 s whatever the command deadline.
      const deadline = Math.min(this.deadline, PING_DEADLINE_MS);
      const read = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, deadline });
      for await (const _ of whileAnswering(read, deadline, 'a ping')) {
        break;
      }
    } catch (error) {
      const mapped = toStoreError(error);
      throw mapped instanceof StoreUnavailableError ? mapped : new StoreUnavailableError('EventStoreDB ping failed', { cause: error });
    }
  }

  /**
   * A subscription the server has not confirmed within `ms` fails with StoreUnavailableError, so
   * its consumer retries instead of waiting forever. Once confirmed, a quiet store sends nothing
   * for as long as nothing is appended; a connection that dies then is found by the client's
   * gRPC keep-alive (keepAliveInterval, keepAliveTimeout: 10 s each by default).
   */
  private confirmWithin(subscription: AllStreamSubscription, ms: number): void {
    const timer = setTimeout(() => {
      subscription.destroy(silentServer('a subscription to $all', ms));
      subscription.unsubscribe().catch(() => undefined);
    }, ms);
    const settle = () => clearTimeout(timer);
    subscription.once('confirmation', settle);
    subscription.once('close', settle);
    subscription.once('error', settle);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }
}

function toEsdbExpected(expected: ExpectedRevision): AppendExpectedRevision {
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'any') return ANY;
  return BigInt(expected);
}

function storedMetadata(event: NewEvent, now: string): StoredMetadata {
  const m = event.metadata;
  const stored: StoredMetadata = {
    actor: m?.actor ?? null,
    request_id: m?.request_id ?? null,
    correlation_id: m?.correlation_id ?? null,
    causation_id: m?.causation_id ?? null,
    occurred_at: m?.occurred_at ?? now,
    schema_version: event.schemaVersion ?? 1,
    ...idempotencyMetadata(m),
    ...chainMetadata(m),
  };
  if (stored.correlation_id) stored.$correlationId = stored.correlation_id;
  if (stored.causation_id) stored.$causationId = stored.causation_id;
  return stored;
}

function fromResolved(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | null {
  const event = resolved.event as EsdbRecordedEvent | undefined;
  if (!event) return null;
  const meta = parseMetadata(event.metadata);
  const commit = event.position?.commit ?? resolved.commitPosition;
  return {
    id: event.id,
    streamId: event.streamId,
    type: event.type,
    schemaVersion: meta.schema_version,
    data: event.isJson ? event.data : null,
    metadata: {
      actor: meta.actor,
      request_id: meta.request_id,
      correlation_id: meta.correlation_id,
      causation_id: meta.causation_id,
      occurred_at: meta.occurred_at,
      ...idempotencyMetadata(meta),
      ...chainMetadata(meta),
    },
    revision: Number(event.revision),
    // Servers before 22.6 do not return positions on stream reads: -1 means unknown there.
    position: commit === undefined ? -1 : toPosition(commit),
    recordedAt: event.created.toISOString(),
  };
}

function parseMetadata(raw: unknown): StoredMetadata {
  const value = (raw && typeof raw === 'object' && !(raw instanceof Uint8Array) ? raw : {}) as Partial<StoredMetadata>;
  return {
    actor: value.actor ?? null,
    request_id: value.request_id ?? null,
    correlation_id: value.correlation_id ?? null,
    causation_id: value.causation_id ?? null,
    occurred_at: value.occurred_at ?? new Date(0).toISOString(),
    schema_version: value.schema_version ?? 1,
    ...idempotencyMetadata(value),
    ...chainMetadata(value),
  };
}

function isSystemEvent(event: RecordedEvent): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

const UNAVAILABLE_TYPES = new Set<string>([
  ErrorType.UNAVAILABLE,
  ErrorType.DEADLINE_EXCEEDED,
  ErrorType.TIMEOUT,
  ErrorType.NOT_LEADER,
  ErrorType.CANCELLED,
]);

/** gRPC status 14 (UNAVAILABLE) and 4 (DEADLINE_EXCEEDED) may also arrive unwrapped. */
function toStoreError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError || error instanceof WrongExpectedRevisionError) return error;
  const e = error as { type?: unknown; code?: unknown; message?: unknown } | null;
  const unavailable =
    (typeof e?.type === 'string' && UNAVAILABLE_TYPES.has(e.type)) ||
    e?.code === 14 ||
    e?.code === 4 ||
    (typeof e?.message === 'string' && /ECONNREFUSED|failed to connect|No connection established/i.test(e.message));
  return unavailable ? new StoreUnavailableError('EventStoreDB is unavailable', { cause: error }) : error;
}
