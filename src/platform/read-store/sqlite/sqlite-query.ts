/**
 * Translates read-store filters, sorts and keysets to parameterised SQLite over JSONB documents.
 *
 * Every non-id field is read as `json_extract(doc, '$.field')`, the very expression the declared
 * indexes are built on, so the planner can use them. json_extract turns true/false into 1/0, so
 * booleans (and the numbers 0 and 1 where booleans could be confused with them) are told apart
 * with json_type. Ranges keep to one type, like MongoDB's type bracketing: SQLite orders every
 * number before every text, and '' is the smallest text.
 */
import type { FieldCondition, Filter, FindQuery, Scalar, SortDirection } from '../read-store.port.js';
import { assertFieldName } from '../read-store-rules.js';

export type SqlParam = string | number | null;

export interface SqlFragment {
  sql: string;
  params: SqlParam[];
}

const TRUE: SqlFragment = { sql: '1', params: [] };
const FALSE: SqlFragment = { sql: '0', params: [] };

export function fieldExpr(field: string): string {
  assertFieldName(field);
  return field === 'id' ? 'id' : `json_extract(doc, '$.${field}')`;
}

function jsonTypeExpr(field: string): string {
  return `json_type(doc, '$.${field}')`;
}

/** Binds a scalar the way json_extract reports it (booleans as 1/0). */
export function sqlValue(value: Scalar): SqlParam {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

function isBooleanLike(value: Scalar): boolean {
  return value === 0 || value === 1;
}

function isBoolean(field: string): string {
  return `${jsonTypeExpr(field)} IN ('true', 'false')`;
}

function eqClause(field: string, value: Scalar): SqlFragment {
  const e = fieldExpr(field);
  if (value === null) return { sql: `${e} IS NULL`, params: [] };
  if (typeof value === 'boolean') {
    if (field === 'id') return FALSE;
    return { sql: `(${e} = ${value ? 1 : 0} AND ${jsonTypeExpr(field)} = '${value}')`, params: [] };
  }
  if (field !== 'id' && isBooleanLike(value)) {
    return { sql: `(${e} = ? AND NOT ${isBoolean(field)})`, params: [value] };
  }
  return { sql: `${e} = ?`, params: [value] };
}

function neClause(field: string, value: Scalar): SqlFragment {
  const eq = eqClause(field, value);
  // IS NULL / = ... AND ...: rewrite so that a missing field counts as "not equal".
  if (value === null) return { sql: `${fieldExpr(field)} IS NOT NULL`, params: [] };
  return { sql: `NOT coalesce(${eq.sql}, 0)`, params: eq.params };
}

function inClause(field: string, values: Scalar[]): SqlFragment {
  if (values.length === 0) return FALSE;
  const plain = values.filter((v) => v !== null && typeof v !== 'boolean' && (field === 'id' || !isBooleanLike(v)));
  const special = values.filter((v) => !plain.includes(v));
  const parts: SqlFragment[] = special.map((v) => eqClause(field, v));
  if (plain.length > 0) {
    parts.unshift({ sql: `${fieldExpr(field)} IN (${plain.map(() => '?').join(', ')})`, params: plain as SqlParam[] });
  }
  return or(parts);
}

type RangeOp = 'gt' | 'gte' | 'lt' | 'lte';
const RANGE_SQL: Record<RangeOp, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function satisfies(op: RangeOp, x: number, bound: number): boolean {
  return op === 'gt' ? x > bound : op === 'gte' ? x >= bound : op === 'lt' ? x < bound : x <= bound;
}

function rangeClause(field: string, op: RangeOp, value: Scalar): SqlFragment {
  const e = fieldExpr(field);
  if (value === null) return op === 'gte' || op === 'lte' ? { sql: `${e} IS NULL`, params: [] } : FALSE;
  const cmp = `${e} ${RANGE_SQL[op]} ?`;
  if (typeof value === 'boolean') {
    if (field === 'id') return FALSE;
    return { sql: `(${cmp} AND ${isBoolean(field)})`, params: [sqlValue(value)] };
  }
  if (typeof value === 'string') {
    const upward = op === 'gt' || op === 'gte';
    return { sql: upward ? cmp : `(${cmp} AND ${e} >= '')`, params: [value] };
  }
  const mayMatchBoolean = field !== 'id' && (satisfies(op, 0, value) || satisfies(op, 1, value));
  const guard = mayMatchBoolean ? ` AND NOT ${isBoolean(field)}` : '';
  return { sql: `(${cmp} AND ${e} < ''${guard})`, params: [value] };
}

function hasClause(field: string, value: Scalar): SqlFragment {
  if (field === 'id') return FALSE;
  fieldExpr(field);
  const each = `SELECT 1 FROM json_each(doc, '$.${field}') AS el WHERE`;
  const array = `${jsonTypeExpr(field)} = 'array'`;
  if (value === null) return { sql: `(${array} AND EXISTS (${each} el.type = 'null'))`, params: [] };
  if (typeof value === 'boolean') return { sql: `(${array} AND EXISTS (${each} el.type = '${value}'))`, params: [] };
  const type = typeof value === 'string' ? `el.type = 'text'` : `el.type IN ('integer', 'real')`;
  return { sql: `(${array} AND EXISTS (${each} el.value = ? AND ${type}))`, params: [value] };
}

function isCondition(value: Scalar | FieldCondition): value is FieldCondition {
  return value !== null && typeof value === 'object';
}

function conditionClauses(field: string, cond: FieldCondition): SqlFragment[] {
  const parts: SqlFragment[] = [];
  if (cond.eq !== undefined) parts.push(eqClause(field, cond.eq));
  if (cond.ne !== undefined) parts.push(neClause(field, cond.ne));
  if (cond.in !== undefined) parts.push(inClause(field, cond.in));
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    if (cond[op] !== undefined) parts.push(rangeClause(field, op, cond[op] as Scalar));
  }
  if (cond.has !== undefined) parts.push(hasClause(field, cond.has));
  return parts;
}

export function filterClause(filter: Filter | undefined): SqlFragment {
  const parts: SqlFragment[] = [];
  for (const [field, value] of Object.entries(filter ?? {})) {
    if (value === undefined) continue;
    parts.push(...(isCondition(value) ? conditionClauses(field, value) : [eqClause(field, value)]));
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

export function orderByClause(sort: SortSpec): string {
  return sort.map(([field, dir]) => `${fieldExpr(field)} ${dir === 'desc' ? 'DESC' : 'ASC'}`).join(', ');
}

/** Rows strictly after `value` on one sort field; nulls sort lowest (first ascending, last descending). */
function strictlyAfter(field: string, dir: SortDirection, value: Scalar): SqlFragment {
  const e = fieldExpr(field);
  if (value === null) return dir === 'asc' ? { sql: `${e} IS NOT NULL`, params: [] } : FALSE;
  if (dir === 'asc') return { sql: `${e} > ?`, params: [sqlValue(value)] };
  return { sql: `(${e} < ? OR ${e} IS NULL)`, params: [sqlValue(value)] };
}

function sameAs(field: string, value: Scalar): SqlFragment {
  return { sql: `${fieldExpr(field)} IS ?`, params: [sqlValue(value)] };
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
export function planFind(query: FindQuery): FindPlan {
  const sort = effectiveSort(query);
  const after = query.after;
  if (after && after.length !== sort.length) throw new Error('`after` needs one value per sort field');
  const kept: Array<{ field: string; dir: SortDirection; value: Scalar }> = [];
  sort.forEach(([field, dir], i) => {
    const pinned = pinnedValue(query.filter, field);
    if (pinned && (!after || after[i] === pinned.value)) return;
    kept.push({ field, dir, value: after ? after[i] : null });
  });
  const orderBy = kept.length > 0 ? orderByClause(kept.map((k) => [k.field, k.dir])) : 'id';
  if (!after) return { orderBy, keyset: TRUE, nullTail: null };
  if (kept.length === 0) return { orderBy, keyset: FALSE, nullTail: null };
  const branches = kept.map(({ field, dir, value }, i) =>
    and([...kept.slice(0, i).map((k) => sameAs(k.field, k.value)), strictlyAfter(field, dir, value)]),
  );
  const lead = kept[0];
  if (lead.value === null) return { orderBy, keyset: or(branches), nullTail: null };
  const e = fieldExpr(lead.field);
  const op = lead.dir === 'asc' ? '>=' : '<=';
  const keyset = and([{ sql: `${e} ${op} ?`, params: [sqlValue(lead.value)] }, or(branches)]);
  return { orderBy, keyset, nullTail: lead.dir === 'desc' ? { sql: `${e} IS NULL`, params: [] } : null };
}
