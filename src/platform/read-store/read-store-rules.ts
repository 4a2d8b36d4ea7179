/**
 * Rules both read-store adapters share, so that they agree on names, errors and result order.
 */
import type { AggregateRow, Scalar } from './read-store.port.js';

const COLLECTION_NAME = /^[a-z0-9_]+$/;
/** Top-level field names only: no dots, no `$`, usable unquoted in SQL paths and Mongo keys. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A write or an index named a collection that `ensureCollection` never created. */
export class UnknownCollectionError extends Error {
  constructor(readonly collection: string) {
    super(`Unknown read-store collection "${collection}"`);
    this.name = 'UnknownCollectionError';
  }
}

export function assertCollectionName(name: string): void {
  if (!COLLECTION_NAME.test(name)) throw new Error(`Invalid collection name "${name}": expected [a-z0-9_]+`);
}

export function assertFieldName(field: string): void {
  if (!FIELD_NAME.test(field)) throw new Error(`Invalid field name "${field}": expected a top-level identifier`);
}

export function assertDocId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id.length === 0) throw new Error('A read-store document needs a non-empty string id');
}

/** Rank of a scalar's type in the shared sort order: null, numbers, strings, booleans. */
function typeRank(value: Scalar): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'number') return 1;
  if (typeof value === 'string') return 2;
  return 3;
}

export function compareScalars(a: Scalar, b: Scalar): number {
  const rank = typeRank(a) - typeRank(b);
  if (rank !== 0) return rank;
  if (a === null || b === null || a === b) return 0;
  return a < b ? -1 : 1;
}

/** Group rows in ascending group order, so that callers see the same order from every adapter. */
export function sortAggregateRows(rows: AggregateRow[]): AggregateRow[] {
  return rows.sort((a, b) => compareScalars(a.group, b.group));
}

/** The single row an ungrouped aggregate returns over an empty set. */
export function emptyAggregateRow(sum: string[], min: string[], max: string[]): AggregateRow {
  return {
    group: null,
    count: 0,
    sum: Object.fromEntries(sum.map((f) => [f, 0])),
    min: Object.fromEntries(min.map((f) => [f, null])),
    max: Object.fromEntries(max.map((f) => [f, null])),
  };
}
