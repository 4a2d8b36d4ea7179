/**
 * Read store on MongoDB: one collection per view collection (`<prefix><name>`), `_id` holding the
 * document id. Commits run in a multi-document transaction, which needs a replica set.
 */
import { type MongoClient, type AnyBulkWriteOperation, type Db, type Document } from 'mongodb';
import {
  PreconditionFailedError,
  type AggregateQuery,
  type AggregateRow,
  type CollectionSpec,
  type ColumnType,
  type CommitOptions,
  type Doc,
  type Filter,
  type FindQuery,
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
  emptyAggregateRow,
  prefixedRanges,
  rowsPerPrefix,
  sortAggregateRows,
  UnknownCollectionError,
  rangeFilter,
} from '../read-store-rules.js';
import { mongoClientFor } from './mongo-connection.js';
import { guardMongo } from './mongo-errors.js';
import { mongoField, mongoFilter, mongoKeyset, mongoSort, type SortSpec } from './mongo-query.js';

/** `aggregateRanges` requests sent at once: enough to overlap round trips, few enough not to queue on the pool. */
const RANGES_IN_FLIGHT = 32;

export interface MongoReadStoreOptions {
  /** Database name; defaults to the one in the URL's path, else `http_monitor`. */
  dbName?: string;
  /** Prefix of every physical collection name. */
  collectionPrefix?: string;
  serverSelectionTimeoutMS?: number;
}

/** A view document as stored: its id is the string `_id`. */
type StoredView = Document & { _id: string };

function fromMongo(raw: Document): Doc {
  const { _id, ...rest } = raw;
  return { id: String(_id), ...rest };
}

/**
 * The document's fields without its id, in the SQLite adapter's value space: what JSON keeps
 * (Dates become strings, undefined goes). Throws for what JSON cannot hold (cycles, BigInt).
 */
function toMongoBody(doc: Doc): Document {
  assertDocId(doc.id);
  const json = JSON.stringify(doc);
  if (typeof json !== 'string') throw new Error(`Document ${doc.id} cannot be serialised`);
  const { id: _id, ...rest } = JSON.parse(json) as Doc;
  return rest;
}

export class MongoReadStore implements ReadStore {
  private readonly known = new Set<string>();
  /** Declared columns of the collections ensured here: BSON keeps types itself, they are only checked. */
  private readonly columns = new Map<string, Record<string, ColumnType>>();
  /** Id fields (`CollectionSpec.idField`) of the collections ensured here: BSON keeps both (the field indexed), they are only checked. */
  private readonly idFields = new Map<string, string>();

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly prefix: string,
  ) {}

  static async connect(url: string, options: MongoReadStoreOptions = {}): Promise<MongoReadStore> {
    const { client, dbName } = mongoClientFor(
      url,
      { ignoreUndefined: true, serverSelectionTimeoutMS: options.serverSelectionTimeoutMS ?? 10_000 },
      options.dbName,
    );
    await guardMongo('connect', () => client.connect());
    const db = client.db(dbName);
    return new MongoReadStore(client, db, options.collectionPrefix ?? 'view_');
  }

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    const physical = this.physical(spec.name);
    assertColumns(spec.columns, spec.idField);
    await guardMongo('ensureCollection', async () => {
      const exists = await this.db.listCollections({ name: physical }, { nameOnly: true }).hasNext();
      if (!exists) {
        await this.db.createCollection(physical).catch((error: { code?: number }) => {
          if (error.code !== 48) throw error; // NamespaceExists: another process won the race.
        });
      }
      const coll = this.db.collection(physical);
      for (const index of spec.indexes) {
        const keys = Object.fromEntries(index.fields.map((f) => [mongoField(f), 1]));
        if (index.fields.length === 1 && index.fields[0] === 'id') continue;
        const name = `ix_${index.fields.join('__')}${index.unique ? '__u' : ''}`;
        const partial = index.unique
          ? { partialFilterExpression: Object.fromEntries(index.fields.map((f) => [mongoField(f), { $exists: true }])) }
          : {};
        await coll.createIndex(keys, { name, unique: index.unique ?? false, ...partial });
      }
      // `_id` is the id field's decimal string, ordered as text: a range of the field itself (a
      // key range of check ids) needs an index of its own, or it scans the collection.
      const idField = spec.idField;
      if (idField !== undefined && !spec.indexes.some((index) => index.fields[0] === idField)) {
        await coll.createIndex({ [mongoField(idField)]: 1 }, { name: idFieldIndexName(idField) });
      }
    });
    this.known.add(spec.name);
    if (spec.columns) this.columns.set(spec.name, spec.columns);
    if (spec.idField !== undefined) this.idFields.set(spec.name, spec.idField);
  }

  async dropCollection(name: string): Promise<void> {
    const physical = this.physical(name);
    await guardMongo('dropCollection', () => 
      this.db.dropCollection(physical).catch((error: { code?: number }) => {
        if (error.code !== 26) throw error; // NamespaceNotFound: already gone.
        return false;
      }),
    );
    this.known.delete(name);
    this.columns.delete(name);
    this.idFields.delete(name);
  }

  async listCollections(): Promise<string[]> {
    const infos = await guardMongo('listCollections', () => this.db.listCollections({}, { nameOnly: true }).toArray());
    return infos
      .map((c) => c.name)
      .filter((n) => n.startsWith(this.prefix))
      .map((n) => n.slice(this.prefix.length))
      .sort();
  }

  async get(collection: string, id: string): Promise<Doc | null> {
    const raw = await guardMongo('get', () => this.coll(collection).findOne({ _id: id }));
    return raw ? fromMongo(raw) : null;
  }

  async getMany(collection: string, ids: string[]): Promise<Doc[]> {
    if (ids.length === 0) return [];
    const unique = [...new Set(ids)];
    const raws = await guardMongo('getMany', () => this.coll(collection).find({ _id: { $in: unique } }).toArray());
    const byId = new Map(raws.map(fromMongo).map((d) => [d.id, d]));
    return unique.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  }

  async find(collection: string, query: FindQuery): Promise<Doc[]> {
    const sort: SortSpec = query.sort && query.sort.length > 0 ? query.sort : [['id', 'asc']];
    const filter = mongoFilter(query.filter);
    const keyset = mongoKeyset(sort, query.after);
    const where = keyset ? { $and: [filter, keyset] } : filter;
    const raws = await guardMongo('find', () => {
      const found = this.coll(collection).find(where).sort(mongoSort(sort));
      const cursor = query.fields ? found.project(Object.fromEntries([['_id', 1], ...query.fields.map((f) => [mongoField(f), 1])])) : found;
      return (query.limit === undefined ? cursor : cursor.limit(query.limit)).toArray();
    });
    return raws.map(fromMongo);
  }

  async count(collection: string, filter?: Filter): Promise<number> {
    return guardMongo('count', () => this.coll(collection).countDocuments(mongoFilter(filter)));
  }

  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    const { sum = [], min = [], max = [] } = query;
    const numeric = (f: string) => ({ $cond: [{ $isNumber: `$${mongoField(f)}` }, `$${mongoField(f)}`, null] });
    const group: Document = { _id: query.groupBy === undefined ? null : `$${mongoField(query.groupBy)}`, n: { $sum: 1 } };
    sum.forEach((f, i) => (group[`s${i}`] = { $sum: `$${mongoField(f)}` }));
    min.forEach((f, i) => (group[`mn${i}`] = { $min: numeric(f) }));
    max.forEach((f, i) => (group[`mx${i}`] = { $max: numeric(f) }));
    const raws = await guardMongo('aggregate', () =>
      this.coll(collection).aggregate([{ $match: mongoFilter(query.filter) }, { $group: group }]).toArray(),
    );
    const rows: AggregateRow[] = raws.map((r) => ({
      group: (r._id ?? null) as Scalar,
      count: r.n as number,
      sum: Object.fromEntries(sum.map((f, i) => [f, Number(r[`s${i}`] ?? 0)])),
      min: Object.fromEntries(min.map((f, i) => [f, (r[`mn${i}`] ?? null) as number | null])),
      max: Object.fromEntries(max.map((f, i) => [f, (r[`mx${i}`] ?? null) as number | null])),
    }));
    if (query.groupBy === undefined) return rows.length > 0 ? rows : [emptyAggregateRow(sum, min, max)];
    return sortAggregateRows(rows);
  }

  /**
   * One `aggregate` per range, RANGES_IN_FLIGHT at a time: each is one index range on the server
   * and their round trips overlap; none holds this process's event loop (the driver is
   * asynchronous), which is what the one-statement form saves on SQLite.
   */
  async aggregateRanges(collection: string, query: RangesAggregateQuery): Promise<AggregateRow[]> {
    if (query.prefixes) {
      const { prefixes, ...whole } = query;
      return rowsPerPrefix(await this.aggregateRanges(collection, { ...whole, ranges: prefixedRanges({ ...query, prefixes }) }), { ...query, prefixes });
    }
    const { ranges, field: _field, prefixes: _, filter: _filter, ...figures } = query;
    const rows: AggregateRow[] = [];
    for (let start = 0; start < ranges.length; start += RANGES_IN_FLIGHT) {
      const part = ranges.slice(start, start + RANGES_IN_FLIGHT);
      const results = await Promise.all(part.map((range) => this.aggregate(collection, { ...figures, filter: rangeFilter(query, range) })));
      results.forEach(([row], i) => rows.push({ ...row, group: start + i }));
    }
    return rows;
  }

  /**
   * Preconditions are read inside the transaction; two commits racing on the same checkpoint
   * document conflict, the driver retries the loser, and its re-read then fails the precondition.
   */
  async commit(writes: ViewWrite[], options: CommitOptions = {}): Promise<void> {
    if (writes.length === 0) return;
    for (const write of writes) if (write.op === 'put') assertDeclaredTypes(write.collection, write.doc, this.columns.get(write.collection), this.idFields.get(write.collection));
    const batches = toBatches(writes);
    for (const name of new Set(writes.map((w) => w.collection))) await this.assertExists(name);
    await guardMongo('commit', () =>
      this.client.withSession((session) =>
        session.withTransaction(async () => {
          for (const precondition of options.expect ?? []) {
            const current = await this.coll(precondition.collection).findOne({ _id: precondition.id }, { session });
            const actual = (current?.[precondition.field] as unknown) ?? null;
            // Thrown from the callback: the driver aborts the transaction and rethrows it.
            if (actual !== precondition.value) throw new PreconditionFailedError(precondition, actual);
          }
          for (const batch of batches) {
            await this.coll(batch.collection).bulkWrite(batch.ops, { ordered: true, session });
          }
        }),
      ),
    );
  }

  async ping(): Promise<void> {
    await guardMongo('ping', () => this.db.command({ ping: 1 }));
  }

  async close(): Promise<void> {
    await this.client.close();
  }

  private physical(name: string): string {
    assertCollectionName(name);
    return `${this.prefix}${name}`;
  }

  private coll(name: string) {
    return this.db.collection<StoredView>(this.physical(name));
  }

  private async assertExists(name: string): Promise<void> {
    if (this.known.has(name)) return;
    const physical = this.physical(name);
    const exists = await guardMongo('commit', () => this.db.listCollections({ name: physical }, { nameOnly: true }).hasNext());
    if (!exists) throw new UnknownCollectionError(name);
    this.known.add(name);
  }
}

interface Batch {
  collection: string;
  ops: AnyBulkWriteOperation<StoredView>[];
}

/** Consecutive writes to one collection share a bulkWrite; documents are serialised up front. */
function toBatches(writes: ViewWrite[]): Batch[] {
  const batches: Batch[] = [];
  for (const w of writes) {
    const op: AnyBulkWriteOperation<StoredView> =
      w.op === 'put'
        ? { replaceOne: { filter: { _id: w.doc.id }, replacement: toMongoBody(w.doc), upsert: true } }
        : { deleteOne: { filter: { _id: w.id } } };
    const last = batches[batches.length - 1];
    if (last && last.collection === w.collection) last.ops.push(op);
    else batches.push({ collection: w.collection, ops: [op] });
  }
  return batches;
}

/** The index an `idField` collection's id field gets (its ranges are read by key). */
export function idFieldIndexName(idField: string): string {
  return `ix_${idField}`;
}
