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
 * Stored compact (schema v2, see `compactSummary`): check ids and each hour's minutes as runs of
 * consecutive numbers; readers get the full shape back through the upcasters.
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

export const CHECKS_SUMMARIZED_STORED_VERSION = 2;

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

type StoredHourSums = [hour: number, project_id: number, checks: number, failures: number, latency_sum: number, latency_min: number, latency_max: number, minutes: Run[], region?: string];

/**
 * The stored v2 form: `check_ids` becomes `check_id_runs` (an endpoint's ids come in consecutive
 * blocks, so a summary of days of checks keeps a handful of runs instead of ~8 bytes a check) and
 * each hour's minutes become runs (a check every 30 s: `[[0,59]]`). Still readable JSON.
 */
export function compactSummary(data: ChecksSummarizedData): Record<string, unknown> {
  const { check_ids, hours, ...rest } = data;
  return { ...rest, check_id_runs: toRuns(check_ids), hours: hours.map((h) => [...h.slice(0, 7), toRuns(h[7]), ...h.slice(8)]) };
}

export function expandSummary(stored: Record<string, unknown>): ChecksSummarizedData {
  const { check_id_runs, hours, ...rest } = stored as { check_id_runs: Run[]; hours: StoredHourSums[] } & Record<string, unknown>;
  return {
    ...(rest as Omit<ChecksSummarizedData, 'check_ids' | 'hours'>),
    check_ids: fromRuns(check_id_runs),
    hours: hours.map((h): HourSums => withRegion([...(h.slice(0, 7) as [number, number, number, number, number, number, number]), fromRuns(h[7] as Run[])], h[8])),
  };
}

interface SummaryUpcasterRegistry {
  register(type: string, fromVersion: number, fn: (data: unknown) => unknown): unknown;
  registerStoredShape(type: string, shape: { version: number; compact(data: unknown): unknown; expand(data: unknown): unknown }): unknown;
}

/** Registers the lift of stored v1 summaries (every id and minute listed) and the compact v2 stored shape. */
export function registerSummaryUpcasters(registry: SummaryUpcasterRegistry): void {
  registry.register(CHECKS_SUMMARIZED, 1, (data) => compactSummary(data as ChecksSummarizedData));
  registry.registerStoredShape(CHECKS_SUMMARIZED, {
    version: CHECKS_SUMMARIZED_STORED_VERSION,
    compact: (data) => compactSummary(data as ChecksSummarizedData),
    expand: (data) => expandSummary(data as Record<string, unknown>),
  });
}

/** Start of the retention horizon: the UTC day that holds `now - days`, so a prune removes whole days. */
export function retentionHorizon(now: number, days: number): number {
  const DAY_MS = 86_400_000;
  return Math.floor((now - days * DAY_MS) / DAY_MS) * DAY_MS;
}
