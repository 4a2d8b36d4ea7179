/**
 * The read store port: documents (views) that projections write and queries read.
 * Adapters: SQLite, MongoDB. Contract suite: test/contract/read-store.contract.ts.
 */

export type Scalar = string | number | boolean | null;

/** A view document. `id` is the primary key within its collection. */
export interface Doc {
  id: string;
  [field: string]: unknown;
}

export interface IndexSpec {
  /** Top-level fields, in index order. */
  fields: string[];
  unique?: boolean;
  /**
   * Documents whose first field is null (or missing) are left out of the index (SQLite: a partial
   * index `WHERE <first field> IS NOT NULL`), so they cost it nothing; a filter of that field on a
   * value still finds every document that has one. MongoDB indexes every document.
   */
  sparse?: boolean;
}

export interface CollectionSpec {
  /** Physical name: `[a-z0-9_]+`. */
  name: string;
  /** Every field used in a filter or sort should be covered by one of these. */
  indexes: IndexSpec[];
  /**
   * Optional: fields every document of the collection has (or leaves null), with their types.
   * A hint for compact storage: an adapter may keep them as typed columns instead of inside a
   * JSON document (SQLite does; MongoDB stores BSON either way). Documents read back the same
   * (a declared field a document lacks stays missing). `timestamp` is an RFC 3339 string in
   * documents and filters, in the form `new Date(ms).toISOString()`; `boolean` true/false;
   * `integer` a safe integer. `id: 'integer'` declares ids that are decimal integer strings
   * (`String(n)`); they stay strings in documents, filters and sorts. Every adapter refuses a
   * commit with a document whose declared field holds another type. Declared at creation: an
   * existing collection keeps its layout (bump the projection's version to change it).
   */
  columns?: Record<string, ColumnType>;
  /**
   * Optional, with `columns` declaring `id: 'integer'` and this field `integer`: every document's
   * id is the decimal string of this field (`id === String(doc[idField])`), as a check's id is its
   * `check_id`. A hint for compact storage: an adapter may keep the two once (SQLite keeps the
   * field as the table's integer key, and sorts and compares it as the integer it is); documents
   * read back with both. Every adapter refuses a commit with a document whose id is not that
   * string. Declared at creation, like `columns`.
   */
  idField?: string;
}

export type ColumnType = 'integer' | 'real' | 'text' | 'boolean' | 'timestamp';

export interface FieldCondition {
  eq?: Scalar;
  ne?: Scalar;
  in?: Scalar[];
  gt?: Scalar;
  gte?: Scalar;
  lt?: Scalar;
  lte?: Scalar;
  /** The field is an array that contains this value. */
  has?: Scalar;
}

/** All conditions must hold. A bare scalar means `eq`; `eq: null` matches null or missing. */
export type Filter = Record<string, Scalar | FieldCondition>;

export type SortDirection = 'asc' | 'desc';

export interface FindQuery {
  filter?: Filter;
  /** Sort fields; the last should be unique (usually `id` or a numeric id field) for stable keysets. */
  sort?: Array<[field: string, direction: SortDirection]>;
  /** Keyset: values of the sort fields of the last row already seen; rows strictly after it. */
  after?: Scalar[];
  limit?: number;
  /**
   * Only these top-level fields of each document (and its `id`), each as `find` would return it
   * (a field the document lacks stays missing). For reads of many rows that need few fields (a
   * p95 sample): an adapter can then skip the rest of each row (SQLite reads typed columns only).
   */
  fields?: string[];
}

export interface AggregateQuery {
  filter?: Filter;
  /** Optional top-level field to group by; one result row per distinct value. */
  groupBy?: string;
  sum?: string[];
  min?: string[];
  max?: string[];
}

/**
 * Many aggregates in one read: the documents whose `field` lies in each half-open range
 * [`gte`, `lt`) (compared as a filter's `gte`/`lt` would), summed per range. For reads that need
 * the sums of thousands of small key ranges (analytics sums every endpoint's rollup rows of a
 * window): one statement for many ranges instead of one per range.
 */
export interface RangesAggregateQuery {
  /** `id` or an indexed field: each range is one index range. */
  field: string;
  /**
   * `filter` of a range (optional): only the documents matching it count in that range, besides
   * the query's `filter`, on fields neither `field` nor the query's filter names. For ranges of
   * one index each narrowed by a key range of its own (a project's sub-minute edges, each within
   * its minute's check ids): one read, not one per range. Not with `prefixes`.
   */
  ranges: Array<{ gte: Scalar; lt: Scalar; filter?: Filter }>;
  /**
   * Optional: owners of the ranges, by key prefix. With it, every range's bounds are strings
   * and suffixes: prefix `p` owns the ranges [`p + gte`, `p + lt`), and the answer is one row
   * per prefix, in the prefixes' order, `group` being the prefix's index: the sums of what
   * `aggregate` gives for each of its ranges (count and sums added, the least minimum, the
   * greatest maximum; a document in two of its ranges counts twice). For reads of the same few
   * ranges under thousands of owners (a project's endpoints over one window): the caller sends
   * and receives one row per owner, not one per range.
   */
  prefixes?: string[];
  /**
   * Optional: only the documents matching it count in any range (a filter on other fields than
   * `field`). For many small ranges of one scope (a team's sub-minute edges: its index's scope
   * and outcome, then the ranges of checked_at_ms): one read instead of an `aggregate` per range.
   */
  filter?: Filter;
  sum?: string[];
  min?: string[];
  max?: string[];
}

/** `count` is the number of matching documents; `sum.x` is 0 and `min.x`/`max.x` null when no document has x. */
export interface AggregateRow {
  group: Scalar;
  count: number;
  sum: Record<string, number>;
  min: Record<string, number | null>;
  max: Record<string, number | null>;
}

export type ViewWrite =
  | { op: 'put'; collection: string; doc: Doc }
  | { op: 'delete'; collection: string; id: string };

/**
 * A condition a commit checks inside its transaction: the document's `field` equals `value`
 * (a missing document or field counts as null). Fences a writer that may have lost its lease.
 */
export interface CommitPrecondition {
  collection: string;
  id: string;
  field: string;
  value: Scalar;
}

export interface CommitOptions {
  /** When any fails, nothing is written and commit throws PreconditionFailedError. */
  expect?: CommitPrecondition[];
}

export class PreconditionFailedError extends Error {
  constructor(readonly precondition: CommitPrecondition, readonly actual: unknown) {
    super(`Commit refused: ${precondition.collection}/${precondition.id}.${precondition.field} is ${JSON.stringify(actual ?? null)}, expected ${JSON.stringify(precondition.value)}`);
    this.name = 'PreconditionFailedError';
  }
}

/** What a cache needs to know about a collection since it last looked (see `ReadStore.stamps`). */
export interface CollectionStamps {
  /** Differs after any write to the collection, and after its creation or drop. */
  changed: number;
  /** Differs after a document was replaced or deleted, or the collection created or dropped; inserts of new ids leave it. */
  rewritten: number;
}

export interface ReadStore {
  /** Creates the collection and its indexes if missing (idempotent). */
  ensureCollection(spec: CollectionSpec): Promise<void>;
  dropCollection(name: string): Promise<void>;
  listCollections(): Promise<string[]>;
  get(collection: string, id: string): Promise<Doc | null>;
  getMany(collection: string, ids: string[]): Promise<Doc[]>;
  find(collection: string, query: FindQuery): Promise<Doc[]>;
  /** Optional: the ids `find` would return, in its order, without reading the documents. */
  findIds?(collection: string, query: FindQuery): Promise<string[]>;
  count(collection: string, filter?: Filter): Promise<number>;
  aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]>;
  /**
   * One row per range, in the ranges' order, `group` being the range's index; each row equals
   * `aggregate` with the filter `{ [field]: { gte, lt } }` (count 0 and empty sums for a range
   * that holds nothing, or a missing collection). Ranges may overlap. With `prefixes`, one row
   * per prefix instead (see RangesAggregateQuery). A store answering
   * synchronously (SQLite) reads them all in one call: callers that keep the event loop free
   * pass a few hundred ranges at a time.
   */
  aggregateRanges(collection: string, query: RangesAggregateQuery): Promise<AggregateRow[]>;
  /** All writes (across collections) become visible together or not at all. */
  commit(writes: ViewWrite[], options?: CommitOptions): Promise<void>;
  /**
   * Optional: the collection's stamps, as of now, for writes made through any process sharing the
   * store; cheap enough to validate a cache on every request. Adapters without it: do not cache.
   * Calls passing the same `scope` object may share one look at other processes' commits, taken
   * after the first of them (the SQLite adapter shares it with every scope that asks in the same
   * turn of the event loop, taking it in the next check phase): pass an object created when the
   * work began (one per HTTP request), and none after a write the work waited for (its reads
   * must look again).
   */
  stamps?(collection: string, scope?: object): Promise<CollectionStamps>;
  /**
   * Optional: gives the space freed by deletions and dropped collections back to the file system
   * (SQLite incremental vacuum). MongoDB reuses freed space itself (`compact` is an operator task).
   */
  reclaimSpace?(): Promise<void>;
  /**
   * Optional: this store for reads too long to hold the event loop. The same data and writes;
   * document reads (get, getMany, find, findIds, count, aggregate, aggregateRanges) run off the
   * event loop where the store answers synchronously (a SQLite file: a connection on a worker
   * thread). Closed with this store. Stores without it already answer asynchronously (MongoDB).
   */
  offThread?(): ReadStore;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The ids `find` would return, in its order: read without the documents where the store can. */
export async function findIds(store: ReadStore, collection: string, query: FindQuery): Promise<string[]> {
  if (store.findIds) return store.findIds(collection, query);
  return (await store.find(collection, query)).map((doc) => doc.id);
}
