import { isApplicable, type CheckRecordedData } from '../../checks/domain/check.js';
import { addAccumulator, addCheck, emptyAccumulator, type Accumulator } from './aggregate.js';
import { floorTo, GRANULARITY_MS, type Granularity, type RollupRun } from './range-plan.js';
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { DigitCode } from '../../platform/digit-code.js';
import { CHECK_MANUAL, CHECK_NO_EXCERPT, OUTCOME_FAILURE, OUTCOME_OTHER_FAILURE, OUTCOME_SUCCESS, packStatusAndTimings, type RawCheckRow, type RollupKey, type RollupRow, type RollupScopeKind } from '../views/rollups/view.js';

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
 * Packed hours (rollups view v12). Once retention has summarized an hour of an endpoint (or of one
 * of its regions), the hour's row leaves and its sums move into the row of its day, in `hours`
 * (`packHourRows` in the projection); the day's own sums do not change, since they counted the hour
 * already. Past the horizon an endpoint-hour then costs its sums alone (about 8 characters) where
 * a row of its own cost about 35 bytes (key, record header and page slot). Only what retention
 * summarized is packed, so inside the horizon, where every read of minutes and hours is, the rows
 * stay as they were; a read of hours before the horizon adds the packed hours of their days
 * (`packedHourSpans`) to the hour rows' sums (a check that arrives late for a packed hour makes a
 * row again). Project and team rows stay rows: they are few, and a move subtracts and adds them.
 *
 * The form: per hour of the day in order, its checks, then (when there are any) its failures,
 * latency sum, minimum and maximum, each number as `packedNumber` writes it; the hours without
 * checks at the end left out. No separators: each number says where it ends.
 */
export type PackedHours = Array<Accumulator | null>;

const HOURS_A_DAY = 24;
const HOUR_SECONDS = 3600;
const DAY_SECONDS = 86_400;

/**
 * Digits of a packed number, base 43: `(` to `R` end a number, `S` to `~` (without `\`) are its
 * earlier digits, most significant first; `!` before them makes it negative, `#` alone is null.
 * Printable, and neither `"` nor `\`, so JSON keeps each character as one byte. A day of hours of
 * 4 checks (failures 0, sum 1334, minimum 117, maximum 900) takes 8 characters an hour.
 */
const PACKED_DIGITS = new DigitCode(Array.from({ length: 0x7f - 0x28 }, (_, i) => String.fromCharCode(0x28 + i)).filter((c) => c !== '\\').join(''));
const NEGATIVE = '!';
const NULL = '#';

function packedNumber(value: number | null): string {
  if (value === null) return NULL;
  // Latencies are integer columns, so sums of them are too: the digits keep them exactly.
  if (!Number.isSafeInteger(value)) throw new Error(`A packed hour holds integers only, not ${value}`);
  const text = PACKED_DIGITS.write(Math.abs(value));
  return value < 0 ? NEGATIVE + text : text;
}

export function packHours(hours: PackedHours): string {
  let end = hours.length;
  while (end > 0 && (hours[end - 1]?.checks ?? 0) === 0) end--;
  let text = '';
  for (const sums of hours.slice(0, end)) {
    if (sums === null || sums.checks === 0) text += packedNumber(0);
    else text += [sums.checks, sums.failures, sums.latency_sum, sums.latency_min, sums.latency_max].map(packedNumber).join('');
  }
  return text;
}

/** Reads `packHours`' numbers one after another. */
class PackedCursor {
  private readonly cursor = { at: 0 };

  constructor(private readonly text: string) {}

  get done(): boolean {
    return this.cursor.at >= this.text.length;
  }

  next(): number | null {
    const { text, cursor } = this;
    const first = text.charCodeAt(cursor.at);
    if (first === NULL_CODE) {
      cursor.at++;
      return null;
    }
    if (first === NEGATIVE_CODE) cursor.at++;
    const value = PACKED_DIGITS.read(text, cursor);
    if (Number.isNaN(value)) throw new Error(`Packed hours: no number at ${cursor.at} of ${JSON.stringify(text)}`);
    return first === NEGATIVE_CODE ? -value : value;
  }
}

export function unpackHours(packed: string | undefined): PackedHours {
  const hours: PackedHours = new Array<Accumulator | null>(HOURS_A_DAY).fill(null);
  const cursor = new PackedCursor(packed ?? '');
  for (let hour = 0; !cursor.done; hour++) {
    const checks = cursor.next() ?? 0;
    if (checks > 0) hours[hour] = { checks, failures: cursor.next() ?? 0, latency_sum: cursor.next() ?? 0, latency_min: cursor.next(), latency_max: cursor.next() };
  }
  return hours;
}

/**
 * Adds a day row's packed hours [first, end) to `sums` (and returns it), reading the text once
 * and making no object per hour: a project's read does this for each of thousands of endpoints.
 */
export function addPackedSums(sums: Accumulator, packed: string, first: number, end: number): Accumulator {
  const cursor = new PackedCursor(packed);
  for (let hour = 0; hour < end && !cursor.done; hour++) {
    const checks = cursor.next() ?? 0;
    if (checks === 0) continue;
    const failures = cursor.next() ?? 0;
    const latencySum = cursor.next() ?? 0;
    const min = cursor.next();
    const max = cursor.next();
    if (hour < first) continue;
    sums.checks += checks;
    sums.failures += failures;
    sums.latency_sum += latencySum;
    if (min !== null && (sums.latency_min === null || min < sums.latency_min)) sums.latency_min = min;
    if (max !== null && (sums.latency_max === null || max > sums.latency_max)) sums.latency_max = max;
  }
  return sums;
}

const NULL_CODE = NULL.charCodeAt(0);
const NEGATIVE_CODE = NEGATIVE.charCodeAt(0);

/**
 * The day row after some of its hours (each starting at `hourSeconds`) moved into it: their sums
 * added to its packed hours, its own sums unchanged (they count those hours already).
 */
export function withHoursPacked(day: RollupRow, moved: ReadonlyArray<{ hourSeconds: number; sums: Accumulator }>): RollupRow {
  const hours = unpackHours(day.hours);
  for (const { hourSeconds, sums } of moved) {
    const hour = Math.floor((hourSeconds % DAY_SECONDS) / HOUR_SECONDS);
    hours[hour] = addAccumulator(hours[hour] ?? emptyAccumulator(), sums);
  }
  return { ...day, hours: packHours(hours) };
}

/** The hours of a day row, each with the start of its hour (epoch seconds), those with checks only. */
export function packedHoursOf(day: RollupRow, dayStartSeconds: number): Array<{ start: number; sums: Accumulator }> {
  return unpackHours(day.hours).flatMap((sums, hour) => (sums === null ? [] : [{ start: dayStartSeconds + hour * HOUR_SECONDS, sums }]));
}

/** Which packed hours of a day count for a read: the day by its start (epoch seconds), its hours [first, end). */
export interface PackedSpan {
  day: number;
  first: number;
  end: number;
}

/**
 * The days whose packed hours a run of hour rows also covers, and which hours of each: the days
 * of the part of the run before `horizon` (hours are packed only once summarized, and retention
 * summarizes only what lies before its horizon, a UTC midnight). The same for every owner of the
 * run: a read names each owner's day rows from them. None for a run of another granularity.
 */
export function packedHourSpans(run: RollupRun, horizon: number): PackedSpan[] {
  if (run.granularity !== 'hour' || run.from >= horizon) return [];
  const day = GRANULARITY_MS.day;
  const hour = GRANULARITY_MS.hour;
  const spans: PackedSpan[] = [];
  for (let start = floorTo(run.from, day); start < Math.min(run.to, horizon); start += day) {
    spans.push({ day: start / 1000, first: (Math.max(run.from, start) - start) / hour, end: (Math.min(run.to, start + day) - start) / hour });
  }
  return spans;
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
    latency_ms: check.latency_ms,
    configuration_version: check.configuration_version,
    flags: (manual ? CHECK_MANUAL : 0) | (check.response_excerpt !== null && check.response_excerpt !== undefined ? 0 : CHECK_NO_EXCERPT),
    // Null for what most checks hold (v14: `packStatusAndTimings`).
    status_and_timings: packStatusAndTimings(check.status_code, check.latency_ms, check.time_to_first_byte_ms, check.duration_ms),
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

/** Ids of the nine rollup rows (3 scopes x 3 granularities) a check adds to: scope by scope (`scopeOfRollupIdAt`), each in GRANULARITIES' order. */
export function rollupIdsOf(row: { team_id: number } & Pick<RawCheckRow, 'project_id' | 'endpoint_id' | 'checked_at_ms'>): string[] {
  const minute = floorTo(row.checked_at_ms, GRANULARITY_MS.minute) / 1000;
  const hour = floorTo(row.checked_at_ms, GRANULARITY_MS.hour) / 1000;
  const day = floorTo(row.checked_at_ms, GRANULARITY_MS.day) / 1000;
  const ids: string[] = [];
  for (const scope of ROLLUP_SCOPE_KINDS) {
    const scopeId = row[SCOPE_FIELD[scope]];
    ids.push(rollupId(scope, scopeId, 'minute', minute), rollupId(scope, scopeId, 'hour', hour), rollupId(scope, scopeId, 'day', day));
  }
  return ids;
}

/** The scope of the row at `index` of `rollupIdsOf`'s ids. */
export function scopeOfRollupIdAt(index: number): RollupScopeKind {
  return ROLLUP_SCOPE_KINDS[Math.floor(index / GRANULARITIES.length)];
}

/** `rollupIdsOf` with each row's scope, scope id, granularity and period start. */
export function rollupKeysOf(row: { team_id: number } & Pick<RawCheckRow, 'project_id' | 'endpoint_id' | 'checked_at_ms'>): RollupKey[] {
  return rollupIdsOf(row).map((id, i) => {
    const scope = scopeOfRollupIdAt(i);
    const granularity = GRANULARITIES[i % GRANULARITIES.length];
    return { id, scope, scope_id: row[SCOPE_FIELD[scope]], granularity, start: floorTo(row.checked_at_ms, GRANULARITY_MS[granularity]) / 1000 };
  });
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
