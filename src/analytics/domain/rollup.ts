import { isApplicable, type CheckRecordedData } from '../../checks/domain/check.js';
import { addAccumulator, addCheck, emptyAccumulator, type Accumulator } from './aggregate.js';
import { floorTo, GRANULARITY_MS, type Granularity, type RollupRun } from './range-plan.js';
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { CHECK_MANUAL, CHECK_NO_EXCERPT, OUTCOME_FAILURE, OUTCOME_OTHER_FAILURE, OUTCOME_SUCCESS, type RawCheckRow, type RollupKey, type RollupRow, type RollupScopeKind } from '../views/rollups/view.js';

/** How one check (or a retention summary) updates the rollup views (names and shapes: views.ts). */
export const ROLLUP_SCOPE_KINDS: RollupScopeKind[] = ['endpoint', 'project', 'team'];
export const GRANULARITIES: Granularity[] = ['minute', 'hour', 'day'];

/** Which field of a raw check row names the scope's id. */
export const SCOPE_FIELD: Readonly<Record<RollupScopeKind, 'endpoint_id' | 'project_id' | 'team_id'>> = {
  endpoint: 'endpoint_id',
  project: 'project_id',
  team: 'team_id',
};

const SCOPE_LETTER: Readonly<Record<RollupScopeKind, string>> = { endpoint: 'e', project: 'p', team: 't' };
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

/** Every row of one scope and granularity: `gte` <= id < `lt` (ids sort by period within it). */
export function rollupRangeAll(scope: RollupScopeKind, scopeId: number, granularity: Granularity): { gte: string; lt: string } {
  const prefix = `${SCOPE_LETTER[scope]}${scopeId}${GRANULARITY_LETTER[granularity]}`;
  // ':' sorts right after '9': every fixed-width period of this prefix lies before it.
  return { gte: prefix, lt: `${prefix}:` };
}

/** The ids of the rows of the periods in [fromSeconds, toSeconds), both aligned: `gte` <= id < `lt`. */
export function rollupRange(scope: RollupScopeKind, scopeId: number, granularity: Granularity, fromSeconds: number, toSeconds: number): { gte: string; lt: string } {
  return { gte: rollupId(scope, scopeId, granularity, fromSeconds), lt: rollupId(scope, scopeId, granularity, toSeconds) };
}

/**
 * `rollupRange` of each run for many scope ids over the same runs, as a key prefix per scope id
 * and the ranges under it: `prefix(id) + gte` <= row id < `prefix(id) + lt` is `rollupRange`'s
 * range of that run (the store sums a project's endpoints over one window this way:
 * `RangesAggregateQuery.prefixes`, thousands of ids, the same five runs).
 */
export function rollupRangeSuffixes(scope: RollupScopeKind, runs: readonly RollupRun[]): { prefix: (scopeId: number) => string; ranges: Array<{ gte: string; lt: string }> } {
  const letter = SCOPE_LETTER[scope];
  const ranges = runs.map((run) => {
    const { gte, lt } = rollupRange(scope, 0, run.granularity, run.from / 1000, run.to / 1000);
    // Past the scope letter and the id 0: the granularity letter and the period.
    return { gte: gte.slice(2), lt: lt.slice(2) };
  });
  return { prefix: (scopeId) => `${letter}${scopeId}`, ranges };
}

/**
 * The id of a period's row of an endpoint's checks from one region: `r12.eu-west.h0492345`. A
 * region name has no `.` (1-32 of a-z, 0-9, -), so the dots keep one region's rows apart from
 * another's whose name it starts with, and the rows of one region and granularity are one id range.
 */
export function regionRollupId(endpointId: number, region: string, granularity: Granularity, startSeconds: number): string {
  const period = String((startSeconds * 1000) / GRANULARITY_MS[granularity]).padStart(PERIOD_DIGITS[granularity], '0');
  return `${regionPrefix(endpointId, region, granularity)}${period}`;
}

function regionPrefix(endpointId: number, region: string, granularity: Granularity): string {
  return `r${endpointId}.${region}.${GRANULARITY_LETTER[granularity]}`;
}

/** Every row of one endpoint, region and granularity: `gte` <= id < `lt`. */
export function regionRollupRangeAll(endpointId: number, region: string, granularity: Granularity): { gte: string; lt: string } {
  const prefix = regionPrefix(endpointId, region, granularity);
  return { gte: prefix, lt: `${prefix}:` };
}

/** The ids of an endpoint's rows of one region for the periods in [fromSeconds, toSeconds), both aligned. */
export function regionRollupRange(endpointId: number, region: string, granularity: Granularity, fromSeconds: number, toSeconds: number): { gte: string; lt: string } {
  return { gte: regionRollupId(endpointId, region, granularity, fromSeconds), lt: regionRollupId(endpointId, region, granularity, toSeconds) };
}

/**
 * The raw row of a check (every check has one; `outcome` says whether analytics counts it).
 * `projectId`: the endpoint's current project (the check counts for it), by default the one it
 * was recorded under. `teamId`: none in the team's primary project (`storedTeamId`), by default
 * the check's team. Fields at their default are left out (`RawCheckRow`).
 */
export function rawCheckRow(check: CheckRecordedData, projectId = check.project_id, teamId: number | null = check.team_id): RawCheckRow {
  const manual = check.source === 'manual';
  const row: RawCheckRow = {
    id: String(check.check_id),
    check_id: check.check_id,
    team_id: teamId,
    project_id: projectId,
    endpoint_id: check.endpoint_id,
    outcome: (isApplicable(check) ? OUTCOME_FAILURE : OUTCOME_OTHER_FAILURE) + (check.success ? 1 : 0),
    checked_at_ms: Date.parse(check.checked_at),
    status_code: check.status_code,
    latency_ms: check.latency_ms,
    configuration_version: check.configuration_version,
    flags: (manual ? CHECK_MANUAL : 0) | (check.response_excerpt !== null && check.response_excerpt !== undefined ? 0 : CHECK_NO_EXCERPT),
    time_to_first_byte_ms: check.time_to_first_byte_ms,
    duration_ms: check.duration_ms,
    latency_threshold_ms: check.latency_threshold_ms ?? null,
  };
  if (check.body_complete !== true) row.body_complete = check.body_complete;
  if (check.latency_anomaly) row.latency_anomaly = true;
  if (check.alert_suppressed) row.alert_suppressed = true;
  if (check.failure_reason !== null && check.failure_reason !== undefined) row.failure_reason = check.failure_reason;
  if (check.region !== undefined && check.region !== DEFAULT_REGION) row.region = check.region;
  return row;
}

/** Whether analytics counts the row's check (applicable: scheduled and unsuppressed). */
export function counted(row: Pick<RawCheckRow, 'outcome'>): boolean {
  return row.outcome === OUTCOME_FAILURE || row.outcome === OUTCOME_SUCCESS;
}

/** What a counted raw row adds to sums: its success and latency. */
export function checkOfRow(row: Pick<RawCheckRow, 'outcome' | 'latency_ms'>): { success: boolean; latency_ms: number } {
  return { success: row.outcome === OUTCOME_SUCCESS, latency_ms: row.latency_ms };
}

/** Keys of the nine rollup rows (3 scopes x 3 granularities) a check adds to. */
export function rollupKeysOf(row: { team_id: number } & Pick<RawCheckRow, 'project_id' | 'endpoint_id' | 'checked_at_ms'>): RollupKey[] {
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

/**
 * The rollup row after adding the check; `existing` is null for a new period. A project row keeps
 * no minimum or maximum (`withoutExtremes`).
 */
export function withCheck(existing: RollupRow | null, id: string, row: Pick<RawCheckRow, 'outcome' | 'latency_ms'>, scope: RollupScopeKind = 'endpoint'): RollupRow {
  const base: RollupRow = existing ? { ...existing } : { id, ...emptyAccumulator() };
  addCheck(base, checkOfRow(row));
  if (scope === 'project') dropExtremes(base);
  return base;
}

/** The rollup row after adding partial sums (a retention summary's hour, an endpoint that moved in). */
export function withSums(existing: RollupRow | null, id: string, sums: Accumulator, scope: RollupScopeKind = 'endpoint'): RollupRow {
  const base: RollupRow = existing ? { ...existing } : { id, ...emptyAccumulator() };
  addAccumulator(base, sums);
  if (scope === 'project') dropExtremes(base);
  return base;
}

/**
 * A project row after an endpoint's sums left it (the endpoint moved to another project); null
 * when no check is left in it. Counts and sums subtract exactly; a minimum or maximum cannot be
 * taken back, which is why project rows keep none (a project's come from its endpoints' rows).
 */
export function withoutSums(existing: RollupRow, sums: Accumulator): RollupRow | null {
  const checks = existing.checks - sums.checks;
  if (checks <= 0) return null;
  return { id: existing.id, checks, failures: existing.failures - sums.failures, latency_sum: existing.latency_sum - sums.latency_sum, latency_min: null, latency_max: null };
}

/**
 * Project rows hold counts and sums only: an endpoint moving out of the project takes its share
 * away exactly, which a minimum or maximum cannot do. Set on the row being built rather than
 * spread into another copy: V8 freezes an object spread from an unfrozen one about ten times
 * slower than a literal or a copy of a frozen one, and the batch freezes every put document.
 */
function dropExtremes(row: RollupRow): void {
  row.latency_min = null;
  row.latency_max = null;
}
