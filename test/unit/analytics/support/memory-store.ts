import {
  PreconditionFailedError,
  type AggregateQuery,
  type AggregateRow,
  type CollectionSpec,
  type CommitOptions,
  type Doc,
  type FieldCondition,
  type Filter,
  type FindQuery,
  type ReadStore,
  type Scalar,
  type ViewWrite,
} from '../../../../src/platform/read-store/read-store.port.js';
import type { Projection, ViewTransaction } from '../../../../src/platform/projections/projection.js';
import type { RecordedEvent } from '../../../../src/platform/event-store/event-store.port.js';

/**
 * A small in-memory ReadStore with the port's documented semantics, plus a ViewTransaction that
 * buffers a batch's writes like the projection runner does. It also counts the documents each
 * read returns, so tests can see how much a query reads.
 */
export class MemoryReadStore implements ReadStore {
  readonly collections = new Map<string, Map<string, Doc>>();
  docsRead = 0;

  async ensureCollection(spec: CollectionSpec): Promise<void> {
    if (!this.collections.has(spec.name)) this.collections.set(spec.name, new Map());
  }
  async dropCollection(name: string): Promise<void> {
    this.collections.delete(name);
  }
  async listCollections(): Promise<string[]> {
    return [...this.collections.keys()];
  }
  async get(collection: string, id: string): Promise<Doc | null> {
    const doc = this.rows(collection).get(id);
    return doc ? structuredClone(doc) : null;
  }
  async getMany(collection: string, ids: string[]): Promise<Doc[]> {
    return ids.flatMap((id) => (this.rows(collection).has(id) ? [structuredClone(this.rows(collection).get(id)!)] : []));
  }
  async find(collection: string, query: FindQuery): Promise<Doc[]> {
    let docs = [...this.rows(collection).values()].filter((d) => matches(d, query.filter));
    const sort = query.sort ?? [['id', 'asc']];
    docs.sort((a, b) => compareBy(a, b, sort));
    if (query.after) {
      const after = query.after;
      docs = docs.filter((d) => compareKey(d, after, sort) > 0);
    }
    if (query.limit !== undefined) docs = docs.slice(0, query.limit);
    this.docsRead += docs.length;
    return docs.map((d) => structuredClone(d));
  }
  async count(collection: string, filter?: Filter): Promise<number> {
    return [...this.rows(collection).values()].filter((d) => matches(d, filter)).length;
  }
  async aggregate(collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    const docs = [...this.rows(collection).values()].filter((d) => matches(d, query.filter));
    const groups = new Map<Scalar, Doc[]>();
    if (!query.groupBy) groups.set(null, docs);
    for (const doc of query.groupBy ? docs : []) {
      const key = (doc[query.groupBy!] ?? null) as Scalar;
      groups.set(key, [...(groups.get(key) ?? []), doc]);
    }
    this.docsRead += groups.size;
    return [...groups.entries()].map(([group, members]) => {
      const values = (f: string) => members.map((m) => m[f]).filter((v): v is number => typeof v === 'number');
      return {
        group,
        count: members.length,
        sum: Object.fromEntries((query.sum ?? []).map((f) => [f, values(f).reduce((a, b) => a + b, 0)])),
        min: Object.fromEntries((query.min ?? []).map((f) => [f, values(f).length ? Math.min(...values(f)) : null])),
        max: Object.fromEntries((query.max ?? []).map((f) => [f, values(f).length ? Math.max(...values(f)) : null])),
      };
    });
  }
  async commit(writes: ViewWrite[], options: CommitOptions = {}): Promise<void> {
    for (const precondition of options.expect ?? []) {
      const actual = this.rows(precondition.collection).get(precondition.id)?.[precondition.field] ?? null;
      if (actual !== precondition.value) throw new PreconditionFailedError(precondition, actual);
    }
    for (const write of writes) {
      if (write.op === 'put') this.rows(write.collection).set(write.doc.id, structuredClone(write.doc));
      else this.rows(write.collection).delete(write.id);
    }
  }
  async ping(): Promise<void> {}
  async close(): Promise<void> {}

  private rows(collection: string): Map<string, Doc> {
    let rows = this.collections.get(collection);
    if (!rows) {
      rows = new Map();
      this.collections.set(collection, rows);
    }
    return rows;
  }
}

/** Applies events to a projection in one batch: reads see the batch's writes; one commit at the end. */
export async function applyBatch(store: ReadStore, projection: Projection, events: RecordedEvent[]): Promise<void> {
  const pending = new Map<string, Map<string, Doc | null>>();
  const pendingOf = (c: string) => pending.get(c) ?? pending.set(c, new Map()).get(c)!;
  const views: ViewTransaction = {
    async get(collection, id) {
      const local = pendingOf(collection);
      return local.has(id) ? structuredClone(local.get(id) ?? null) : store.get(collection, id);
    },
    async find() {
      throw new Error('not needed by the analytics projection');
    },
    put(collection, doc) {
      pendingOf(collection).set(doc.id, structuredClone(doc));
    },
    delete(collection, id) {
      pendingOf(collection).set(id, null);
    },
  };
  for (const event of events) await projection.handlers[event.type]?.(event, views);
  const writes: ViewWrite[] = [];
  for (const [collection, docs] of pending) {
    for (const [id, doc] of docs) writes.push(doc ? { op: 'put', collection, doc } : { op: 'delete', collection, id });
  }
  await store.commit(writes);
}

function compareScalars(a: unknown, b: unknown): number {
  const left = a ?? null;
  const right = b ?? null;
  if (left === right) return 0;
  if (left === null) return -1;
  if (right === null) return 1;
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  return String(left) < String(right) ? -1 : 1;
}

function matchesCondition(value: unknown, c: FieldCondition): boolean {
  if (c.eq !== undefined && compareScalars(value, c.eq) !== 0) return false;
  if (c.ne !== undefined && compareScalars(value, c.ne) === 0) return false;
  if (c.in && !c.in.some((item) => compareScalars(value, item) === 0)) return false;
  if (c.gt !== undefined && !(value != null && compareScalars(value, c.gt) > 0)) return false;
  if (c.gte !== undefined && !(value != null && compareScalars(value, c.gte) >= 0)) return false;
  if (c.lt !== undefined && !(value != null && compareScalars(value, c.lt) < 0)) return false;
  if (c.lte !== undefined && !(value != null && compareScalars(value, c.lte) <= 0)) return false;
  return true;
}

function matches(doc: Doc, filter: Filter | undefined): boolean {
  return Object.entries(filter ?? {}).every(([field, cond]) =>
    typeof cond === 'object' && cond !== null ? matchesCondition(doc[field], cond) : compareScalars(doc[field], cond) === 0,
  );
}

function compareBy(a: Doc, b: Doc, sort: Array<[string, 'asc' | 'desc']>): number {
  for (const [field, dir] of sort) {
    const c = compareScalars(a[field], b[field]);
    if (c !== 0) return dir === 'asc' ? c : -c;
  }
  return 0;
}

function compareKey(doc: Doc, key: Scalar[], sort: Array<[string, 'asc' | 'desc']>): number {
  for (let i = 0; i < sort.length; i++) {
    const c = compareScalars(doc[sort[i][0]], key[i]);
    if (c !== 0) return sort[i][1] === 'asc' ? c : -c;
  }
  return 0;
}
