import { isApplicable, type CheckRecordedData } from '../../monitoring/domain/check.js';
import { addAccumulator, addCheck, emptyAccumulator, type Accumulator } from './aggregate.js';
import { floorTo, GRANULARITY_MS, type Granularity } from './range-plan.js';
import type { ColumnType } from '../../platform/read-store/read-store.port.js';

/**
 * The two analytics views, written by projections/analytics-rollups.ts and read by the query
 * service. Both hold APPLICABLE checks only (scheduled, unsuppressed).
 *
 * Rollups exist per endpoint and per team only. A project's figures are those of the endpoints
 * it holds now (docs/decisions.md, "Analytics"): they are summed from the endpoint rollups at
 * query time, so moving an endpoint moves its checks with it and no project rollup can disagree
 * with the project's endpoint rows.
 */
export const ROLLUPS_PROJECTION = 'analytics_rollups';
export const ROLLUPS_COLLECTION = 'analytics_rollups';
export const RAW_CHECKS_COLLECTION = 'analytics_checks';

/** The scopes of the analytics routes. */
export type AnalyticsScopeKind = 'endpoint' | 'project' | 'team';

/** The scopes that have their own rollups and raw-row indexes. */
export type RollupScopeKind = 'endpoint' | 'team';

export const ROLLUP_SCOPE_KINDS: RollupScopeKind[] = ['endpoint', 'team'];
export const GRANULARITIES: Granularity[] = ['minute', 'hour', 'day'];

/** Which field of a raw check row names the scope's id. */
export const SCOPE_FIELD: Readonly<Record<RollupScopeKind, 'endpoint_id' | 'team_id'>> = {
  endpoint: 'endpoint_id',
  team: 'team_id',
};

/**
 * One aligned period of one scope. Which period is named by the row's id alone (`rollupId`):
 * hour and day rows stay for ever (retention keeps them past the horizon), so a row holds its
 * sums and nothing else, is read and written by id only, and needs no secondary index.
 */
export interface RollupKey {
  id: string;
  scope: RollupScopeKind;
  scope_id: number;
  granularity: Granularity;
  /** Period start, epoch seconds (UTC-aligned to the granularity). */
  start: number;
}

/** A stored rollup row: the sums of one period's applicable checks. */
export interface RollupRow extends Accumulator {
  id: string;
}

/** Typed columns of the rollup rows (a compact-storage hint to the read store). */
export const ROLLUP_COLUMNS = {
  checks: 'integer',
  failures: 'integer',
  latency_sum: 'integer',
  latency_min: 'integer',
  latency_max: 'integer',
} as const satisfies Record<Exclude<keyof RollupRow, 'id'>, ColumnType>;

/** One applicable check, kept for sub-minute range edges and for p95. */
export interface RawCheckRow {
  id: string;
  check_id: number;
  team_id: number;
  endpoint_id: number;
  /** Epoch milliseconds of `checked_at`. */
  checked_at_ms: number;
  /** Start of the check's minute, epoch seconds: lets edge queries fetch whole minutes by key. */
  minute: number;
  success: boolean;
  latency_ms: number;
}

export const RAW_CHECK_COLUMNS = {
  check_id: 'integer',
  team_id: 'integer',
  endpoint_id: 'integer',
  checked_at_ms: 'integer',
  minute: 'integer',
  success: 'boolean',
  latency_ms: 'integer',
} as const satisfies Record<Exclude<keyof RawCheckRow, 'id'>, ColumnType>;

const SCOPE_LETTER: Readonly<Record<RollupScopeKind, string>> = { endpoint: 'e', team: 't' };
const GRANULARITY_LETTER: Readonly<Record<Granularity, string>> = { minute: 'm', hour: 'h', day: 'd' };

/** Digits of a period number (periods since the epoch): enough until the year 3800. */
const PERIOD_DIGITS: Readonly<Record<Granularity, number>> = { minute: 9, hour: 7, day: 6 };

/**
 * The id of a period's row: scope letter, scope id, granularity letter, start counted in periods
 * since the epoch with a fixed number of digits (`e12h0492345`: endpoint 12, the hour starting
 * 492345 hours after the epoch). Short, because every hour and day row keeps it for ever; fixed
 * width, so that the rows of one scope and granularity sort by time and a run of periods is one
 * id range (`rollupRange`).
 */
export function rollupId(scope: RollupScopeKind, scopeId: number, granularity: Granularity, startSeconds: number): string {
  const period = String((startSeconds * 1000) / GRANULARITY_MS[granularity]).padStart(PERIOD_DIGITS[granularity], '0');
  return `${SCOPE_LETTER[scope]}${scopeId}${GRANULARITY_LETTER[granularity]}${period}`;
}

/** The ids of the rows of the periods in [fromSeconds, toSeconds), both aligned: `gte` <= id < `lt`. */
export function rollupRange(scope: RollupScopeKind, scopeId: number, granularity: Granularity, fromSeconds: number, toSeconds: number): { gte: string; lt: string } {
  return { gte: rollupId(scope, scopeId, granularity, fromSeconds), lt: rollupId(scope, scopeId, granularity, toSeconds) };
}

/** The raw row of an applicable check; null when the check does not feed analytics. */
export function rawCheckRow(check: CheckRecordedData): RawCheckRow | null {
  if (!isApplicable(check)) return null;
  const checkedAtMs = Date.parse(check.checked_at);
  return {
    id: String(check.check_id),
    check_id: check.check_id,
    team_id: check.team_id,
    endpoint_id: check.endpoint_id,
    checked_at_ms: checkedAtMs,
    minute: floorTo(checkedAtMs, GRANULARITY_MS.minute) / 1000,
    success: check.success,
    latency_ms: check.latency_ms,
  };
}

/** Keys of the six rollup rows (2 scopes x 3 granularities) a check adds to. */
export function rollupKeysOf(row: Pick<RawCheckRow, 'team_id' | 'endpoint_id' | 'checked_at_ms'>): RollupKey[] {
  const keys: RollupKey[] = [];
  for (const scope of ROLLUP_SCOPE_KINDS) {
    const scopeId = row[SCOPE_FIELD[scope]];
    for (const granularity of GRANULARITIES) {
      const start = floorTo(row.checked_at_ms, GRANULARITY_MS[granularity]) / 1000;
      keys.push({ id: rollupId(scope, scopeId, granularity, start), scope, scope_id: scopeId, granularity, start });
    }
  }
  return keys;
}

/** The rollup row after adding the check; `existing` is null for a new period. */
export function withCheck(existing: RollupRow | null, id: string, row: RawCheckRow): RollupRow {
  const base: RollupRow = existing ? { ...existing } : { id, ...emptyAccumulator() };
  addCheck(base, row);
  return base;
}

/** The rollup row after adding partial sums (a retention summary's hour). */
export function withSums(existing: RollupRow | null, id: string, sums: Accumulator): RollupRow {
  const base: RollupRow = existing ? { ...existing } : { id, ...emptyAccumulator() };
  addAccumulator(base, sums);
  return base;
}
