/**
 * Rules both read-store adapters share, so that they agree on names, errors and result order.
 */
import type { AggregateRow, ColumnType, Doc, Filter, RangesAggregateQuery, Scalar } from './read-store.port.js';

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

/**
 * `aggregateRanges` with `prefixes`, spelled out: every prefix's ranges as whole ranges, prefix
 * after prefix (prefix i owns ranges i * ranges.length to (i + 1) * ranges.length - 1), for a
 * store that sums them one by one and then folds the rows with `rowsPerPrefix`.
 */
export function prefixedRanges(query: RangesAggregateQuery & { prefixes: string[] }): Array<{ gte: string; lt: string }> {
  assertPrefixedRanges(query);
  const ranges: Array<{ gte: string; lt: string }> = [];
  for (const prefix of query.prefixes) for (const range of query.ranges) ranges.push({ gte: prefix + (range.gte as string), lt: prefix + (range.lt as string) });
  return ranges;
}

/** With prefixes, every bound is a string suffix and every prefix a string, and no range has a filter of its own. */
export function assertPrefixedRanges(query: RangesAggregateQuery & { prefixes: string[] }): void {
  if (query.prefixes.some((p) => typeof p !== 'string') || query.ranges.some((r) => typeof r.gte !== 'string' || typeof r.lt !== 'string')) {
    throw new Error('aggregateRanges with prefixes takes string prefixes and string range bounds');
  }
  if (query.ranges.some((r) => r.filter !== undefined)) throw new Error('aggregateRanges with prefixes takes no filter per range');
}

/** The whole filter of one of `aggregateRanges`' ranges: the query's, the range's own, and its bounds on `field`. */
export function rangeFilter(query: RangesAggregateQuery, range: RangesAggregateQuery['ranges'][number]): Filter {
  for (const field of Object.keys(range.filter ?? {})) {
    if (field === query.field || (query.filter !== undefined && field in query.filter)) {
      throw new Error(`aggregateRanges: a range's filter names ${field}, which the query's field or filter already names`);
    }
  }
  return { ...query.filter, ...range.filter, [query.field]: { gte: range.gte, lt: range.lt } };
}

/** Rows of `prefixedRanges`' ranges (in their order) folded into one row per prefix. */
export function rowsPerPrefix(rows: AggregateRow[], query: RangesAggregateQuery & { prefixes: string[] }): AggregateRow[] {
  const { sum = [], min = [], max = [] } = query;
  const per = query.ranges.length;
  return query.prefixes.map((_, i) => {
    const out = { ...emptyAggregateRow(sum, min, max), group: i };
    for (let r = i * per; r < (i + 1) * per; r++) {
      const row = rows[r];
      out.count += row.count;
      for (const f of sum) out.sum[f] += row.sum[f];
      for (const f of min) if (row.min[f] !== null && (out.min[f] === null || row.min[f]! < out.min[f]!)) out.min[f] = row.min[f];
      for (const f of max) if (row.max[f] !== null && (out.max[f] === null || row.max[f]! > out.max[f]!)) out.max[f] = row.max[f];
    }
    return out;
  });
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

/** The RFC 3339 form a `timestamp` column holds: `new Date(ms).toISOString()` for years 0000-9999. */
const CANONICAL_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Epoch milliseconds of a canonical timestamp string, or null for any other value. */
export function canonicalTimestampMs(value: unknown): number | null {
  if (typeof value !== 'string' || !CANONICAL_TIMESTAMP.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isFinite(ms) && new Date(ms).toISOString() === value ? ms : null;
}

/** The integer a canonical decimal id (`"42"`, `"-7"`, `"0"`) stands for, or null. */
export function integerIdValue(id: string): number | null {
  if (!/^(0|-?[1-9]\d{0,15})$/.test(id)) return null;
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : null;
}

const COLUMN_TYPES: ReadonlySet<string> = new Set<ColumnType>(['integer', 'real', 'text', 'boolean', 'timestamp']);

/**
 * Declared columns must be top-level fields of a known type; `id` may only be declared `integer` or
 * `text`. An id field (`CollectionSpec.idField`) needs `id` and itself declared `integer`.
 */
export function assertColumns(columns: Record<string, ColumnType> | undefined, idField?: string): void {
  for (const [field, type] of Object.entries(columns ?? {})) {
    assertFieldName(field);
    if (!COLUMN_TYPES.has(type)) throw new Error(`Column ${field}: unknown type "${type}"`);
    if (field === 'id' && type !== 'integer' && type !== 'text') throw new Error('Column id: only integer or text');
  }
  if (idField !== undefined && (idField === 'id' || columns?.id !== 'integer' || columns?.[idField] !== 'integer')) {
    throw new Error(`Id field ${idField}: needs columns declaring id and ${idField} integer`);
  }
}

/** Whether `value` (present, not null) fits a column of `type`. */
export function fitsColumn(type: ColumnType, value: unknown): boolean {
  switch (type) {
    case 'integer':
      return Number.isSafeInteger(value);
    case 'real':
      return typeof value === 'number' && Number.isFinite(value);
    case 'text':
      return typeof value === 'string';
    case 'boolean':
      return typeof value === 'boolean';
    case 'timestamp':
      return canonicalTimestampMs(value) !== null;
  }
}

/**
 * Every adapter (and the in-memory test store) refuses a document whose declared field holds
 * another type, so a projection's mistake shows in its unit tests, not as a lost field in
 * production. A declared field may be null or missing. With an id field, the id must be its
 * decimal string.
 */
export function assertDeclaredTypes(collection: string, doc: Doc, columns: Record<string, ColumnType> | undefined, idField?: string): void {
  if (!columns) return;
  if (idField !== undefined && String(doc[idField]) !== doc.id) {
    throw new Error(`${collection}/${doc.id}: the id is the decimal string of ${idField}, which is ${JSON.stringify(doc[idField])}`);
  }
  // for...in, not Object.entries: this runs for every written document of every view commit,
  // and an entries array per document was a view commit's largest allocation.
  for (const field in columns) {
    const type = columns[field];
    const value = field === 'id' ? (type === 'integer' ? integerIdValue(doc.id) : doc.id) : doc[field];
    if (value === undefined || value === null) {
      if (field === 'id') throw new Error(`${collection}/${doc.id}: the id is declared integer, expected a decimal integer string`);
      continue;
    }
    if (field !== 'id' && !fitsColumn(type, value)) {
      const expected = type === 'timestamp' ? 'a timestamp (new Date(ms).toISOString())' : type === 'integer' ? 'a safe integer' : `a ${type}`;
      throw new Error(`${collection}/${doc.id}: field ${field} is declared ${type}, expected ${expected}, got ${JSON.stringify(value)}`);
    }
  }
}

/** `FindQuery.fields`: the document with only `id` and the fields listed (those it has). */
export function pickFields(doc: Doc, fields: readonly string[]): Doc {
  const picked: Doc = { id: doc.id };
  for (const field of fields) if (field !== 'id' && Object.prototype.hasOwnProperty.call(doc, field)) picked[field] = doc[field];
  return picked;
}
