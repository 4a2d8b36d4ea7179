import type { Doc, FieldCondition, Filter, Scalar, SortDirection } from '../read-store/read-store.port.js';
import { compareScalars as compareStoredScalars } from '../read-store/read-store-rules.js';

/**
 * In-memory evaluation of read-store filters and sorts, with the same semantics as the adapters
 * (null matches missing, nulls sort lowest, then numbers, strings, booleans: the adapters' shared
 * order). Used to overlay a batch's pending writes on reads, and by the in-memory test store.
 */

/** The adapters' order; a missing field counts as null. */
function compareScalars(a: unknown, b: unknown): number {
  return compareStoredScalars((a ?? null) as Scalar, (b ?? null) as Scalar);
}

function isCondition(value: unknown): value is FieldCondition {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export { compareScalars };

function matchesCondition(value: unknown, condition: FieldCondition): boolean {
  const v = value ?? null;
  if ('eq' in condition && compareScalars(v, condition.eq) !== 0) return false;
  if ('ne' in condition && compareScalars(v, condition.ne) === 0) return false;
  if (condition.in && !condition.in.some((item) => compareScalars(v, item) === 0)) return false;
  const ranged = (bound: Scalar | undefined, test: (c: number) => boolean) =>
    bound === undefined || (v !== null && test(compareScalars(v, bound)));
  if (!ranged(condition.gt, (c) => c > 0)) return false;
  if (!ranged(condition.gte, (c) => c >= 0)) return false;
  if (!ranged(condition.lt, (c) => c < 0)) return false;
  if (!ranged(condition.lte, (c) => c <= 0)) return false;
  if (condition.has !== undefined && !(Array.isArray(v) && v.some((item) => compareScalars(item, condition.has) === 0))) {
    return false;
  }
  return true;
}

export function matchesFilter(doc: Doc, filter: Filter | undefined): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, expected]) =>
    isCondition(expected) ? matchesCondition(doc[field], expected) : compareScalars(doc[field], expected) === 0,
  );
}

export function compareBySort(a: Doc, b: Doc, sort: Array<[string, SortDirection]>): number {
  for (const [field, direction] of sort) {
    const order = compareScalars(a[field], b[field]);
    if (order !== 0) return direction === 'asc' ? order : -order;
  }
  return 0;
}

/** True when `doc` comes strictly after the keyset position `after` in `sort` order. */
export function isAfterKeyset(doc: Doc, sort: Array<[string, SortDirection]>, after: Scalar[]): boolean {
  for (let i = 0; i < sort.length; i++) {
    const [field, direction] = sort[i];
    const order = compareScalars(doc[field], after[i]);
    if (order !== 0) return direction === 'asc' ? order > 0 : order < 0;
  }
  return false;
}
