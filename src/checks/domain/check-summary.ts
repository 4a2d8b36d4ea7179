/**
 * Retention: raw checks older than the horizon leave the log, and a `ChecksSummarized` event
 * takes their place first, carrying what the views still need of them:
 * - every summarized check id (the per-check rows drop them; ~8 bytes a check instead of ~300),
 * - per UTC hour, project and probe region, the sums of the APPLICABLE checks (scheduled,
 *   unsuppressed) that analytics rollups are made of: count, failures, latency sum, minimum and
 *   maximum (past the horizon analytics counts whole hours: minute rollups leave with the raw
 *   checks; the region keeps an endpoint's per-region figures exact there),
 * - the newest applicable check (analytics' `latest` of an endpoint that has been quiet since).
 *
 * A summary stands for an exact set of events: the CheckRecorded events of `checks-<endpoint>`
 * at revisions from_revision..through_revision (other event types there are never removed).
 * Stored compact (schema v3, see `compactSummary`): check ids as runs of consecutive numbers and
 * the hour sums as columns; readers get the full shape back through the upcasters.
 *
 * Summaries of an endpoint go to their own stream, `check-summaries-<endpoint>`, appended with
 * the expected revision, and each starts where the previous one ended, so a set is summarized
 * once however many processes try and whenever one crashes.
 */
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { isApplicable, type CheckRecordedData } from './check.js';

export const CHECKS_SUMMARIZED = 'ChecksSummarized';

export const checkSummariesStream = (endpointId: number) => `check-summaries-${endpointId}`;

/**
 * [hour start (epoch seconds), project_id, checks, failures, latency_sum, latency_min, latency_max,
 *  minutes of the hour (0-59, ascending) that held one of these checks, region]. The region of
 *  the checks is left out when it is `local` (and summaries made before regions have none: their
 *  checks read as `local`, as checks without a region do).
 */
export type HourSums = [hour: number, project_id: number, checks: number, failures: number, latency_sum: number, latency_min: number, latency_max: number, minutes: number[], region?: string];

/** The probe region of a summary's hour sums (`local` when it names none). */
export function hourRegion(sums: HourSums): string {
  return sums[8] ?? DEFAULT_REGION;
}

export interface SummarizedLatestCheck {
  check_id: number;
  checked_at: string;
  success: boolean;
  status_code: number;
  latency_ms: number;
}

export interface ChecksSummarizedData {
  endpoint_id: number;
  team_id: number;
  /** The CheckRecorded events of checks-<endpoint_id> at revisions from..through (inclusive) it stands for. */
  from_revision: number;
  through_revision: number;
  /**
   * The full hash of the event at through_revision (which may store only its prefix,
   * docs/audit.md): the hash chain of the checks stream links
   * the first check that stays to it (docs/audit.md). Absent when that check predates chaining.
   */
  through_hash?: string;
  /** The retention horizon when it was made: every summarized check is older. */
  horizon: string;
  /** Every summarized check, applicable or not. */
  check_ids: number[];
  /** Applicable checks, per UTC hour and project, in hour order. */
  hours: HourSums[];
  /** The newest applicable check summarized; null when none was applicable. */
  latest_applicable: SummarizedLatestCheck | null;
  /** Whether an applicable check summarized succeeded. */
  any_success: boolean;
  /** Failed applicable checks after the newest successful one (all of them when none succeeded), by checked_at. */
  trailing_failures: number;
  /**
   * The same three facts per probe region, when an applicable summarized check came from a region
   * other than `local` (otherwise the fields above are `local`'s): a region's `current` in
   * analytics once its checks are gone.
   */
  regions?: Record<string, RegionSummary>;
}

export interface RegionSummary {
  latest_applicable: SummarizedLatestCheck;
  any_success: boolean;
  trailing_failures: number;
}

const HOUR_MS = 3_600_000;

/**
 * Of applicable checks: the newest (by checked_at, then the first of equal ones in stream
 * order unless a later one has a higher id), whether any succeeded, and the failures after the
 * newest success (all of them when none succeeded).
 */
function latestFacts(applicable: CheckRecordedData[]): { latest_applicable: SummarizedLatestCheck | null; any_success: boolean; trailing_failures: number } {
  let latest: SummarizedLatestCheck | null = null;
  let latestMs = -Infinity;
  let lastSuccessMs = -Infinity;
  let anySuccess = false;
  for (const check of applicable) {
    const at = Date.parse(check.checked_at);
    if (at > latestMs || (at === latestMs && latest !== null && check.check_id > latest.check_id)) {
      latestMs = at;
      latest = { check_id: check.check_id, checked_at: new Date(at).toISOString(), success: check.success, status_code: check.status_code, latency_ms: check.latency_ms };
    }
    if (check.success) {
      anySuccess = true;
      lastSuccessMs = Math.max(lastSuccessMs, at);
    }
  }
  const trailing = applicable.filter((check) => !check.success && Date.parse(check.checked_at) > lastSuccessMs).length;
  return { latest_applicable: latest, any_success: anySuccess, trailing_failures: trailing };
}

/** The summary of checks (in stream order) of one endpoint; `revisions` says which events they were. */
export function summarizeChecks(
  endpointId: number,
  teamId: number,
  checks: Array<{ revision: number; check: CheckRecordedData }>,
  horizon: string,
): ChecksSummarizedData {
  if (checks.length === 0) throw new Error('summarizeChecks needs at least one check');
  const buckets = new Map<string, HourSums>();
  for (const { check } of checks) {
    if (!isApplicable(check)) continue;
    const at = Date.parse(check.checked_at);
    const hour = Math.floor(at / HOUR_MS) * 3600;
    const region = check.region ?? DEFAULT_REGION;
    const key = `${hour}:${check.project_id}:${region}`;
    const sums: HourSums = buckets.get(key) ?? withRegion([hour, check.project_id, 0, 0, 0, check.latency_ms, check.latency_ms, []], region);
    const minute = Math.floor((at % HOUR_MS) / 60_000);
    if (!sums[7].includes(minute)) sums[7].push(minute);
    sums[2] += 1;
    sums[3] += check.success ? 0 : 1;
    sums[4] += check.latency_ms;
    sums[5] = Math.min(sums[5], check.latency_ms);
    sums[6] = Math.max(sums[6], check.latency_ms);
    buckets.set(key, sums);
  }
  const applicable = checks.map(({ check }) => check).filter(isApplicable);
  const all = latestFacts(applicable);
  const regionOf = (check: CheckRecordedData) => check.region ?? DEFAULT_REGION;
  const applicableRegions = [...new Set(applicable.map(regionOf))].sort();
  const regions = applicableRegions.some((region) => region !== DEFAULT_REGION)
    ? Object.fromEntries(applicableRegions.map((region) => [region, latestFacts(applicable.filter((check) => regionOf(check) === region)) as RegionSummary]))
    : undefined;
  return {
    endpoint_id: endpointId,
    team_id: teamId,
    from_revision: checks[0].revision,
    through_revision: checks[checks.length - 1].revision,
    horizon,
    check_ids: checks.map(({ check }) => check.check_id),
    hours: [...buckets.values()]
      .map((b): HourSums => withRegion([...(b.slice(0, 7) as [number, number, number, number, number, number, number]), [...b[7]].sort((x, y) => x - y)], hourRegion(b)))
      .sort((a, b) => a[0] - b[0] || a[1] - b[1] || compareText(hourRegion(a), hourRegion(b))),
    ...all,
    ...(regions ? { regions } : {}),
  };
}

/** The hour sums with their region, which is left out when it is `local`. */
function withRegion(sums: [number, number, number, number, number, number, number, number[]], region: string | undefined): HourSums {
  return region === undefined || region === DEFAULT_REGION ? sums : [...sums, region];
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export const CHECKS_SUMMARIZED_STORED_VERSION = 3;

/** A run of consecutive integers: `[first, last]`, or the number alone when first === last. */
export type Run = number | [first: number, last: number];

/** Numbers in their order as runs of consecutive ascending ones; `fromRuns` gives them back exactly. */
export function toRuns(numbers: number[]): Run[] {
  const runs: Run[] = [];
  let index = 0;
  while (index < numbers.length) {
    const first = numbers[index];
    let last = first;
    while (index + 1 < numbers.length && numbers[index + 1] === last + 1) last = numbers[++index];
    runs.push(first === last ? first : [first, last]);
    index += 1;
  }
  return runs;
}

export function fromRuns(runs: Run[]): number[] {
  const numbers: number[] = [];
  for (const run of runs) {
    if (typeof run === 'number') numbers.push(run);
    else for (let n = run[0]; n <= run[1]; n += 1) numbers.push(n);
  }
  return numbers;
}

/** A value and how many times in a row it comes. */
export type Repeat<T> = [value: T, count: number];

/** Values in their order as repeats of equal ones (equal JSON); `fromRepeats` gives them back. */
export function toRepeats<T>(values: T[]): Array<Repeat<T>> {
  const repeats: Array<Repeat<T>> = [];
  let lastKey: string | undefined;
  for (const value of values) {
    const key = JSON.stringify(value);
    if (key === lastKey) repeats[repeats.length - 1][1] += 1;
    else repeats.push([value, 1]);
    lastKey = key;
  }
  return repeats;
}

export function fromRepeats<T>(repeats: Array<Repeat<T>>): T[] {
  const values: T[] = [];
  for (const [value, count] of repeats) for (let n = 0; n < count; n += 1) values.push(value);
  return values;
}

type StoredHourSums = [hour: number, project_id: number, checks: number, failures: number, latency_sum: number, latency_min: number, latency_max: number, minutes: Run[], region?: string];

/**
 * v3's hour sums, a column per field (the hours in the same order as v2's rows). What repeats
 * from hour to hour (the hour itself, one after the other; the project; the check count; the
 * minutes of a regular schedule; the region) is kept as runs or repeats, so an hour costs its
 * failures and three latency figures: about 14 bytes where a v2 row took about 45, and the
 * summaries are most of what a check leaves behind past the horizon (docs/benchmarks.md).
 */
interface StoredHourColumns {
  /** Hour starts in hours since the epoch (epoch seconds / 3600), as runs. */
  hour_runs: Run[];
  project_ids: Array<Repeat<number>>;
  checks: Array<Repeat<number>>;
  failures: number[];
  latency_sums: number[];
  latency_mins: number[];
  latency_maxes: number[];
  /** Each hour's minutes as runs (v2's), repeated. */
  minutes: Array<Repeat<Run[]>>;
  /** Each hour's region, null for `local`; absent when every hour is `local`'s. */
  regions?: Array<Repeat<string | null>>;
}

function hourColumns(hours: HourSums[]): StoredHourColumns {
  const columns: StoredHourColumns = {
    hour_runs: toRuns(hours.map((h) => h[0] / 3600)),
    project_ids: toRepeats(hours.map((h) => h[1])),
    checks: toRepeats(hours.map((h) => h[2])),
    failures: hours.map((h) => h[3]),
    latency_sums: hours.map((h) => h[4]),
    latency_mins: hours.map((h) => h[5]),
    latency_maxes: hours.map((h) => h[6]),
    minutes: toRepeats(hours.map((h) => toRuns(h[7]))),
  };
  if (hours.some((h) => h[8] !== undefined)) columns.regions = toRepeats(hours.map((h) => h[8] ?? null));
  return columns;
}

function hoursOfColumns(columns: StoredHourColumns): HourSums[] {
  const starts = fromRuns(columns.hour_runs);
  const projects = fromRepeats(columns.project_ids);
  const checks = fromRepeats(columns.checks);
  const minutes = fromRepeats(columns.minutes);
  const regions = columns.regions ? fromRepeats(columns.regions) : null;
  const lengths = [projects, checks, columns.failures, columns.latency_sums, columns.latency_mins, columns.latency_maxes, minutes, ...(regions ? [regions] : [])].map((c) => c.length);
  if (lengths.some((length) => length !== starts.length)) throw new Error(`ChecksSummarized v3: hour columns of ${lengths.join('/')} values for ${starts.length} hours`);
  return starts.map((hour, i) =>
    withRegion([hour * 3600, projects[i], checks[i], columns.failures[i], columns.latency_sums[i], columns.latency_mins[i], columns.latency_maxes[i], fromRuns(minutes[i])], regions?.[i] ?? undefined),
  );
}

/**
 * The stored v3 form: `check_ids` becomes `check_id_runs` (an endpoint's ids come in consecutive
 * blocks, so a summary of days of checks keeps a handful of runs instead of ~8 bytes a check) and
 * the hour sums become columns (`StoredHourColumns`). Still readable JSON.
 */
export function compactSummary(data: ChecksSummarizedData): Record<string, unknown> {
  const { check_ids, hours, ...rest } = data;
  return { ...rest, check_id_runs: toRuns(check_ids), hours: hourColumns(hours) };
}

export function expandSummary(stored: Record<string, unknown>): ChecksSummarizedData {
  const { check_id_runs, hours, ...rest } = stored as { check_id_runs: Run[]; hours: StoredHourColumns } & Record<string, unknown>;
  return { ...(rest as Omit<ChecksSummarizedData, 'check_ids' | 'hours'>), check_ids: fromRuns(check_id_runs), hours: hoursOfColumns(hours) };
}

/** Stored v2: check ids as runs, an array per hour with its minutes as runs (v1's lift makes it). */
function compactSummaryV2(data: ChecksSummarizedData): Record<string, unknown> {
  const { check_ids, hours, ...rest } = data;
  return { ...rest, check_id_runs: toRuns(check_ids), hours: hours.map((h) => [...h.slice(0, 7), toRuns(h[7]), ...h.slice(8)]) };
}

function expandSummaryV2(stored: Record<string, unknown>): ChecksSummarizedData {
  const { check_id_runs, hours, ...rest } = stored as { check_id_runs: Run[]; hours: StoredHourSums[] } & Record<string, unknown>;
  return {
    ...(rest as Omit<ChecksSummarizedData, 'check_ids' | 'hours'>),
    check_ids: fromRuns(check_id_runs),
    hours: hours.map((h): HourSums => withRegion([...(h.slice(0, 7) as [number, number, number, number, number, number, number]), fromRuns(h[7] as Run[])], h[8])),
  };
}

interface SummaryUpcasterRegistry {
  register(type: string, fromVersion: number, fn: (data: unknown) => unknown): unknown;
  registerStoredShape(type: string, shape: { version: number; compact(data: unknown): unknown; expand(data: unknown): unknown; packed?: boolean }): unknown;
}

/**
 * Registers the lifts of stored v1 summaries (every id and minute listed) and v2 ones (an array
 * per hour) to the stored v3 shape, and that shape. Stored events are never rewritten: the hash
 * chain covers each as it was stored.
 */
export function registerSummaryUpcasters(registry: SummaryUpcasterRegistry): void {
  registry.register(CHECKS_SUMMARIZED, 1, (data) => compactSummaryV2(data as ChecksSummarizedData));
  registry.register(CHECKS_SUMMARIZED, 2, (data) => compactSummary(expandSummaryV2(data as Record<string, unknown>)));
  registry.registerStoredShape(CHECKS_SUMMARIZED, {
    version: CHECKS_SUMMARIZED_STORED_VERSION,
    compact: (data) => compactSummary(data as ChecksSummarizedData),
    expand: (data) => expandSummary(data as Record<string, unknown>),
    // Kept for ever, one an endpoint a day at an hourly pass: its top-level key names (~150 B)
    // were a sixth of a day's summary. The SQLite log keeps the key list once (NewEvent.packed).
    packed: true,
  });
}

/** Start of the retention horizon: the UTC day that holds `now - days`, so a prune removes whole days. */
export function retentionHorizon(now: number, days: number): number {
  const DAY_MS = 86_400_000;
  return Math.floor((now - days * DAY_MS) / DAY_MS) * DAY_MS;
}
