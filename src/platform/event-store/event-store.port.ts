/**
 * The event store port: the one source of truth. Every adapter (SQLite, EventStoreDB) passes
 * the same contract suite in test/contract/event-store.contract.ts.
 */

/** Global, strictly increasing position of an event in the whole log ($all). */
export type Position = number;

/**
 * What the appender believes about the stream: it must not exist yet, anything goes,
 * or its last event has exactly this revision (0-based).
 */
export type ExpectedRevision = 'no_stream' | 'any' | number;

export interface EventMetadata {
  /** Who caused it: `token:<id>`, `admin`, `system:<component>`. */
  actor: string | null;
  request_id: string | null;
  correlation_id: string | null;
  causation_id: string | null;
  /** RFC 3339 UTC with milliseconds; when the fact happened (may predate the append, e.g. imports). */
  occurred_at: string;
  /** The request's Idempotency-Key (scoped), when it carried one: its retry finds what it did. */
  idempotency_key?: string;
  /** Which of the keyed request's commands on this stream appended the event (0 for the first). */
  idempotency_step?: number;
  /** This event's link in its stream's hash chain (src/platform/event-store/chain.ts; stamped by the chained store). */
  hash?: string;
  /** Stored only where the previous revision's hash cannot be read: a stream's anchor (docs/audit.md). */
  prev_hash?: string;
}

/** The metadata of an idempotent request's events, kept only when present (most events have none). */
export function idempotencyMetadata(input: Partial<EventMetadata> | undefined): Pick<EventMetadata, 'idempotency_key' | 'idempotency_step'> {
  return input?.idempotency_key === undefined ? {} : { idempotency_key: input.idempotency_key, idempotency_step: input.idempotency_step ?? 0 };
}

/** The hash-chain fields of an event's metadata, kept only when present (events before chaining have none). */
export function chainMetadata(input: Partial<EventMetadata> | undefined): Pick<EventMetadata, 'hash' | 'prev_hash'> {
  const out: Pick<EventMetadata, 'hash' | 'prev_hash'> = {};
  if (input?.prev_hash !== undefined) out.prev_hash = input.prev_hash;
  if (input?.hash !== undefined) out.hash = input.hash;
  return out;
}

export interface NewEvent<T = unknown> {
  type: string;
  /** Schema version of `data`; 1 when omitted. Upcasters lift old versions on read. */
  schemaVersion?: number;
  data: T;
  metadata?: Partial<EventMetadata>;
  /**
   * The data is a flat record of a type appended very often (a probed check): an adapter may
   * store its values apart from its key list, which it keeps once. Reads return the same data.
   */
  packed?: boolean;
  /**
   * Keys of a packed record whose values seldom change within its stream (a check's team,
   * project and configuration version): an adapter may keep their values once per stream and
   * leave them out of each event that repeats them. Reads return the same data.
   */
  streamConstants?: readonly string[];
  /**
   * `metadata.hash` was computed by the chained store (src/platform/event-store/chain.ts): 64
   * lowercase hex digits, or the first 16 of them, so an adapter may store it as its 32 or 8
   * bytes without checking its form.
   */
  chainHashed?: boolean;
}

/**
 * A NewEvent built as a literal of every member (`satisfies EveryNewEventMember`). The append path
 * builds events that way rather than spreading one and adding members (V8's slow path, issue
 * 31): a member later added to NewEvent then fails to compile where a literal leaves it out,
 * instead of being dropped on the way to the store.
 */
export type EveryNewEventMember = { [K in keyof Required<NewEvent>]: NewEvent[K] };

export interface RecordedEvent<T = unknown> {
  /** Unique event id (UUID). */
  id: string;
  streamId: string;
  type: string;
  schemaVersion: number;
  data: T;
  metadata: EventMetadata;
  /** 0-based revision within its stream. */
  revision: number;
  position: Position;
  /** RFC 3339 time the store recorded it. */
  recordedAt: string;
}

export interface AppendResult {
  /** Revision of the last appended event: pass it as the next expected revision. */
  nextExpectedRevision: number;
  /** Global position of the last appended event: what read-your-writes waits for. */
  position: Position;
}

export interface ReadStreamOptions {
  direction?: 'forwards' | 'backwards';
  /** Inclusive start revision; defaults to the first (forwards) or last (backwards). */
  fromRevision?: number;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Exclusive: events strictly after this position. null/undefined: from the beginning. */
  after?: Position | null;
  maxCount: number;
  /**
   * Only the events of these streams, or of every stream but these (an audit export's, which
   * reads one team's streams out of a log of many). A page still holds `maxCount` events unless it
   * reaches the log's end. An adapter that can filters before it decodes (SQLite: in the query).
   */
  streams?: StreamSelection;
}

export type StreamSelection = { only: ReadonlySet<string> } | { except: ReadonlySet<string> };

/** Whether a read with `selection` gives the events of `streamId` (every stream's without one). */
export function isSelected(selection: StreamSelection | undefined, streamId: string): boolean {
  if (selection === undefined) return true;
  return 'only' in selection ? selection.only.has(streamId) : !selection.except.has(streamId);
}

/** Catch-up then live; iterate with `for await`. `close()` ends the iteration. */
export interface EventSubscription extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

export interface AppendOptions {
  expectedRevision: ExpectedRevision;
  /**
   * The append may wait for others to share one commit with (a probed check, one of hundreds
   * whose answers arrive in the same turn of the event loop): an adapter that batches commits
   * holds it until the end of the turn, then writes it with the others so marked in one
   * transaction. It still resolves only once committed. Without it the append is written at
   * once: a command's next command on the same stream waits for it, so a hot stream would be
   * held to one append per turn of the loop. Adapters that do not batch ignore it.
   */
  groupCommit?: boolean;
}

export interface EventStore {
  append(streamId: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /** Events of one stream; an empty array when the stream does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  /** A page of the global log in position order, user events only. */
  readAll(options: ReadAllOptions): Promise<RecordedEvent[]>;
  /** Every event after `after` (exclusive), then every new one as it is appended. */
  subscribeToAll(options: { after?: Position | null }): EventSubscription;
  /** Position of the newest event, null on an empty store. For lag and read-your-writes. */
  headPosition(): Promise<Position | null>;
  /**
   * Retention: removes the events of `types` at revisions <= `throughRevision` of one stream, once
   * the log holds what replaces them (the caller's summary events). Events of other types stay.
   * The stream keeps its revisions: the next append still expects the last revision ever written.
   * Adapters that can only cut a stream's prefix (EventStoreDB `$tb`) remove the longest prefix
   * made only of such events and keep the rest for a later call; callers must therefore
   * tolerate covered events that are still there (see docs/architecture.md, Retention).
   * Returns how many events no longer read back.
   */
  removeEvents(streamId: string, options: { throughRevision: number; types: string[] }): Promise<{ removed: number }>;
  /** Optional: gives the space freed by removals back to the file system (SQLite incremental vacuum). */
  reclaimSpace?(): Promise<void>;
  /** Throws when the store cannot be reached (readiness probe). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export class WrongExpectedRevisionError extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    /** Actual last revision, or -1 when the stream does not exist; null when the adapter cannot tell. */
    readonly actual: number | null,
  ) {
    super(`Stream ${streamId}: expected revision ${String(expected)}, actual ${actual === null ? 'unknown' : actual}`);
    this.name = 'WrongExpectedRevisionError';
  }
}

/** The backing store is unreachable; the HTTP layer answers 503. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
