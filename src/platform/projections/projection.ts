import type { Position, RecordedEvent } from '../event-store/event-store.port.js';
import type { CollectionSpec, Doc, FindQuery, ReadStore } from '../read-store/read-store.port.js';

/**
 * What a projection handler sees of its views while a batch is applied: reads see the batch's
 * own earlier writes; nothing is visible to others until the runner commits the batch together
 * with the checkpoint.
 */
export interface ViewTransaction {
  get(collection: string, id: string): Promise<Doc | null>;
  /** Committed rows matching the query, overlaid with this batch's pending writes. */
  find(collection: string, query: FindQuery): Promise<Doc[]>;
  /**
   * Hands the document to the batch: it is frozen, not copied, so a handler builds a new object
   * for each put rather than changing one it has put (which throws).
   */
  put(collection: string, doc: Doc): void;
  delete(collection: string, id: string): void;
}

export type ProjectionHandler = (event: RecordedEvent<any>, views: ViewTransaction) => void | Promise<void>;

/**
 * A processor over the log, run by the ProcessorRunner (lease, subscription, live batching, and a
 * fenced checkpoint committed atomically with the handlers' document writes). Two kinds:
 *
 * - `projector` (the default): a view. One file per projection under `projections/`. Rebuilt
 *   from the whole log into a fresh generation when its version changes or an operator asks.
 * - `reactor`: reacts to events with effects (appends to other streams, delivery records) and
 *   keeps the state it needs in its collections. Never rebuilt: replaying history would repeat
 *   its effects. Its handlers' effects outside the read store must be idempotent, because a
 *   batch that fails part-way is handled again from the checkpoint; its document writes commit
 *   with the checkpoint, so they happen exactly once even when a paused process lost its lease.
 *
 * Collection names are logical; the runner maps them to physical collections of the active
 * generation (always generation 1 for a reactor).
 */
export interface Projection {
  /** Default `projector`. */
  kind?: 'projector' | 'reactor';
  /**
   * Reactors: where the first run starts. `end`: only events appended after the reactor first
   * ran (a notification channel does not receive history). Default `beginning`.
   */
  startFrom?: 'beginning' | 'end';
  /**
   * Reactors: state carried over from an earlier home, read once when the reactor has never run
   * (its checkpoint and documents, committed with its first pointer).
   */
  adopt?: (store: ReadStore) => Promise<AdoptedState | null>;
  /** `[a-z0-9_]+`, unique. */
  name: string;
  /** Bump when the handlers or the view shape change: the runner rebuilds on start. */
  version: number;
  collections: CollectionSpec[];
  /**
   * A handler that reads views at its event's position waits for them (`ReadYourWrites.waitFor`,
   * bounded) and, when they are not there yet, throws `ViewsBehindError`: the runner then handles
   * the batch again at once, logging at info that the processor waits and how far the views got,
   * where any other error is a failure (error, then a pause).
   */
  handlers: Record<string, ProjectionHandler>;
  /**
   * The documents the handlers will read by id for an event, as `[collection, id]`: the runner
   * reads those of a whole batch with one `getMany` per collection before the handlers run,
   * instead of a point read each (in SQLite each read outside a transaction begins one of its
   * own, most of its cost). A hint only: a document not named is read when asked for, and one
   * named but never asked for costs its share of the read and nothing else.
   */
  prefetch?: (event: RecordedEvent<any>) => Iterable<readonly [collection: string, id: string]>;
  /**
   * The runner keeps the documents this projection's handlers read by id, and what its batches
   * committed over a document known as stored, while it follows the projection live
   * (`KeptDocuments`), and answers later `get`s (and read-aheads) from them instead of the
   * store: a probed check's views read back on every check the documents they wrote on the
   * last one (alert status, analytics endpoint). A new document written and never read again
   * (a raw check row) is not kept; read later, it is read from the store once. Only for
   * projections whose collections nobody else writes, and whose handlers treat what `get`
   * returns as read-only (it is frozen, shared with later batches); a document the batch itself
   * put is then handed back as it is, not copied.
   */
  keepsDocuments?: boolean;
  /**
   * Per collection, the oldest stored version of this projection whose rows this code's readers
   * understand. After an upgrade that changes what readers rely on (a column renamed, rows of a
   * new kind), the old generation keeps the pointer until the rebuild swaps in, and reading
   * those rows would give wrong answers: `ViewReader` refuses them instead
   * (`ViewRebuildingError`, HTTP 503 `unavailable` with Retry-After). A collection not named
   * (and every collection after a bump that keeps the readers' fields, such as a new index) is
   * served from the old generation as before.
   */
  readableFrom?: Readonly<Record<string, number>>;
}

export function defineProjection(projection: Projection): Projection {
  return projection;
}

export interface AdoptedState {
  position: Position | null;
  docs: Array<{ collection: string; doc: Doc }>;
}

export function isReactor(projection: Projection): boolean {
  return projection.kind === 'reactor';
}

/**
 * A processor whose input is not the log but documents another processor wrote (the
 * notification delivery worker sends the delivery records of the notifications reactor), with
 * effects outside the service (sends). Every process that hosts it runs it; the runner hosts it
 * as it hosts projectors and reactors:
 * - its collections are generation 1 of its name (`p__<name>__g1__<collection>`, readable through
 *   the view reader like any view; never rebuilt);
 * - its checkpoint (a log position: how far its input is settled) is in the registry, moved by
 *   the holder of its lease `projection:<name>` and fenced on its previous value;
 * - the first process to hold that lease carries earlier state over (`adopt`) and writes its
 *   pointer; the others start once the pointer exists;
 * - it starts and stops with the runner, and shows in its status (lag: the log's head minus the
 *   checkpoint).
 */
export interface Worker {
  /** `[a-z0-9_]+`, unique among every processor. */
  name: string;
  collections: CollectionSpec[];
  /** State from an earlier home, carried over once, before the worker first runs: the checkpoint to start from. */
  adopt?: (host: WorkerHost) => Promise<Position | null>;
  start(host: WorkerHost): Promise<void>;
  /** Stops; may be called more than once. */
  stop(): Promise<void>;
}

export interface WorkerHost {
  /** Physical name of one of the worker's collections. */
  collection(name: string): string;
  /** The checkpoint as stored; null before the first move. */
  checkpoint(): Promise<Position | null>;
  /**
   * Moves the checkpoint from `from` to `to`, fenced on `from`: false when another process moved
   * it meanwhile. Only the lease holder moves it (`holds`).
   */
  moveCheckpoint(from: Position | null, to: Position): Promise<boolean>;
  /** Whether this process holds the worker's lease (kept by the process's lease keeper). */
  holds(): Promise<boolean>;
  /** Called after each batch any processor of this process applied. */
  onApplied(listener: () => void): () => void;
}
