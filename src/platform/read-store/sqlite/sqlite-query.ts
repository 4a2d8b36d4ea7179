/**
 * Translates read-store filters, sorts and keysets to parameterised SQLite, for either layout of
 * a collection (sqlite-layout.ts).
 *
 * JSON fields are read as `json_extract(doc, '$.field')`, the very expression the declared
 * indexes are built on, so the planner can use them. json_extract turns true/false into 1/0, so
 * booleans (and the numbers 0 and 1 where booleans could be confused with them) are told apart
 * with json_type. Ranges keep to one type, like MongoDB's type bracketing: SQLite orders every
 * number before every text, and '' is the smallest text.
 *
 * Typed columns hold one type each, so a value of another type matches nothing (or, for `ne`,
 * everything). Timestamps are compared as the strings the documents hold: a bound is turned into
 * the first millisecond whose RFC 3339 string passes it, which for canonical bounds is the bound's
 * own instant.
 */
import type { ColumnType, FieldCondition, Filter, FindQuery, Scalar, SortDirection } from '../read-store.port.js';
import { canonicalTimestampMs, integerIdValue } from '../read-store-rules.js';
import type { CollectionLayout, FieldRef } from './sqlite-layout.js';

export type SqlParam = string | number | null;

export interface SqlFragment {
  sql: string;
  params: SqlParam[];
}

const TRUE: SqlFragment = { sql: '1', params: [] };
const FALSE: SqlFragment = { sql: '0', params: [] };

function isTyped(ref: FieldRef): ref is FieldRef & { kind: ColumnType | 'integer_id' } {
  return ref.kind !== 'json' && ref.kind !== 'id';
}

/** The expression a sort orders by: ids sort as strings, also where the table keeps them as integers. */
function sortExpr(ref: FieldRef): string {
  return ref.kind === 'integer_id' ? 'CAST(id AS TEXT)' : ref.expr;
}

function jsonTypeExpr(ref: FieldRef): string {
  return `json_type(${ref.doc}, '$.${ref.field}')`;
}

/** Binds a scalar the way json_extract reports it (booleans as 1/0). */
export function sqlValue(value: Scalar): SqlParam {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

function isBooleanLike(value: Scalar): boolean {
  return value === 0 || value === 1;
}

function isBoolean(ref: FieldRef): string {
  return `${jsonTypeExpr(ref)} IN ('true', 'false')`;
}

// ---- typed columns ----

const NO_MATCH = Symbol('no match');

/** The stored form of a document value equal to `value`, or NO_MATCH when the column cannot hold one. */
function encode(kind: ColumnType | 'integer_id', value: Exclude<Scalar, null>): number | string | typeof NO_MATCH {
  switch (kind) {
    case 'integer':
    case 'real':
      return typeof value === 'number' ? value : NO_MATCH;
    case 'text':
      return typeof value === 'string' ? value : NO_MATCH;
    case 'boolean':
      return typeof value === 'boolean' ? (value ? 1 : 0) : NO_MATCH;
    case 'timestamp':
      return canonicalTimestampMs(value) ?? NO_MATCH;
    case 'integer_id':
      return typeof value === 'string' ? (integerIdValue(value) ?? NO_MATCH) : NO_MATCH;
  }
}

/** Rank of the column's values in the shared order: numbers 1, strings 2, booleans 3. */
function columnRank(kind: ColumnType | 'integer_id'): number {
  return kind === 'integer' || kind === 'real' ? 1 : kind === 'boolean' ? 3 : 2;
}

function valueRank(value: Scalar): number {
  if (value === null) return 0;
  return typeof value === 'number' ? 1 : typeof value === 'string' ? 2 : 3;
}

const MIN_TIMESTAMP_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const MAX_TIMESTAMP_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/** The first millisecond whose timestamp string is >= `bound` (> when strict); null when none is. */
function firstTimestampFrom(bound: string, strict: boolean): number | null {
  const exact = canonicalTimestampMs(bound);
  if (exact !== null) return strict ? (exact < MAX_TIMESTAMP_MS ? exact + 1 : null) : exact;
  let low = MIN_TIMESTAMP_MS;
  let high = MAX_TIMESTAMP_MS + 1;
  while (low < high) {
    const middle = Math.floor((low + high) / 2);
    const text = new Date(middle).toISOString();
    if (strict ? text > bound : text >= bound) high = middle;
    else low = middle + 1;
  }
  return low > MAX_TIMESTAMP_MS ? null : low;
}

function typedEq(ref: FieldRef & { kind: ColumnType | 'integer_id' }, value: Scalar): SqlFragment {
  if (value === null) return { sql: `${ref.expr} IS NULL`, params: [] };
  const stored = encode(ref.kind, value);
  return stored === NO_MATCH ? FALSE : { sql: `${ref.expr} = ?`, params: [stored] };
}

function typedRange(ref: FieldRef & { kind: ColumnType | 'integer_id' }, op: RangeOp, value: Exclude<Scalar, null>): SqlFragment {
  if (valueRank(value) !== columnRank(ref.kind)) return FALSE;
  if (ref.kind === 'integer_id') return { sql: `CAST(id AS TEXT) ${RANGE_SQL[op]} ?`, params: [value as string] };
  if (ref.kind !== 'timestamp') return { sql: `${ref.expr} ${RANGE_SQL[op]} ?`, params: [encode(ref.kind, value) as number | string] };
  // s >= b  <=>  ms >= first(b);  s > b  <=>  ms >= first(b, strict);  s < b  <=>  ms < first(b); ...
  const first = firstTimestampFrom(value as string, op === 'gt' || op === 'lte');
  if (op === 'gt' || op === 'gte') return first === null ? FALSE : { sql: `${ref.expr} >= ?`, params: [first] };
  return first === null ? { sql: `${ref.expr} IS NOT NULL`, params: [] } : { sql: `${ref.expr} < ?`, params: [first] };
}

// ---- clauses ----

function eqClause(ref: FieldRef, value: Scalar): SqlFragment {
  if (isTyped(ref)) return typedEq(ref, value);
  const e = ref.expr;
  if (value === null) return { sql: `${e} IS NULL`, params: [] };
  if (typeof value === 'boolean') {
    if (ref.kind === 'id') return FALSE;
    return { sql: `(${e} = ${value ? 1 : 0} AND ${jsonTypeExpr(ref)} = '${value}')`, params: [] };
  }
  if (ref.kind !== 'id' && isBooleanLike(value)) {
    return { sql: `(${e} = ? AND NOT ${isBoolean(ref)})`, params: [value] };
  }
  return { sql: `${e} = ?`, params: [value] };
}

function neClause(ref: FieldRef, value: Scalar): SqlFragment {
  if (value === null) return { sql: `${ref.expr} IS NOT NULL`, params: [] };
  if (isTyped(ref)) {
    const stored = encode(ref.kind, value);
    return stored === NO_MATCH ? TRUE : { sql: `${ref.expr} IS NOT ?`, params: [stored] };
  }
  // = ... AND ...: rewrite so that a missing field counts as "not equal".
  const eq = eqClause(ref, value);
  return { sql: `NOT coalesce(${eq.sql}, 0)`, params: eq.params };
}

function inClause(ref: FieldRef, values: Scalar[]): SqlFragment {
  if (values.length === 0) return FALSE;
  if (isTyped(ref)) return or(values.map((v) => typedEq(ref, v)).filter((part) => part !== FALSE));
  const plain = values.filter((v) => v !== null && typeof v !== 'boolean' && (ref.kind === 'id' || !isBooleanLike(v)));
  const special = values.filter((v) => !plain.includes(v));
  const parts: SqlFragment[] = special.map((v) => eqClause(ref, v));
  if (plain.length > 0) {
    parts.unshift({ sql: `${ref.expr} IN (${plain.map(() => '?').join(', ')})`, params: plain as SqlParam[] });
  }
  return or(parts);
}

type RangeOp = 'gt' | 'gte' | 'lt' | 'lte';
const RANGE_SQL: Record<RangeOp, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function satisfies(op: RangeOp, x: number, bound: number): boolean {
  return op === 'gt' ? x > bound : op === 'gte' ? x >= bound : op === 'lt' ? x < bound : x <= bound;
}

function rangeClause(ref: FieldRef, op: RangeOp, value: Scalar): SqlFragment {
  const e = ref.expr;
  if (value === null) return op === 'gte' || op === 'lte' ? { sql: `${e} IS NULL`, params: [] } : FALSE;
  if (isTyped(ref)) return typedRange(ref, op, value);
  const cmp = `${e} ${RANGE_SQL[op]} ?`;
  if (typeof value === 'boolean') {
    if (ref.kind === 'id') return FALSE;
    return { sql: `(${cmp} AND ${isBoolean(ref)})`, params: [sqlValue(value)] };
  }
  if (typeof value === 'string') {
    const upward = op === 'gt' || op === 'gte';
    return { sql: upward ? cmp : `(${cmp} AND ${e} >= '')`, params: [value] };
  }
  const mayMatchBoolean = ref.kind !== 'id' && (satisfies(op, 0, value) || satisfies(op, 1, value));
  const guard = mayMatchBoolean ? ` AND NOT ${isBoolean(ref)}` : '';
  return { sql: `(${cmp} AND ${e} < ''${guard})`, params: [value] };
}

function hasClause(ref: FieldRef, value: Scalar): SqlFragment {
  // Ids and typed columns hold scalars, never arrays.
  if (ref.kind !== 'json') return FALSE;
  const each = `SELECT 1 FROM json_each(${ref.doc}, '$.${ref.field}') AS el WHERE`;
  const array = `${jsonTypeExpr(ref)} = 'array'`;
  if (value === null) return { sql: `(${array} AND EXISTS (${each} el.type = 'null'))`, params: [] };
  if (typeof value === 'boolean') return { sql: `(${array} AND EXISTS (${each} el.type = '${value}'))`, params: [] };
  const type = typeof value === 'string' ? `el.type = 'text'` : `el.type IN ('integer', 'real')`;
  return { sql: `(${array} AND EXISTS (${each} el.value = ? AND ${type}))`, params: [value] };
}

function isCondition(value: Scalar | FieldCondition): value is FieldCondition {
  return value !== null && typeof value === 'object';
}

function conditionClauses(ref: FieldRef, cond: FieldCondition): SqlFragment[] {
  const parts: SqlFragment[] = [];
  if (cond.eq !== undefined) parts.push(eqClause(ref, cond.eq));
  if (cond.ne !== undefined) parts.push(neClause(ref, cond.ne));
  if (cond.in !== undefined) parts.push(inClause(ref, cond.in));
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    if (cond[op] !== undefined) parts.push(rangeClause(ref, op, cond[op] as Scalar));
  }
  if (cond.has !== undefined) parts.push(hasClause(ref, cond.has));
  return parts;
}

export function filterClause(layout: CollectionLayout, filter: Filter | undefined): SqlFragment {
  const parts: SqlFragment[] = [];
  for (const [field, value] of Object.entries(filter ?? {})) {
    if (value === undefined) continue;
    const ref = layout.field(field);
    parts.push(...(isCondition(value) ? conditionClauses(ref, value) : [eqClause(ref, value)]));
  }
  return and(parts);
}

export function and(parts: SqlFragment[]): SqlFragment {
  if (parts.length === 0) return TRUE;
  if (parts.length === 1) return parts[0];
  return { sql: parts.map((p) => `(${p.sql})`).join(' AND '), params: parts.flatMap((p) => p.params) };
}

function or(parts: SqlFragment[]): SqlFragment {
  if (parts.length === 0) return FALSE;
  if (parts.length === 1) return parts[0];
  return { sql: parts.map((p) => `(${p.sql})`).join(' OR '), params: parts.flatMap((p) => p.params) };
}

export type SortSpec = Array<[field: string, direction: SortDirection]>;

export function effectiveSort(query: FindQuery): SortSpec {
  return query.sort && query.sort.length > 0 ? query.sort : [['id', 'asc']];
}

function orderByClause(layout: CollectionLayout, sort: SortSpec): string {
  return sort.map(([field, dir]) => `${sortExpr(layout.field(field))} ${dir === 'desc' ? 'DESC' : 'ASC'}`).join(', ');
}

/** Rows strictly after `value` on one sort field; nulls sort lowest (first ascending, last descending). */
function strictlyAfter(ref: FieldRef, dir: SortDirection, value: Scalar): SqlFragment {
  const e = ref.expr;
  if (value === null) return dir === 'asc' ? { sql: `${e} IS NOT NULL`, params: [] } : FALSE;
  if (isTyped(ref)) {
    // The shared order ranks types (null, numbers, strings, booleans); a column holds one.
    const rank = valueRank(value) - columnRank(ref.kind);
    if (dir === 'asc') return rank < 0 ? { sql: `${e} IS NOT NULL`, params: [] } : rank > 0 ? FALSE : typedRange(ref, 'gt', value);
    if (rank > 0) return TRUE;
    if (rank < 0) return { sql: `${e} IS NULL`, params: [] };
    return or([typedRange(ref, 'lt', value), { sql: `${e} IS NULL`, params: [] }]);
  }
  if (dir === 'asc') return { sql: `${e} > ?`, params: [sqlValue(value)] };
  return { sql: `(${e} < ? OR ${e} IS NULL)`, params: [sqlValue(value)] };
}

function sameAs(ref: FieldRef, value: Scalar): SqlFragment {
  if (isTyped(ref)) return typedEq(ref, value);
  return { sql: `${ref.expr} IS ?`, params: [sqlValue(value)] };
}

/** Where the index scan of a keyset starts: the lead field at or past `value` (nulls excluded). */
function leadBound(ref: FieldRef, dir: SortDirection, value: Exclude<Scalar, null>): SqlFragment {
  if (isTyped(ref)) {
    const rank = valueRank(value) - columnRank(ref.kind);
    if (rank === 0) return typedRange(ref, dir === 'asc' ? 'gte' : 'lte', value);
    const everyValue = dir === 'asc' ? rank < 0 : rank > 0;
    return everyValue ? { sql: `${ref.expr} IS NOT NULL`, params: [] } : FALSE;
  }
  return { sql: `${ref.expr} ${dir === 'asc' ? '>=' : '<='} ?`, params: [sqlValue(value)] };
}

/** The value an equality in the filter fixes `field` to, if any. */
function pinnedValue(filter: Filter | undefined, field: string): { value: Scalar } | null {
  const raw = filter?.[field];
  if (raw === undefined) return null;
  if (!isCondition(raw)) return { value: raw };
  return raw.eq !== undefined ? { value: raw.eq } : null;
}

export interface FindPlan {
  orderBy: string;
  /** Keyset condition; FALSE when no row can follow `after`. */
  keyset: SqlFragment;
  /** Rows that come after every row `keyset` matches (nulls of a descending first field). */
  nullTail: SqlFragment | null;
}

/**
 * Sort fields an equality filter fixes are dropped (every matching row shares the value): SQLite
 * otherwise sorts in a temp b-tree instead of reading the index in order. The keyset is
 * `(f1 after v1) OR (f1 = v1 AND f2 after v2) OR ...`, preceded by a range on the first field so
 * that the index scan starts at the keyset. For a descending first field the nulls (which sort
 * last) are left to a second query, `nullTail`, as `f1 <= v OR f1 IS NULL` could not use a range.
 */
export function planFind(layout: CollectionLayout, query: FindQuery): FindPlan {
  const sort = effectiveSort(query);
  const after = query.after;
  if (after && after.length !== sort.length) throw new Error('`after` needs one value per sort field');
  const kept: Array<{ ref: FieldRef; dir: SortDirection; value: Scalar }> = [];
  sort.forEach(([field, dir], i) => {
    const pinned = pinnedValue(query.filter, field);
    if (pinned && (!after || after[i] === pinned.value)) return;
    kept.push({ ref: layout.field(field), dir, value: after ? after[i] : null });
  });
  const orderBy = orderByClause(layout, kept.length > 0 ? kept.map((k) => [k.ref.field, k.dir]) : [['id', 'asc']]);
  if (!after) return { orderBy, keyset: TRUE, nullTail: null };
  if (kept.length === 0) return { orderBy, keyset: FALSE, nullTail: null };
  const branches = kept.map(({ ref, dir, value }, i) =>
    and([...kept.slice(0, i).map((k) => sameAs(k.ref, k.value)), strictlyAfter(ref, dir, value)]),
  );
  const lead = kept[0];
  if (lead.value === null) return { orderBy, keyset: or(branches), nullTail: null };
  const keyset = and([leadBound(lead.ref, lead.dir, lead.value), or(branches)]);
  return { orderBy, keyset, nullTail: lead.dir === 'desc' ? { sql: `${lead.ref.expr} IS NULL`, params: [] } : null };
}

/** An aggregate's input: numbers only (booleans, strings and ids are never summed). */
export function numericExpr(ref: FieldRef): string {
  if (ref.kind === 'integer' || ref.kind === 'real') return ref.expr;
  if (ref.kind === 'id') return `CASE WHEN typeof(id) IN ('integer', 'real') THEN id END`;
  if (ref.kind !== 'json') return 'NULL';
  return `CASE WHEN ${jsonTypeExpr(ref)} IN ('integer', 'real') THEN ${ref.expr} END`;
}

/** The group key of an aggregate: the value, and a second key keeping true/false apart from the numbers 1/0. */
export function groupExprs(ref: FieldRef): { value: string; kind: string } {
  if (ref.kind === 'json') return { value: ref.expr, kind: `CASE ${jsonTypeExpr(ref)} WHEN 'true' THEN 'b' WHEN 'false' THEN 'b' ELSE '' END` };
  if (ref.kind === 'boolean') return { value: ref.expr, kind: `CASE WHEN ${ref.expr} IS NULL THEN '' ELSE 'b' END` };
  return { value: sortExpr(ref), kind: `''` };
}

/** A group key as read back from `groupExprs`. */
export function groupValue(ref: FieldRef, value: unknown, kind: unknown): Scalar {
  if (value === null || value === undefined) return null;
  if (kind === 'b') return value === 1;
  if (ref.kind === 'timestamp') return new Date(value as number).toISOString();
  return value as Scalar;
}
