/** Translates read-store filters, sorts and keysets to MongoDB query documents. */
import type { Document } from 'mongodb';
import type { FieldCondition, Filter, Scalar, SortDirection } from '../read-store.port.js';
import { assertFieldName } from '../read-store-rules.js';

export function mongoField(field: string): string {
  assertFieldName(field);
  return field === 'id' ? '_id' : field;
}

function isCondition(value: Scalar | FieldCondition): value is FieldCondition {
  return value !== null && typeof value === 'object';
}

function conditionDoc(cond: FieldCondition): Document {
  const out: Document = {};
  if (cond.eq !== undefined) out.$eq = cond.eq;
  if (cond.ne !== undefined) out.$ne = cond.ne;
  if (cond.in !== undefined) out.$in = cond.in;
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    if (cond[op] !== undefined) out[`$${op}`] = cond[op];
  }
  if (cond.has !== undefined) out.$elemMatch = { $eq: cond.has };
  return out;
}

export function mongoFilter(filter: Filter | undefined): Document {
  const out: Document = {};
  for (const [field, value] of Object.entries(filter ?? {})) {
    if (value === undefined) continue;
    out[mongoField(field)] = isCondition(value) ? conditionDoc(value) : value;
  }
  return out;
}

export type SortSpec = Array<[field: string, direction: SortDirection]>;

export function mongoSort(sort: SortSpec): Document {
  return Object.fromEntries(sort.map(([field, dir]) => [mongoField(field), dir === 'desc' ? -1 : 1]));
}

/** Rows strictly after `value` on one field; null/missing sort lowest. null when no row can be. */
function strictlyAfter(field: string, dir: SortDirection, value: Scalar): Document | null {
  const f = mongoField(field);
  if (value === null) return dir === 'asc' ? { [f]: { $ne: null } } : null;
  if (dir === 'asc') return { [f]: { $gt: value } };
  return { $or: [{ [f]: { $lt: value } }, { [f]: null }] };
}

/** `(f1 after v1) OR (f1 = v1 AND f2 after v2) OR ...`; `{f: null}` matches null or missing. */
export function mongoKeyset(sort: SortSpec, after: Scalar[] | undefined): Document | null {
  if (!after) return null;
  if (after.length !== sort.length) throw new Error('`after` needs one value per sort field');
  const branches: Document[] = [];
  sort.forEach(([field, dir], i) => {
    const last = strictlyAfter(field, dir, after[i]);
    if (!last) return;
    const equalities = sort.slice(0, i).map(([f], j) => ({ [mongoField(f)]: after[j] }));
    branches.push(equalities.length === 0 ? last : { $and: [...equalities, last] });
  });
  return branches.length === 0 ? { _id: { $exists: false } } : { $or: branches };
}
