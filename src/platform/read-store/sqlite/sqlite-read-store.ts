/**
 * Read store on one SQLite file shared by several processes (WAL, busy timeout).
 * One table per collection, `c_<name>`, in one of two layouts (sqlite-layout.ts): the whole
 * document as JSONB (`id TEXT PRIMARY KEY, doc BLOB`), or, for collections that declare
 * `columns`, one typed column per declared field and the rest as JSONB. Declared indexes are
 * column indexes over typed columns and expression indexes on `json_extract(...)` otherwise.
 *
 * Stamps: every commit, creation and drop sets its collections' row in `view_stamps` to a new
 * number (one counter for the whole file, so a number is never reused). Reading them costs a
 * `PRAGMA data_version` (which moves when another connection commits) while nothing changed.
 * This connection's own commits do not make it read the table again: a commit that finds (under
 * its write lock) that no other connection committed since the stamps were last read applies
 * its own stamps to the copy in memory, which therefore stays exact. Scopes (HTTP requests)
 * that ask in the same turn of the event loop share one look, taken after all of them asked
 * (see `stamps`).
 */
import Database from 'better-sqlite3';
import {
  PreconditionFailedError,
  type AggregateQuery,
  type AggregateRow,
  type CollectionSpec,
  type ColumnType,
  type CommitOptions,
  type CommitPrecondition,
  type CollectionStamps,
  type Doc,
  type Filter,
  type FindQuery,
  type IndexSpec,
  type RangesAggregateQuery,
  type ReadStore,
  type Scalar,
  type ViewWrite,
} from '../read-store.port.js';
import {
  assertCollectionName,
  assertColumns,
  assertDeclaredTypes,
  assertDocId,
  assertPrefixedRanges,
  emptyAggregateRow,
  pickFields,
  prefixedRanges,
  rowsPerPrefix,
  sortAggregateRows,
  UnknownCollectionError,
  rangeFilter,
} from '../read-store-rules.js';
import { and, filterClause, groupExprs, groupValue, numericExpr, planFind, type SqlFragment, type SqlParam } from './sqlite-query.js';
import { CollectionLayout, type FieldRef } from './sqlite-layout.js';
import { boundWal, type WalKeeper } from '../../sqlite-wal.js';
import { SqliteThread } from '../../sqlite-thread.js';
import { freePagesInSlices } from '../../sqlite-vacuum.js';

const TABLE_PREFIX = 'c_';
const STATEMENT_CACHE_SIZE = 256;
/** Arms of one `aggregateRanges` statement: under SQLite's limit of 500 per compound SELECT. */
const RANGE_ARMS = 256;
/** Not `c_`-prefixed, so never listed as a collection. */
const STAMPS_TABLE = 'view_stamps';
const NO_STAMPS: CollectionStamps = { changed: 0, rewritten: 0 };
/** `PRAGMA auto_vacuum` of a file whose freed pages can leave with `incremental_vacuum`. */
const INCREMENTAL_AUTO_VACUUM = 2;
/** How long collection creations must have stopped before the WAL they wrote is truncated. */
const SCHEMA_BURST_QUIET_MS = 1000;
/** A file without auto_vacuum is converted once this much of it is free (see reclaimSpace). */
const CONVERT_MIN_FREE_BYTES = 1024 * 1024;
const CONVERT_MIN_FREE_FRACTION = 0.1;

export interface SqliteReadStoreOptions {
  /** Milliseconds a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number;
  /** Upper bound of this connection's page cache, filled as pages are read. */
  cacheSizeMb?: number;
}

/**
 * SQLite's default page cache is 2 MB. Analytics over 90 days reads the same rollup and edge
 * pages on every request; with the default they came back from the OS each time and the query
 * slowed as the file grew (team analytics p50 at 1M checks: 64 ms with 2 MB, 54 ms with 128 MB,
 * where 100k checks take 51 ms).
 */
const DEFAULT_CACHE_SIZE_MB = 128;

const tableNames = new Map<string, string>();

function tableName(collection: string): string {
  let table = tableNames.get(collection);
  if (table === undefined) {
    assertCollectionName(collection);
    table = `"${TABLE_PREFIX}${collection}"`;
    tableNames.set(collection, table);
  }
  return table;
}

/**
 * An index's column expressions. A trailing id field (`CollectionSpec.idField`, read as the rowid)
 * is left out of a non-unique index: SQLite ends every entry of a rowid table's index with the
 * rowid, orders entries by it and uses it for ORDER BY, so the entry would hold it twice.
 */
function indexColumns(layout: CollectionLayout, index: IndexSpec): string[] {
  const fields = [...index.fields];
  if (!index.unique && fields.length > 1 && fields[fields.length - 1] === layout.idField) fields.pop();
  return fields.map((field) => layout.field(field).expr);
}

function indexName(collection: string, index: IndexSpec): string {
  return `"ix_${collection}__${index.fields.join('__')}${index.unique ? '__u' : ''}${index.sparse ? '__s' : ''}"`;
}

/** By message, not `instanceof`: better-sqlite3's error class can come from another realm (jest workers). */
function isMissingTable(error: unknown): boolean {
  return /no such table/.test(String((error as { message?: unknown })?.message ?? ''));
}

/** A statement built for another layout than the table now has. */
function isStaleLayout(error: unknown): boolean {
  return /no such column|has no column named/.test(String((error as { message?: unknown })?.message ?? ''));
}

/** Re-raises an error from another realm as a local Error, keeping its message, code and cause. */
function asLocalError(error: unknown): Error {
  if (error instanceof Error) return error;
  const foreign = error as { message?: unknown; code?: unknown };
  return Object.assign(new Error(String(foreign?.message ?? error), { cause: error }), { code: foreign?.code });
}

/** One JSON.parse over the joined texts: faster than one per document. */
function parseDocs(texts: string[]): Doc[] {
  if (texts.length === 0) return [];
  return texts.length === 1 ? [JSON.parse(texts[0]) as Doc] : (JSON.parse(`[${texts.join(',')}]`) as Doc[]);
}

/** Rows selected with `layout.selectList()` as documents. */
function toDocs(layout: CollectionLayout, rows: unknown[]): Doc[] {
  return layout.typed ? rows.map((row) => layout.toDoc(row)) : parseDocs(rows as string[]);
}

type StatementMode = 'rows' | 'pluck' | 'raw';

/** A prepared statement, and the number of the statement run that last used it. */
interface CachedStatement {
  stmt: Database.Statement;
  used: number;
}

/** One statement of a read: `all()` in `mode`, its rows sent back into the read. */
interface Step {
  sql: string;
  params: SqlParam[];
  mode: StatementMode;
}

/** A read's statements, yielded one at a time, and its answer (see ReadPlan). */
type Read<T> = Generator<Step, T, unknown[]>;

export class SqliteReadStore implements ReadStore {
  private readonly db: Database.Database;
  private readonly walKeeper: WalKeeper | null;
  /**
   * Prepared statements by mode, then SQL: the SQL text, often a constant, is the key as it is.
   * Each notes when it was last used; the least recently used of all goes once the cache holds
   * STATEMENT_CACHE_SIZE. A hit only writes its number: moving the entry to the end of its map
   * (a delete and a set per statement run) cost about 1 % of the process at saturation.
   */
  private readonly statements: Record<StatementMode, Map<string, CachedStatement>> = { rows: new Map(), pluck: new Map(), raw: new Map() };
  private statementCount = 0;
  private statementUses = 0;
  private readonly dataVersion: Database.Statement;
  /** Commits, creations and drops through this connection (data_version only counts other connections'). */
  private localChanges = 0;
  /**
   * When `stampsByCollection` was read: `data_version` then and this connection's changes then. It
   * is exact while neither moved; a local change that found data_version unmoved keeps it exact
   * (see `stamp`) and moves `localChanges` here with it.
   */
  private stampsSeen: { dataVersion: number; localChanges: number } = { dataVersion: -1, localChanges: -1 };
  /** Scopes whose look at other connections' commits has been taken (see `stamps`). */
  private readonly lookedScopes = new WeakSet<object>();
  /** The look that scopes asking now will share, taken at the event loop's next check phase. */
  private nextSharedLook: Promise<void> | null = null;
  private stampsByCollection = new Map<string, CollectionStamps>();
  /** The greatest `changed` in `stampsByCollection` (the file's counter, while the copy is exact). */
  private maxChanged = 0;
  /**
   * Set by `stamp` inside a transaction, applied to the copy in memory once it committed: the new
   * stamps, or 'stale' when the copy was not exact (it is read again); null: nothing stamped.
   */
  private pendingStamps: { next: number; collections: string[]; rewritten: Set<string> } | 'stale' | null = null;
  /**
   * Per table: whether its last put replaced a document (then the next one tries UPDATE first) or
   * inserted one (INSERT first). A view's puts are mostly one or the other (the check list
   * inserts, rollups and checkpoints replace), so most puts cost one statement, not two. A table
   * with indexed typed columns tries `updateKept` before the whole UPDATE (see `WriteSql`).
   */
  private readonly putsReplace = new Map<string, boolean>();
  /**
   * Layouts of existing collections. A collection keeps its layout for its whole life (a new
   * generation is a new name); a statement that finds the table changed under it (dropped, or
   * recreated by another process) drops the entry and looks again (`now`). Checking
   * `PRAGMA schema_version` instead cost as much as a point read.
   */
  private readonly layouts = new Map<string, CollectionLayout>();
  /** Set while a burst of collection creations is followed by a WAL truncation (see ensureCollection). */
  private schemaCheckpoint: NodeJS.Timeout | null = null;
  private readonly busyTimeoutMs: number;
  private readonly commitTransaction: Database.Transaction<(collections: string[], prepared: PreparedWrite[], expect: CommitPrecondition[]) => void>;

  /** Built by the first `offThread()`, closed with this store. */
  private offThreadReads: OffThreadReads | null = null;
  private readonly cacheSizeMb: number;

  constructor(private readonly file: string, options: SqliteReadStoreOptions = {}) {
    this.db = new Database(file);
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    this.cacheSizeMb = options.cacheSizeMb ?? DEFAULT_CACHE_SIZE_MB;
    this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.walKeeper = boundWal(this.db, { offThread: true });
    this.db.pragma(`cache_size = ${-1024 * this.cacheSizeMb}`);
    this.db.exec(`CREATE TABLE IF NOT EXISTS ${STAMPS_TABLE} (collection TEXT PRIMARY KEY, changed INTEGER NOT NULL, rewritten INTEGER NOT NULL)`);
    this.dataVersion = this.db.prepare('PRAGMA data_version').pluck();
    // Made once: better-sqlite3 builds a transaction's wrappers on every `db.transaction` call.
    this.commitTransaction = this.db.transaction(this.applyCommit.bind(this));
  }

  /**
   * A collection keeps the layout it was created with: declaring columns on an existing JSON
   * collection changes nothing (a projection that wants them bumps its version, which creates a
   * new collection).
   */
  async ensureCollection(spec: CollectionSpec): Promise<void> {
    const table = tableName(spec.name);
    assertColumns(spec.columns, spec.idField);
    const probe = CollectionLayout.json();
    for (const index of spec.indexes) index.fields.forEach((field) => probe.field(field));
    let created = false;
    this.pendingStamps = null;
    this.db
      .transaction(() => {
        if (!this.tableExists(spec.name)) {
          const typed = spec.columns && Object.keys(spec.columns).length > 0;
          this.db.exec(typed ? CollectionLayout.createTypedSql(table, spec.columns!, spec.idField) : `CREATE TABLE ${table} (id TEXT PRIMARY KEY, doc BLOB NOT NULL)`);
          this.stamp([spec.name], new Set([spec.name]));
          created = true;
        }
        this.layouts.delete(spec.name);
        const layout = this.layout(spec.name)!;
        for (const index of spec.indexes) {
          const unique = index.unique ? 'UNIQUE ' : '';
          const columns = indexColumns(layout, index);
          // `x = ?` implies `x IS NOT NULL`, so the planner takes a sparse index for such filters.
          const where = index.sparse ? ` WHERE ${columns[0]} IS NOT NULL` : '';
          this.db.exec(`CREATE ${unique}INDEX IF NOT EXISTS ${indexName(spec.name, index)} ON ${table} (${columns.join(', ')})${where}`);
        }
        // Read again with its indexes, which say which columns an update may leave alone (`WriteSql.updateKept`).
        if (spec.indexes.length > 0) this.layouts.delete(spec.name);
      })
      .immediate();
    this.afterLocalChange();
    if (created) this.truncateWalAfterSchemaBurst();
  }

  /**
   * Collections are created in bursts (a new service declares about a hundred tables and indexes,
   * a rebuild a generation's), one transaction each, and every one rewrites the schema pages: a
   * new service's WAL held about 1 MB of them, kept on disk until 1,000 pages forced a checkpoint.
   * A second after a burst ends, the WAL is checkpointed and truncated. It never waits for other
   * connections' readers (busy timeout 0 for that statement): a busy file keeps its WAL until
   * the next burst or checkpoint, as before.
   */
  private truncateWalAfterSchemaBurst(): void {
    if (this.schemaCheckpoint) clearTimeout(this.schemaCheckpoint);
    this.schemaCheckpoint = setTimeout(() => {
      this.schemaCheckpoint = null;
      if (!this.db.open) return;
      this.db.pragma('busy_timeout = 0');
      try {
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        this.db.pragma(`busy_timeout = ${this.busyTimeoutMs}`);
      }
    }, SCHEMA_BURST_QUIET_MS);
    this.schemaCheckpoint.unref();
  }

  /** The collection's layout, or null when it does not exist. */
  private layout(collection: string): CollectionLayout | null {
    let layout = this.layouts.get(collection) ?? null;
    if (layout === null) {
      layout = this.layoutNow(collection);
      if (layout) this.layouts.set(collection, layout);
    }
    return layout;
  }

  /**
   * Runs a read on this connection, on this thread, with the collection's layout; a collection
   * that does not exist reads as `missing`. A layout found stale (the table was dropped or
   * recreated meanwhile) is looked up again once.
   */
  private now<T>(plan: ReadPlan<T>): T {
    for (let attempt = 0; ; attempt++) {
      const layout = this.layout(plan.collection);
      if (!layout) return plan.missing();
      try {
        const read = plan.body(layout, tableName(plan.collection));
        let next = read.next();
        while (!next.done) next = read.next(this.statement(next.value.sql, next.value.mode).all(...next.value.params));
        return next.value;
      } catch (error) {
        if (this.lookAgain(plan.collection, error, attempt) === 'missing') return plan.missing();
      }
    }
  }

  /** @internal `now`, each statement run by `thread`'s connection. */
  async later<T>(plan: ReadPlan<T>, thread: SqliteThread): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      const layout = this.layout(plan.collection);
      if (!layout) return plan.missing();
      try {
        const read = plan.body(layout, tableName(plan.collection));
        let next = read.next();
        while (!next.done) next = read.next(await thread.run<unknown[]>(next.value.sql, next.value.params, next.value.mode));
        return next.value;
      } catch (error) {
        if (this.lookAgain(plan.collection, error, attempt) === 'missing') return plan.missing();
      }
    }
  }

  /** After a read failed: rethrows unless the table is gone ('missing') or its layout was stale on a first attempt ('again'). */
  private lookAgain(collection: string, error: unknown, attempt: number): 'missing' | 'again' {
    if (!isMissingTable(error) && !(attempt === 0 && isStaleLayout(error))) throw error;
    this.layouts.delete(collection);
    return isMissingTable(error) ? 'missing' : 'again';
  }

  private layoutNow(collection: string): CollectionLayout | null {
    const table = tableName(collection);
    const rows = this.db.prepare(`PRAGMA table_xinfo(${table})`).all() as Array<{ name: string; type: string; hidden: number }>;
    const layout = CollectionLayout.fromTableInfo(rows);
    if (layout?.typed) {
      const indexed = new Set<string>();
      for (const { name } of this.db.prepare(`PRAGMA index_list(${table})`).all() as Array<{ name: string }>) {
        const quoted = `"${name.replace(/"/g, '""')}"`;
        for (const { name: column } of this.db.prepare(`PRAGMA index_info(${quoted})`).all() as Array<{ name: string | null }>) if (column !== null) indexed.add(column);
      }
      layout.indexedColumns = indexed;
    }
    return layout;
  }

  async dropCollection(name: string): Promise<void> {
    const table = tableName(name);
    this.pendingStamps = null;
    this.db
      .transaction(() => {
        this.db.exec(`DROP TABLE IF EXISTS ${table}`);
        this.layouts.delete(name);
        this.stamp([name], new Set([name]));
      })
      .immediate();
    this.afterLocalChange();
    this.clearStatements();
  }

  /**
   * Without a scope, a look now. A scope (one per HTTP request, made when it arrived) has one look
   * at other connections' commits for all its calls: its first call waits for the look that every
   * scope asking before the event loop's next check phase shares, taken in that phase, so after
   * each of them began (a request sees every commit acknowledged before it was sent), and a burst
   * of requests read in one poll phase pays for one `PRAGMA data_version` (a read transaction and
   * its `-shm` locks) instead of one each. Any later look only adds commits, and this connection's
   * own are applied to the copy exactly (or make the next call read the table again), so the
   * scope's later calls look no more.
   */
  async stamps(collection: string, scope?: object): Promise<CollectionStamps> {
    if (scope === undefined) this.refreshStamps();
    else {
      if (!this.lookedScopes.has(scope)) await this.lookTogether(scope);
      if (this.localChanges !== this.stampsSeen.localChanges) this.refreshStamps();
    }
    return this.stampsByCollection.get(collection) ?? NO_STAMPS;
  }

  private async lookTogether(scope: object): Promise<void> {
    this.nextSharedLook ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        this.nextSharedLook = null;
        try {
          this.refreshStamps();
          resolve();
        } catch (error) {
          reject(asLocalError(error));
        }
      }),
    );
    await this.nextSharedLook;
    this.lookedScopes.add(scope);
  }

  private refreshStamps(): void {
    const version = this.dataVersion.get() as number;
    if (version !== this.stampsSeen.dataVersion || this.localChanges !== this.stampsSeen.localChanges) {
      const rows = this.statement(`SELECT collection, changed, rewritten FROM ${STAMPS_TABLE}`).all() as Array<CollectionStamps & { collection: string }>;
      this.stampsByCollection = new Map(rows.map((row) => [row.collection, { changed: row.changed, rewritten: row.rewritten }]));
      this.maxChanged = rows.reduce((max, row) => Math.max(max, row.changed), 0);
    }
    this.stampsSeen = { dataVersion: version, localChanges: this.localChanges };
  }

  /**
   * After a transaction of this connection committed: counts the change, and applies its stamps
   * to the copy in memory when `stamp` found the copy exact; otherwise the next `stamps` call
   * reads the table again.
   */
  private afterLocalChange(): void {
    const pending = this.pendingStamps;
    this.pendingStamps = null;
    const exact = pending !== 'stale' && this.stampsSeen.localChanges === this.localChanges;
    this.localChanges++;
    if (!exact) return;
    if (pending !== null) {
      for (const collection of pending.collections) {
        const rewritten = pending.rewritten.has(collection) ? pending.next : (this.stampsByCollection.get(collection)?.rewritten ?? 0);
        this.stampsByCollection.set(collection, { changed: pending.next, rewritten });
      }
      this.maxChanged = pending.next;
    }
    this.stampsSeen = { dataVersion: this.stampsSeen.dataVersion, localChanges: this.localChanges };
  }

  async listCollections(): Promise<string[]> {
    const rows = this.statement(
      `SELECT substr(name, ${TABLE_PREFIX.length + 1}) AS name FROM sqlite_schema
       WHERE type = 'table' AND name LIKE '${TABLE_PREFIX}%' ORDER BY name`,
    ).all() as Array<{ name: string }>;
    return rows.map((r) => r.name);
  }

  async get(collection: string, id: string): Promise<Doc | null> {
    return this.now(this.getRead(collection, id));
  }

  private getNow(collection: string, id: string): Doc | null {
    return this.now(this.getRead(collection, id));
  }

  /**
   * @internal The reads, as plans whose bodies yield their statements and get the rows back: the
   * same read runs on this connection (`now`) or on a worker's (`offThread`, `later`).
   */
  getRead(collection: string, id: string): ReadPlan<Doc | null> {
    return { collection, missing: () => null, body: (layout, t) => getBody(layout, t, id) };
  }

  async getMany(collection: string, ids: string[]): Promise<Doc[]> {
    return this.now(this.getManyRead(collection, ids));
  }

  /** @internal */
  getManyRead(collection: string, ids: string[]): ReadPlan<Doc[]> {
    return { collection, missing: () => [], body: (layout, t) => getManyBody(layout, t, ids) };
  }

  async find(collection: string, query: FindQuery): Promise<Doc[]> {
    return this.now(this.findRead(collection, query));
  }

  /** @internal */
  findRead(collection: string, query: FindQuery): ReadPlan<Doc[]> {
    return { collection, missing: () => [], body: (layout, t) => findBody(layout, t, query) };
  }

  /** `find`, reading only the ids, for callers that keep the documents themselves. */
  async findIds(collection: string, query: FindQuery): Promise<string[]> {
    return this.now(this.findIdsRead(collection, query));
  }

  /** @internal */
  findIdsRead(collection: string, query: FindQuery): ReadPlan<string[]> {
    return { collection, missing: () => [], body: (layout, t) => findIdsBody(layout, t, query) };
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    return this.now(this.countRead(collection, filter));
  }

  /** @internal */
  countRead(collection: string, filter?: Filter): ReadPlan<number> {
    return { collection, missing: () => 0, body: (layout, t) => countBody(layout, t, filter) };
  }

  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    return this.now(this.aggregateRead(collection, query));
  }

  /** @internal */
  aggregateRead(collection: string, query: AggregateQuery): ReadPlan<AggregateRow[]> {
    const { sum = [], min = [], max = [] } = query;
    const missing = () => (query.groupBy === undefined ? [emptyAggregateRow(sum, min, max)] : []);
    return { collection, missing, body: (layout, t) => aggregateBody(layout, t, query, missing) };
  }

  /**
   * Ranges of ids with text bounds (rollup ids, say) are one statement: the ranges, passed as one
   * JSON array, joined to the primary key, each an index range (`id >= lo AND id < hi` is what
   * `aggregate`'s filter becomes for text bounds, ids being text). Other ranges, and any with a
   * `filter`, are compound SELECTs of a power of two arms (at most RANGE_ARMS; 96 ranges are 64
   * and 32), each the statement `aggregate` would run for one range with the filter, so a few
   * prepared statements serve every request size.
   */
  async aggregateRanges(collection: string, query: RangesAggregateQuery): Promise<AggregateRow[]> {
    return this.now(this.aggregateRangesRead(collection, query));
  }

  /** @internal */
  aggregateRangesRead(collection: string, query: RangesAggregateQuery): ReadPlan<AggregateRow[]> {
    const rows = new RangeRows(query);
    // A missing collection leaves every range empty.
    return { collection, missing: () => rows.filled(), body: (layout, t) => aggregateRangesBody(layout, t, query, rows) };
  }

  /**
   * A collection is known to exist when its layout is (read from the table's schema, kept while
   * statements find the table): one that does not is refused before the transaction starts. A
   * table dropped by another process since its layout was read fails its statement inside the
   * transaction (nothing is written); the commit then looks again, once, and is refused.
   */
  async commit(writes: ViewWrite[], options: CommitOptions = {}): Promise<void> {
    if (writes.length === 0) return;
    for (let attempt = 0; ; attempt++) {
      const layouts = new Map<string, CollectionLayout>();
      const prepared: PreparedWrite[] = new Array(writes.length);
      for (let i = 0; i < writes.length; i++) {
        const { collection } = writes[i];
        let layout = layouts.get(collection);
        if (layout === undefined) {
          const found = this.layout(collection);
          if (found === null) throw new UnknownCollectionError(collection);
          layouts.set(collection, (layout = found));
        }
        prepared[i] = prepareWrite(writes[i], layout);
      }
      this.pendingStamps = null;
      try {
        this.commitTransaction.immediate([...layouts.keys()], prepared, options.expect ?? []);
        this.afterLocalChange();
        return;
      } catch (error) {
        if (error instanceof PreconditionFailedError) throw error;
        // A table dropped, or recreated with another layout, by another process since its layout
        // was read: look again, once.
        if (attempt === 0 && (isStaleLayout(error) || isMissingTable(error))) {
          for (const collection of layouts.keys()) this.layouts.delete(collection);
          continue;
        }
        throw asLocalError(error);
      }
    }
  }

  private applyCommit(collections: string[], prepared: PreparedWrite[], expect: CommitPrecondition[]): void {
    for (const precondition of expect) this.check(precondition);
    const rewritten = new Set<string>();
    for (const w of prepared) {
      if (w.op === 'put') {
        if (this.putsReplace.get(w.table) === true) {
          if (this.replace(w)) rewritten.add(w.collection);
          else {
            this.statement(w.sql.insert).run(...w.values);
            this.putsReplace.set(w.table, false);
          }
        } else if (this.statement(w.sql.insert).run(...w.values).changes === 0) {
          this.replace(w);
          rewritten.add(w.collection);
          this.putsReplace.set(w.table, true);
        }
      } else if (w.id !== null && this.statement(`DELETE FROM ${w.table} WHERE id = ?`).run(w.id).changes > 0) {
        rewritten.add(w.collection);
      }
    }
    this.stamp(collections, rewritten);
  }

  /** Replaces the stored document with the id: false when there is none. */
  private replace(w: PreparedWrite & { op: 'put' }): boolean {
    const kept = w.sql.updateKept;
    if (kept !== null && this.statement(kept.sql).run(...kept.order.map((i) => w.values[i])).changes > 0) return true;
    return this.statement(w.sql.update).run(...w.values).changes > 0;
  }

  /** Inside the write transaction (IMMEDIATE), so no other process can change the answer before the commit. */
  private check(precondition: CommitPrecondition): void {
    const actual = this.getNow(precondition.collection, precondition.id)?.[precondition.field] ?? null;
    if (actual !== precondition.value) throw new PreconditionFailedError(precondition, actual);
  }

  /**
   * Gives each collection a new `changed` stamp, and the same new `rewritten` stamp to those in
   * `rewritten`. Inside the write transaction: when no other connection committed since the copy
   * in memory was exact (data_version unmoved, no local change left unapplied), the counter is
   * the copy's and the new stamps go into the copy once the transaction commits
   * (`afterLocalChange`); otherwise the counter is read from the table and the copy is read again
   * on the next `stamps` call.
   */
  private stamp(collections: string[], rewritten: Set<string>): void {
    const exact = this.stampsSeen.localChanges === this.localChanges && (this.dataVersion.get() as number) === this.stampsSeen.dataVersion;
    const next = exact
      ? this.maxChanged + 1
      : (this.statement(`SELECT coalesce(max(changed), 0) + 1 AS next FROM ${STAMPS_TABLE}`).get() as { next: number }).next;
    this.pendingStamps = exact ? { next, collections, rewritten } : 'stale';
    for (const collection of collections) {
      if (rewritten.has(collection)) {
        this.statement(
          `INSERT INTO ${STAMPS_TABLE} (collection, changed, rewritten) VALUES (@collection, @next, @next)
           ON CONFLICT (collection) DO UPDATE SET changed = excluded.changed, rewritten = excluded.rewritten`,
        ).run({ collection, next });
      } else {
        this.statement(
          `INSERT INTO ${STAMPS_TABLE} (collection, changed, rewritten) VALUES (@collection, @next, 0)
           ON CONFLICT (collection) DO UPDATE SET changed = excluded.changed`,
        ).run({ collection, next });
      }
    }
  }

  /**
   * Gives the pages that deletions and dropped collections freed back to the file system.
   *
   * The file is created with auto_vacuum = NONE: the pointer-map pages INCREMENTAL keeps made a
   * new service's views WAL exceed the idle bound (test/e2e/idle-writes.e2e.test.ts). So it is
   * converted the first time there is something worth giving back (after the first retention
   * pass that removed checks, never in a new service): one VACUUM, which rewrites the file once
   * and holds its write lock meanwhile. From then on freed pages leave in slices
   * (`freePagesInSlices`), each its own short transaction with the event loop free between
   * them, so requests and projection commits interleave.
   */
  async reclaimSpace(): Promise<void> {
    const pragma = (sql: string) => this.db.pragma(sql, { simple: true }) as number;
    if (pragma('auto_vacuum') !== INCREMENTAL_AUTO_VACUUM) {
      const free = pragma('freelist_count');
      if (free * pragma('page_size') >= CONVERT_MIN_FREE_BYTES && free >= pragma('page_count') * CONVERT_MIN_FREE_FRACTION) {
        this.db.pragma('auto_vacuum = INCREMENTAL');
        this.db.exec('VACUUM');
      }
    } else {
      await freePagesInSlices(this.db);
      if (!this.db.open) return;
    }
    // On the checkpoint thread, after its round: a second checkpoint while the round's is in
    // flight is refused at once (busy), and the WAL would keep its size until a later round.
    if (this.walKeeper) await this.walKeeper.truncate(this.busyTimeoutMs);
    else this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  /**
   * This store with its document reads on a worker thread: a read-only connection to the same
   * file (WAL: each statement sees what was committed when it started, this connection's commits
   * included), so a long read leaves the event loop free; the worker is made on the first call
   * and closed with this store. Writes, stamps and the collection calls stay here. An in-memory
   * database is one connection's own, so it answers itself.
   */
  offThread(): ReadStore {
    if (this.file === ':memory:' || this.file === '') return this;
    this.offThreadReads ??= new OffThreadReads(
      this,
      new SqliteThread(this.file, { readonly: true, pragmas: [`busy_timeout = ${this.busyTimeoutMs}`, `cache_size = ${-1024 * this.cacheSizeMb}`] }),
    );
    return this.offThreadReads;
  }

  async close(): Promise<void> {
    if (this.schemaCheckpoint) clearTimeout(this.schemaCheckpoint);
    await Promise.all([this.walKeeper?.close(), this.offThreadReads?.thread.close()]);
    this.clearStatements();
    if (this.db.open) this.db.close();
  }

  private tableExists(collection: string): boolean {
    return this.statement(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(`${TABLE_PREFIX}${collection}`) !== undefined;
  }

  private clearStatements(): void {
    for (const statements of Object.values(this.statements)) statements.clear();
    this.statementCount = 0;
  }

  /**
   * A cached prepared statement; `pluck` ones return the first column's value, `raw` ones an array
   * per row. Past STATEMENT_CACHE_SIZE statements in all, the least recently used of the fullest
   * mode's map goes.
   */
  private statement(sql: string, mode: StatementMode = 'rows'): Database.Statement {
    const statements = this.statements[mode];
    const cached = statements.get(sql);
    if (cached !== undefined) {
      cached.used = ++this.statementUses;
      return cached.stmt;
    }
    const stmt = this.db.prepare(sql);
    if (mode === 'pluck') stmt.pluck();
    else if (mode === 'raw') stmt.raw();
    if (this.statementCount >= STATEMENT_CACHE_SIZE) this.evictLeastRecentlyUsed();
    else this.statementCount++;
    statements.set(sql, { stmt, used: ++this.statementUses });
    return stmt;
  }

  /** A scan of the whole cache, made only when a statement not in it is prepared while it is full. */
  private evictLeastRecentlyUsed(): void {
    let oldest: { statements: Map<string, CachedStatement>; sql: string; used: number } | null = null;
    for (const statements of Object.values(this.statements)) {
      for (const [sql, cached] of statements) if (oldest === null || cached.used < oldest.used) oldest = { statements, sql, used: cached.used };
    }
    oldest?.statements.delete(oldest.sql);
  }
}

/**
 * `SqliteReadStore.offThread()`: the same reads (generators, planned and decoded here), their
 * statements run by a worker's connection; everything else is the store's own.
 */
class OffThreadReads implements ReadStore {
  constructor(
    private readonly store: SqliteReadStore,
    readonly thread: SqliteThread,
  ) {}

  get(collection: string, id: string): Promise<Doc | null> {
    return this.run(this.store.getRead(collection, id));
  }

  getMany(collection: string, ids: string[]): Promise<Doc[]> {
    return this.run(this.store.getManyRead(collection, ids));
  }

  find(collection: string, query: FindQuery): Promise<Doc[]> {
    return this.run(this.store.findRead(collection, query));
  }

  findIds(collection: string, query: FindQuery): Promise<string[]> {
    return this.run(this.store.findIdsRead(collection, query));
  }

  count(collection: string, filter?: Filter): Promise<number> {
    return this.run(this.store.countRead(collection, filter));
  }

  aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    return this.run(this.store.aggregateRead(collection, query));
  }

  aggregateRanges(collection: string, query: RangesAggregateQuery): Promise<AggregateRow[]> {
    return this.run(this.store.aggregateRangesRead(collection, query));
  }

  ensureCollection(spec: CollectionSpec): Promise<void> {
    return this.store.ensureCollection(spec);
  }

  dropCollection(name: string): Promise<void> {
    return this.store.dropCollection(name);
  }

  listCollections(): Promise<string[]> {
    return this.store.listCollections();
  }

  commit(writes: ViewWrite[], options?: CommitOptions): Promise<void> {
    return this.store.commit(writes, options);
  }

  stamps(collection: string, scope?: object): Promise<CollectionStamps> {
    return this.store.stamps(collection, scope);
  }

  reclaimSpace(): Promise<void> {
    return this.store.reclaimSpace();
  }

  ping(): Promise<void> {
    return this.store.ping();
  }

  /** Closes the store (it is the same store). */
  close(): Promise<void> {
    return this.store.close();
  }

  offThread(): ReadStore {
    return this;
  }

  private run<T>(plan: ReadPlan<T>): Promise<T> {
    return this.store.later(plan, this.thread);
  }
}

type PreparedWrite =
  | { op: 'put'; collection: string; table: string; sql: WriteSql; values: unknown[] }
  | { op: 'delete'; collection: string; table: string; id: string | number | null };

interface WriteSql {
  insert: string;
  update: string;
  /**
   * For a typed table with indexed columns: the UPDATE of the other columns and `"$rest"`, only
   * where the indexed columns already hold the document's values. SQLite rewrites the entries of
   * every index built on a column an UPDATE sets, even to the same value, and each index page so
   * dirtied is a WAL frame at the commit: an incident's head, rewritten by every comment with its
   * nine indexed fields unchanged (version 2), dirtied nine index pages a commit (a micro-bench of ten such
   * updates per commit: 46 WAL writes and 250 us against 21 and 130). `order`: the indexes into
   * `update`'s values of the statement's parameters. Null: no indexed column.
   */
  updateKept: { sql: string; order: number[] } | null;
}

/** Per layout (one per collection): its table's write statements and declared types. */
const writeShapes = new WeakMap<CollectionLayout, { sql: WriteSql; declared: Record<string, ColumnType> | undefined }>();

/**
 * INSERT (ignored when the id exists) and UPDATE of a whole document, both binding `layout.toRow`'s
 * values (the id last), and the types `assertDeclaredTypes` checks.
 */
function writeShape(table: string, layout: CollectionLayout): { sql: WriteSql; declared: Record<string, ColumnType> | undefined } {
  let shape = writeShapes.get(layout);
  if (!shape) {
    const columns = layout.typed ? [...layout.columns.map(([name]) => `"${name}"`), layout.docColumn] : ['doc'];
    const values = columns.map((column) => (column === layout.docColumn ? 'jsonb(?)' : '?'));
    const sql: WriteSql = {
      insert: `INSERT INTO ${table} (${columns.join(', ')}, id) VALUES (${values.join(', ')}, ?) ON CONFLICT (id) DO NOTHING`,
      update: `UPDATE ${table} SET ${columns.map((column, i) => `${column} = ${values[i]}`).join(', ')} WHERE id = ?`,
      updateKept: null,
    };
    if (layout.typed && layout.columns.some(([name]) => layout.indexedColumns.has(name))) {
      // Its parameters are `update`'s values (toRow's: the columns, "$rest", the id) reordered.
      const set: string[] = [];
      const setOrder: number[] = [];
      const kept: string[] = [];
      const keptOrder: number[] = [];
      layout.columns.forEach(([name], i) => {
        if (layout.indexedColumns.has(name)) {
          kept.push(`"${name}" IS ?`);
          keptOrder.push(i);
        } else {
          set.push(`"${name}" = ?`);
          setOrder.push(i);
        }
      });
      set.push(`${layout.docColumn} = jsonb(?)`);
      setOrder.push(layout.columns.length);
      sql.updateKept = {
        sql: `UPDATE ${table} SET ${set.join(', ')} WHERE id = ? AND ${kept.join(' AND ')}`,
        order: [...setOrder, layout.columns.length + 1, ...keptOrder],
      };
    }
    let declared: Record<string, ColumnType> | undefined;
    if (layout.typed) {
      const entries: Array<readonly [string, ColumnType]> = [['id', layout.integerId ? 'integer' : 'text'], ...layout.columns];
      if (layout.idField !== null) entries.push([layout.idField, 'integer']);
      declared = Object.fromEntries(entries);
    }
    writeShapes.set(layout, (shape = { sql, declared }));
  }
  return shape;
}

/** Serialises every document before the transaction starts, so a bad one fails the whole commit. */
function prepareWrite(write: ViewWrite, layout: CollectionLayout): PreparedWrite {
  const table = tableName(write.collection);
  if (write.op === 'delete') return { op: 'delete', collection: write.collection, table, id: layout.storedId(write.id) };
  assertDocId(write.doc.id);
  const { sql, declared } = writeShape(table, layout);
  if (declared) assertDeclaredTypes(write.collection, write.doc, declared, layout.idField ?? undefined);
  const values = layout.toRow(write.doc);
  if (!layout.typed && typeof values[0] !== 'string') throw new Error(`Document ${write.doc.id} cannot be serialised`);
  return { op: 'put', collection: write.collection, table, sql, values };
}

/** Count, sums, minimums and maximums, named as `toAggregateRow` reads them. */
function aggregateColumns(layout: CollectionLayout, query: Pick<AggregateQuery, 'sum' | 'min' | 'max'>): string[] {
  const columns = ['count(*) AS n'];
  const input = (f: string) => numericExpr(layout.field(f));
  (query.sum ?? []).forEach((f, i) => columns.push(`total(${input(f)}) AS s${i}`));
  (query.min ?? []).forEach((f, i) => columns.push(`min(${input(f)}) AS mn${i}`));
  (query.max ?? []).forEach((f, i) => columns.push(`max(${input(f)}) AS mx${i}`));
  return columns;
}

function aggregateSql(table: string, layout: CollectionLayout, query: AggregateQuery, where: SqlFragment): string {
  const columns = aggregateColumns(layout, query);
  if (query.groupBy === undefined) return `SELECT ${columns.join(', ')} FROM ${table} WHERE ${where.sql}`;
  const group = groupExprs(layout.field(query.groupBy));
  return `SELECT ${group.value} AS g, ${group.kind} AS k, ${columns.join(', ')} FROM ${table}
          WHERE ${where.sql} GROUP BY g, k`;
}

function toAggregateRow(
  row: Record<string, unknown>,
  groupRef: FieldRef | null,
  sum: string[],
  min: string[],
  max: string[],
): AggregateRow {
  return {
    group: groupRef ? groupValue(groupRef, row.g, row.k) : null,
    count: row.n as number,
    sum: Object.fromEntries(sum.map((f, i) => [f, row[`s${i}`] as number])),
    min: Object.fromEntries(min.map((f, i) => [f, (row[`mn${i}`] ?? null) as number | null])),
    max: Object.fromEntries(max.map((f, i) => [f, (row[`mx${i}`] ?? null) as number | null])),
  };
}

/**
 * A read of one collection: its answer when the collection does not exist, and, given the
 * collection's layout and table, a generator that yields its statements one at a time (their
 * rows sent back in) and returns its answer.
 */
interface ReadPlan<T> {
  collection: string;
  missing: () => T;
  body: (layout: CollectionLayout, table: string) => Read<T>;
}

function* getBody(layout: CollectionLayout, t: string, id: string): Read<Doc | null> {
  const storedId = layout.storedId(id);
  if (storedId === null) return null;
  const rows = yield { sql: `SELECT ${layout.selectList()} FROM ${t} WHERE id = ?`, params: [storedId], mode: layout.typed ? 'raw' : 'pluck' };
  return rows.length === 0 ? null : layout.toDoc(rows[0]);
}

function* getManyBody(layout: CollectionLayout, t: string, ids: string[]): Read<Doc[]> {
  if (ids.length === 0) return [];
  const storedIds = ids.map((id) => layout.storedId(id)).filter((id) => id !== null);
  const sql = `SELECT ${layout.selectList()} FROM ${t} WHERE id IN (SELECT value FROM json_each(?))`;
  const rows = yield { sql, params: [JSON.stringify(storedIds)], mode: layout.typed ? 'raw' : 'pluck' };
  const byId = new Map(toDocs(layout, rows).map((d) => [d.id, d]));
  return [...new Set(ids)].flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
}

function* findBody(layout: CollectionLayout, t: string, query: FindQuery): Read<Doc[]> {
  if (query.fields === undefined) return toDocs(layout, yield* findColumn(t, layout, query, layout.selectList(), layout.typed ? 'raw' : 'pluck'));
  // Typed columns alone when every field is one; otherwise whole documents, then picked.
  const only = layout.only(query.fields);
  const read = only ?? layout;
  const docs = toDocs(read, yield* findColumn(t, layout, query, read.selectList(), read.typed ? 'raw' : 'pluck'));
  return only ? docs : docs.map((doc) => pickFields(doc, query.fields!));
}

function* findIdsBody(layout: CollectionLayout, t: string, query: FindQuery): Read<string[]> {
  const ids = yield* findColumn(t, layout, query, 'id', 'pluck');
  return layout.integerId ? ids.map(String) : (ids as string[]);
}

function* countBody(layout: CollectionLayout, t: string, filter: Filter | undefined): Read<number> {
  const where = filterClause(layout, filter);
  const rows = yield { sql: `SELECT count(*) FROM ${t} WHERE ${where.sql}`, params: where.params, mode: 'pluck' };
  return rows[0] as number;
}

function* aggregateBody(layout: CollectionLayout, t: string, query: AggregateQuery, empty: () => AggregateRow[]): Read<AggregateRow[]> {
  const { sum = [], min = [], max = [] } = query;
  const where = filterClause(layout, query.filter);
  const rows = (yield { sql: aggregateSql(t, layout, query, where), params: where.params, mode: 'rows' }) as Array<Record<string, unknown>>;
  const groupRef = query.groupBy === undefined ? null : layout.field(query.groupBy);
  const result = rows.map((row) => toAggregateRow(row, groupRef, sum, min, max));
  if (query.groupBy === undefined) return result.length > 0 && result[0].count > 0 ? result : empty();
  return sortAggregateRows(result.filter((r) => r.count > 0));
}

/** `aggregateRanges`' answer, one row per range: thousands per call, built with plain loops, the empty ones once each. */
class RangeRows {
  private readonly result: Array<AggregateRow | undefined>;
  private readonly sum: string[];
  private readonly min: string[];
  private readonly max: string[];

  constructor(private readonly query: RangesAggregateQuery) {
    this.result = new Array(query.prefixes?.length ?? query.ranges.length);
    this.sum = query.sum ?? [];
    this.min = query.min ?? [];
    this.max = query.max ?? [];
  }

  private figures(row: Record<string, unknown> | null, names: string[], prefix: string, none: number | null): Record<string, number | null> {
    const out: Record<string, number | null> = {};
    for (let i = 0; i < names.length; i++) out[names[i]] = row ? ((row[prefix + i] ?? none) as number | null) : none;
    return out;
  }

  take(row: Record<string, unknown>, index: number): void {
    if (index < this.result.length) {
      this.result[index] = {
        group: index,
        count: row.n as number,
        sum: this.figures(row, this.sum, 's', 0) as Record<string, number>,
        min: this.figures(row, this.min, 'mn', null),
        max: this.figures(row, this.max, 'mx', null),
      };
    }
  }

  /** A row read as an array: [range, count, sums..., minimums..., maximums...]. */
  takeRaw(row: unknown[]): void {
    const index = row[0] as number;
    if (index >= this.result.length) return;
    const named = (names: string[], at: number, none: number | null) => {
      const out: Record<string, number | null> = {};
      for (let i = 0; i < names.length; i++) out[names[i]] = (row[at + i] ?? none) as number | null;
      return out;
    };
    this.result[index] = {
      group: index,
      count: row[1] as number,
      sum: named(this.sum, 2, 0) as Record<string, number>,
      min: named(this.min, 2 + this.sum.length, null),
      max: named(this.max, 2 + this.sum.length + this.min.length, null),
    };
  }

  filled(): AggregateRow[] {
    const { result, sum, min, max } = this;
    for (let i = 0; i < result.length; i++) {
      result[i] ??= { group: i, count: 0, sum: this.figures(null, sum, 's', 0) as Record<string, number>, min: this.figures(null, min, 'mn', null), max: this.figures(null, max, 'mx', null) };
    }
    return result as AggregateRow[];
  }
}

function* aggregateRangesBody(layout: CollectionLayout, t: string, query: RangesAggregateQuery, result: RangeRows): Read<AggregateRow[]> {
  if (query.prefixes) return yield* prefixedRangesBody(layout, t, { ...query, prefixes: query.prefixes }, result);
  const { ranges, field } = query;
  if (ranges.length === 0) return [];
  // The ranges' subquery names no column of a collection (i, lo, hi), so the columns need no qualifier.
  const columns = aggregateColumns(layout, query).join(', ');
  if (query.filter === undefined && layout.field(field).kind === 'id' && ranges.every((r) => typeof r.gte === 'string' && typeof r.lt === 'string' && r.filter === undefined)) {
    // The ranges come from a subquery ordered by their index, so SQLite groups the joined rows as
    // they arrive, range after range, instead of sorting every joined row in a temporary B-tree
    // first (a project read at 10,000 endpoints: 50,000 ranges, about 200,000 rows). Rows come
    // back as arrays: cheaper to make, and to copy from a worker thread, than objects.
    const sql = `SELECT r.i AS g, ${columns}
                 FROM (SELECT key AS i, json_extract(value, '$[0]') AS lo, json_extract(value, '$[1]') AS hi FROM json_each(?) ORDER BY key) AS r
                 CROSS JOIN ${t} AS t WHERE t.id >= r.lo AND t.id < r.hi GROUP BY r.i`;
    const rows = (yield { sql, params: [JSON.stringify(ranges.map((r) => [r.gte, r.lt]))], mode: 'raw' }) as unknown[][];
    for (const row of rows) result.takeRaw(row);
    return result.filled();
  }
  // Statements of a power of two arms (the largest that fits what is left, at most RANGE_ARMS),
  // so a few prepared statements serve every request size and no range is read twice.
  for (let start = 0; start < ranges.length; ) {
    let size = RANGE_ARMS;
    while (size > ranges.length - start) size /= 2;
    const group = ranges.slice(start, start + size);
    const arms: string[] = [];
    const params: SqlParam[] = [];
    group.forEach((range, i) => {
      const where = filterClause(layout, rangeFilter(query, range));
      arms.push(`SELECT ${i} AS g, ${columns} FROM ${t} WHERE ${where.sql}`);
      params.push(...where.params);
    });
    const rows = (yield { sql: arms.join(' UNION ALL '), params, mode: 'rows' }) as Array<Record<string, unknown>>;
    for (const row of rows) result.take(row, start + (row.g as number));
    start += size;
  }
  return result.filled();
}

/**
 * `aggregateRanges` with prefixes. Over text ids, one statement: the prefixes (ordered by their
 * index, so SQLite groups the joined rows as they arrive) times the suffix ranges, each bound
 * made by SQLite (`prefix || suffix`) and each an index range of the primary key; one row per
 * prefix comes back. Other fields: every range spelled out, summed as without prefixes, folded.
 */
function* prefixedRangesBody(layout: CollectionLayout, t: string, query: RangesAggregateQuery & { prefixes: string[] }, result: RangeRows): Read<AggregateRow[]> {
  assertPrefixedRanges(query);
  if (query.prefixes.length === 0) return [];
  if (query.filter !== undefined || layout.field(query.field).kind !== 'id' || query.ranges.length === 0) {
    const whole: RangesAggregateQuery = { field: query.field, ranges: prefixedRanges(query), filter: query.filter, sum: query.sum, min: query.min, max: query.max };
    return rowsPerPrefix(yield* aggregateRangesBody(layout, t, whole, new RangeRows(whole)), query);
  }
  // The subqueries name no column of a collection (i, p, lo, hi), so the columns need no qualifier.
  const columns = aggregateColumns(layout, query).join(', ');
  const sql = `SELECT o.i AS g, ${columns}
               FROM (SELECT key AS i, value AS p FROM json_each(?) ORDER BY key) AS o
               CROSS JOIN (SELECT json_extract(value, '$[0]') AS lo, json_extract(value, '$[1]') AS hi FROM json_each(?)) AS r
               CROSS JOIN ${t} AS t WHERE t.id >= o.p || r.lo AND t.id < o.p || r.hi GROUP BY o.i`;
  const params = [JSON.stringify(query.prefixes), JSON.stringify(query.ranges.map((r) => [r.gte, r.lt]))];
  const rows = (yield { sql, params, mode: 'raw' }) as unknown[][];
  for (const row of rows) result.takeRaw(row);
  return result.filled();
}

function* findColumn(table: string, layout: CollectionLayout, query: FindQuery, columns: string, mode: StatementMode): Read<unknown[]> {
  const plan = planFind(layout, query);
  const filter = filterClause(layout, query.filter);
  // The keyset goes first: given two bounds on the lead sort field (the filter's range and the
  // keyset's), SQLite starts the index scan at the first one it meets, so with the filter
  // first every page of a walk over a time range re-read the pages before it (page 10 of a
  // p95 walk: 50-70 ms instead of 1-2 ms).
  const values = yield* findPart(table, columns, mode, and([plan.keyset, filter]), plan.orderBy, query.limit);
  if (plan.nullTail && (query.limit === undefined || values.length < query.limit)) {
    const remaining = query.limit === undefined ? undefined : query.limit - values.length;
    values.push(...yield* findPart(table, columns, mode, and([filter, plan.nullTail]), plan.orderBy, remaining));
  }
  return values;
}

function* findPart(table: string, columns: string, mode: StatementMode, where: SqlFragment, orderBy: string, limit: number | undefined): Read<unknown[]> {
  const params = limit === undefined ? where.params : [...where.params, limit];
  const sql = `WHERE ${where.sql} ORDER BY ${orderBy}${limit === undefined ? '' : ' LIMIT ?'}`;
  return yield { sql: `SELECT ${columns} FROM ${table} ${sql}`, params, mode };
}

