import { compareBySort, isAfterKeyset, matchesFilter } from '../../../../src/platform/projections/doc-matching.js';
import { assertCollectionName, assertColumns, assertDeclaredTypes, assertDocId, emptyAggregateRow, pickFields, prefixedRanges, rangeFilter, rowsPerPrefix, sortAggregateRows, UnknownCollectionError } from '../../../../src/platform/read-store/read-store-rules.js';
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
} from '../../../../src/platform/read-store/read-store.port.js';
import type { Projection } from '../../../../src/platform/projections/projection.js';
import { BatchViewTransaction, KeptDocuments, wantedBy } from '../../../../src/platform/projections/view-transaction.js';
import type { RecordedEvent } from '../../../../src/platform/event-store/event-store.port.js';

/**
 * A small in-memory ReadStore for unit tests of projections and queries. It evaluates filters,
 * sorts and keysets with the same code as the projection runner's overlay (doc-matching) and
 * the adapters' shared rules, and runs the read-store contract suite like every adapter
 * (test/contract/read-store.test.ts), so it cannot drift from the real matching rules. It also
 * counts the documents each read returns, so tests can see how much a query reads.
 */
export class MemoryReadStore implements ReadStore {
  readonly collections = new Map<string, Map<string, Doc>>();
  private readonly uniqueFields = new Map<string, string[][]>();
  /** Declared columns, as each collection was created with them: documents are checked against them. */
  private readonly columns = new Map<string, Record<string, ColumnType>>();
  private readonly idFields = new Map<string, string>();
  docsRead = 0;

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    assertCollectionName(spec.name);
    assertColumns(spec.columns, spec.idField);
    if (!this.collections.has(spec.name)) {
      this.collections.set(spec.name, new Map());
      if (spec.columns) this.columns.set(spec.name, spec.columns);
      if (spec.idField !== undefined) this.idFields.set(spec.name, spec.idField);
    }
    const unique = this.uniqueFields.get(spec.name) ?? [];
    for (const index of spec.indexes) {
      if (index.unique && !unique.some((fields) => fields.join() === index.fields.join())) unique.push(index.fields);
    }
    this.uniqueFields.set(spec.name, unique);
  }
  async dropCollection(name: string): Promise<void> {
    this.collections.delete(name);
    this.uniqueFields.delete(name);
    this.columns.delete(name);
    this.idFields.delete(name);
  }
  async listCollections(): Promise<string[]> {
    return [...this.collections.keys()];
  }
  async get(collection: string, id: string): Promise<Doc | null> {
    const doc = this.rows(collection).get(id);
    return doc ? structuredClone(doc) : null;
  }
  async getMany(collection: string, ids: string[]): Promise<Doc[]> {
    const rows = this.rows(collection);
    return ids.flatMap((id) => (rows.has(id) ? [structuredClone(rows.get(id)!)] : []));
  }
  async find(collection: string, query: FindQuery): Promise<Doc[]> {
    const sort = query.sort ?? [['id', 'asc']];
    let docs = [...this.rows(collection).values()].filter((d) => matchesFilter(d, query.filter)).sort((a, b) => compareBySort(a, b, sort));
    if (query.after) docs = docs.filter((d) => isAfterKeyset(d, sort, query.after!));
    if (query.limit !== undefined) docs = docs.slice(0, query.limit);
    this.docsRead += docs.length;
    return docs.map((d) => structuredClone(query.fields ? pickFields(d, query.fields) : d));
  }
  async count(collection: string, filter?: Filter): Promise<number> {
    return [...this.rows(collection).values()].filter((d) => matchesFilter(d, filter)).length;
  }
  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    const docs = [...this.rows(collection).values()].filter((d) => matchesFilter(d, query.filter));
    const sum = query.sum ?? [];
    const min = query.min ?? [];
    const max = query.max ?? [];
    if (!query.groupBy && docs.length === 0) return [emptyAggregateRow(sum, min, max)];
    const groups = new Map<Scalar, Doc[]>();
    for (const doc of docs) {
      const key = query.groupBy ? ((doc[query.groupBy] ?? null) as Scalar) : null;
      groups.set(key, [...(groups.get(key) ?? []), doc]);
    }
    this.docsRead += groups.size;
    const rows = [...groups.entries()].map(([group, members]) => {
      // Numbers only: strings and booleans are not summed, nor taken as min or max.
      const values = (f: string) => members.map((m) => m[f]).filter((v): v is number => typeof v === 'number');
      return {
        group,
        count: members.length,
        sum: Object.fromEntries(sum.map((f) => [f, values(f).reduce((a, b) => a + b, 0)])),
        min: Object.fromEntries(min.map((f) => [f, values(f).length ? Math.min(...values(f)) : null])),
        max: Object.fromEntries(max.map((f) => [f, values(f).length ? Math.max(...values(f)) : null])),
      };
    });
    return sortAggregateRows(rows);
  }
  async aggregateRanges(collection: string, query: RangesAggregateQuery): Promise<AggregateRow[]> {
    if (query.prefixes) {
      const { prefixes, ...whole } = query;
      return rowsPerPrefix(await this.aggregateRanges(collection, { ...whole, ranges: prefixedRanges({ ...query, prefixes }) }), { ...query, prefixes });
    }
    const { ranges, field: _field, prefixes: _, filter: _filter, ...figures } = query;
    const rows: AggregateRow[] = [];
    for (const [i, range] of ranges.entries()) {
      const [row] = await this.aggregate(collection, { ...figures, filter: rangeFilter(query, range) });
      rows.push({ ...row, group: i });
    }
    return rows;
  }
  /** All or nothing: every write is checked (collection, serialisation, unique indexes, preconditions) before any is applied. */
  async commit(writes: ViewWrite[], options: CommitOptions = {}): Promise<void> {
    for (const precondition of options.expect ?? []) {
      const actual = this.collections.get(precondition.collection)?.get(precondition.id)?.[precondition.field] ?? null;
      if (actual !== precondition.value) throw new PreconditionFailedError(precondition, actual);
    }
    const staged = new Map<string, Map<string, Doc>>();
    const stage = (collection: string) => {
      const existing = this.collections.get(collection);
      if (!existing) throw new UnknownCollectionError(collection);
      if (!staged.has(collection)) staged.set(collection, new Map(existing));
      return staged.get(collection)!;
    };
    for (const write of writes) {
      if (write.op === 'put') {
        assertDocId(write.doc.id);
        assertDeclaredTypes(write.collection, write.doc, this.columns.get(write.collection), this.idFields.get(write.collection));
        stage(write.collection).set(write.doc.id, JSON.parse(JSON.stringify(write.doc)) as Doc);
      } else stage(write.collection).delete(write.id);
    }
    for (const [collection, rows] of staged) this.assertUnique(collection, rows);
    for (const [collection, rows] of staged) this.collections.set(collection, rows);
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}

  private assertUnique(collection: string, rows: Map<string, Doc>): void {
    for (const fields of this.uniqueFields.get(collection) ?? []) {
      const seen = new Set<string>();
      for (const doc of rows.values()) {
        const values = fields.map((field) => doc[field] ?? null);
        if (values.includes(null)) continue; // as in SQLite, rows missing a field never collide
        const key = JSON.stringify(values);
        if (seen.has(key)) throw new Error(`Unique index on ${collection}(${fields.join(', ')}) refuses a second ${key}`);
        seen.add(key);
      }
    }
  }

  private rows(collection: string): Map<string, Doc> {
    return this.collections.get(collection) ?? new Map();
  }
}

/**
 * Applies events to a projection in one batch, through the runner's own unit of work: the reads
 * the projection names are read ahead, reads see the batch's writes; one commit at the end.
 */
/**
 * Applies one batch as the runner does: read-ahead, the handlers, one commit. Pass the same
 * `kept` to every batch of a projection that keeps its documents (`Projection.keepsDocuments`)
 * to have them read back frozen from the batches before, as a following runner hands them.
 */
export async function applyBatch(store: ReadStore, projection: Projection, events: RecordedEvent[], kept: KeptDocuments | null = null): Promise<void> {
  const views = new BatchViewTransaction(store, (collection) => collection, undefined, kept);
  if (projection.prefetch) await views.prefetch(wantedBy(projection, events));
  for (const event of events) await projection.handlers[event.type]?.(event, views);
  await store.commit(views.writes());
  views.committed();
}
