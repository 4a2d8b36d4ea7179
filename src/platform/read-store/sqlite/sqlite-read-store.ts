/**
 * Read store on one SQLite file shared by several processes (WAL, busy timeout).
 * One table per collection, `c_<name>(id TEXT PRIMARY KEY, doc BLOB)` holding the document as
 * JSONB; declared indexes are expression indexes on `json_extract(doc, '$.field')`.
 */
import Database from 'better-sqlite3';
import type {
  AggregateQuery,
  AggregateRow,
  CollectionSpec,
  Doc,
  Filter,
  FindQuery,
  IndexSpec,
  ReadStore,
  Scalar,
  ViewWrite,
} from '../read-store.port.js';
import {
  assertCollectionName,
  assertDocId,
  assertFieldName,
  emptyAggregateRow,
  sortAggregateRows,
  UnknownCollectionError,
} from '../read-store-rules.js';
import { and, fieldExpr, filterClause, planFind, type SqlFragment } from './sqlite-query.js';

const TABLE_PREFIX = 'c_';
const STATEMENT_CACHE_SIZE = 256;

export interface SqliteReadStoreOptions {
  /** Milliseconds a writer waits for another process's lock before failing. */
  busyTimeoutMs?: number;
}

function tableName(collection: string): string {
  assertCollectionName(collection);
  return `"${TABLE_PREFIX}${collection}"`;
}

function indexName(collection: string, index: IndexSpec): string {
  return `"ix_${collection}__${index.fields.join('__')}${index.unique ? '__u' : ''}"`;
}

/** By message, not `instanceof`: better-sqlite3's error class can come from another realm (jest workers). */
function isMissingTable(error: unknown): boolean {
  return /no such table/.test(String((error as { message?: unknown })?.message ?? ''));
}

/** Re-raises an error from another realm as a local Error, keeping its message, code and cause. */
function asLocalError(error: unknown): Error {
  if (error instanceof Error) return error;
  const foreign = error as { message?: unknown; code?: unknown };
  return Object.assign(new Error(String(foreign?.message ?? error), { cause: error }), { code: foreign?.code });
}

function parseDoc(row: { doc: string }): Doc {
  return JSON.parse(row.doc) as Doc;
}

export class SqliteReadStore implements ReadStore {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(file: string, options: SqliteReadStoreOptions = {}) {
    this.db = new Database(file);
    this.db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    const table = tableName(spec.name);
    for (const index of spec.indexes) index.fields.forEach(assertFieldName);
    this.db
      .transaction(() => {
        this.db.exec(`CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, doc BLOB NOT NULL)`);
        for (const index of spec.indexes) {
          const unique = index.unique ? 'UNIQUE ' : '';
          const columns = index.fields.map(fieldExpr).join(', ');
          this.db.exec(`CREATE ${unique}INDEX IF NOT EXISTS ${indexName(spec.name, index)} ON ${table} (${columns})`);
        }
      })
      .immediate();
  }

  async dropCollection(name: string): Promise<void> {
    this.db.exec(`DROP TABLE IF EXISTS ${tableName(name)}`);
    this.statements.clear();
  }

  async listCollections(): Promise<string[]> {
    const rows = this.statement(
      `SELECT substr(name, ${TABLE_PREFIX.length + 1}) AS name FROM sqlite_schema
       WHERE type = 'table' AND name LIKE '${TABLE_PREFIX}%' ORDER BY name`,
    ).all() as Array<{ name: string }>;
    return rows.map((r) => r.name);
  }

  async get(collection: string, id: string): Promise<Doc | null> {
    const row = this.read(collection, null, (t) => this.statement(`SELECT json(doc) AS doc FROM ${t} WHERE id = ?`).get(id));
    return row ? parseDoc(row as { doc: string }) : null;
  }

  async getMany(collection: string, ids: string[]): Promise<Doc[]> {
    if (ids.length === 0) return [];
    const rows = this.read(collection, [], (t) =>
      this.statement(`SELECT json(doc) AS doc FROM ${t} WHERE id IN (SELECT value FROM json_each(?))`).all(
        JSON.stringify(ids),
      ),
    ) as Array<{ doc: string }>;
    const byId = new Map(rows.map((r) => parseDoc(r)).map((d) => [d.id, d]));
    return [...new Set(ids)].flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }

  async find(collection: string, query: FindQuery): Promise<Doc[]> {
    const plan = planFind(query);
    const filter = filterClause(query.filter);
    const rows = this.findPart(collection, and([filter, plan.keyset]), plan.orderBy, query.limit);
    if (plan.nullTail && (query.limit === undefined || rows.length < query.limit)) {
      const remaining = query.limit === undefined ? undefined : query.limit - rows.length;
      rows.push(...this.findPart(collection, and([filter, plan.nullTail]), plan.orderBy, remaining));
    }
    return rows;
  }

  private findPart(collection: string, where: SqlFragment, orderBy: string, limit: number | undefined): Doc[] {
    const params = limit === undefined ? where.params : [...where.params, limit];
    const sql = `WHERE ${where.sql} ORDER BY ${orderBy}${limit === undefined ? '' : ' LIMIT ?'}`;
    const rows = this.read(collection, [], (t) => this.statement(`SELECT json(doc) AS doc FROM ${t} ${sql}`).all(...params));
    return (rows as Array<{ doc: string }>).map(parseDoc);
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    const where = filterClause(filter);
    const row = this.read(collection, { n: 0 }, (t) =>
      this.statement(`SELECT count(*) AS n FROM ${t} WHERE ${where.sql}`).get(...where.params),
    ) as { n: number };
    return row.n;
  }

  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    const { sum = [], min = [], max = [] } = query;
    const where = filterClause(query.filter);
    const sql = aggregateSql(tableName(collection), query, where);
    const rows = this.read(collection, [], () => this.statement(sql).all(...where.params)) as Array<Record<string, unknown>>;
    const result = rows.map((row) => toAggregateRow(row, query.groupBy !== undefined, sum, min, max));
    if (query.groupBy === undefined) return result.length > 0 && result[0].count > 0 ? result : [emptyAggregateRow(sum, min, max)];
    return sortAggregateRows(result.filter((r) => r.count > 0));
  }

  async commit(writes: ViewWrite[]): Promise<void> {
    if (writes.length === 0) return;
    const prepared = writes.map(prepareWrite);
    try {
      this.commitPrepared(writes, prepared);
    } catch (error) {
      throw asLocalError(error);
    }
  }

  private commitPrepared(writes: ViewWrite[], prepared: ReturnType<typeof prepareWrite>[]): void {
    this.db
      .transaction(() => {
        for (const collection of new Set(writes.map((w) => w.collection))) this.assertExists(collection);
        for (const w of prepared) {
          if (w.op === 'put') {
            this.statement(
              `INSERT INTO ${w.table} (id, doc) VALUES (?, jsonb(?)) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
            ).run(w.id, w.json);
          } else {
            this.statement(`DELETE FROM ${w.table} WHERE id = ?`).run(w.id);
          }
        }
      })
      .immediate();
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.statements.clear();
    if (this.db.open) this.db.close();
  }

  private assertExists(collection: string): void {
    const found = this.statement(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(
      `${TABLE_PREFIX}${collection}`,
    );
    if (!found) throw new UnknownCollectionError(collection);
  }

  /** Runs a read; a collection that does not exist reads as empty. */
  private read<T>(collection: string, empty: T, run: (table: string) => unknown): T {
    const table = tableName(collection);
    try {
      return run(table) as T;
    } catch (error) {
      if (isMissingTable(error)) return empty;
      throw error;
    }
  }

  private statement(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (stmt) {
      // Re-insert to keep the map in least-recently-used order.
      this.statements.delete(sql);
    } else {
      stmt = this.db.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!);
    }
    this.statements.set(sql, stmt);
    return stmt;
  }
}

type PreparedWrite =
  | { op: 'put'; table: string; id: string; json: string }
  | { op: 'delete'; table: string; id: string };

/** Serialises every document before the transaction starts, so a bad one fails the whole commit. */
function prepareWrite(write: ViewWrite): PreparedWrite {
  const table = tableName(write.collection);
  if (write.op === 'delete') return { op: 'delete', table, id: write.id };
  assertDocId(write.doc.id);
  const json = JSON.stringify(write.doc);
  if (typeof json !== 'string') throw new Error(`Document ${write.doc.id} cannot be serialised`);
  return { op: 'put', table, id: write.doc.id, json };
}

function numericOnly(field: string): string {
  const type = field === 'id' ? `typeof(id)` : `json_type(doc, '$.${field}')`;
  return `CASE WHEN ${type} IN ('integer', 'real') THEN ${fieldExpr(field)} END`;
}

function aggregateSql(table: string, query: AggregateQuery, where: SqlFragment): string {
  const columns = ['count(*) AS n'];
  (query.sum ?? []).forEach((f, i) => columns.push(`total(${numericOnly(f)}) AS s${i}`));
  (query.min ?? []).forEach((f, i) => columns.push(`min(${numericOnly(f)}) AS mn${i}`));
  (query.max ?? []).forEach((f, i) => columns.push(`max(${numericOnly(f)}) AS mx${i}`));
  if (query.groupBy === undefined) return `SELECT ${columns.join(', ')} FROM ${table} WHERE ${where.sql}`;
  const g = query.groupBy;
  // The second key keeps true/false apart from the numbers 1/0 that json_extract makes of them.
  const kind = g === 'id' ? `''` : `CASE json_type(doc, '$.${g}') WHEN 'true' THEN 'b' WHEN 'false' THEN 'b' ELSE '' END`;
  return `SELECT ${fieldExpr(g)} AS g, ${kind} AS k, ${columns.join(', ')} FROM ${table}
          WHERE ${where.sql} GROUP BY g, k`;
}

function toAggregateRow(
  row: Record<string, unknown>,
  grouped: boolean,
  sum: string[],
  min: string[],
  max: string[],
): AggregateRow {
  let group: Scalar = null;
  if (grouped) group = row.k === 'b' ? row.g === 1 : ((row.g ?? null) as Scalar);
  return {
    group,
    count: row.n as number,
    sum: Object.fromEntries(sum.map((f, i) => [f, row[`s${i}`] as number])),
    min: Object.fromEntries(min.map((f, i) => [f, (row[`mn${i}`] ?? null) as number | null])),
    max: Object.fromEntries(max.map((f, i) => [f, (row[`mx${i}`] ?? null) as number | null])),
  };
}

