/**
 * The analytics rollups view (projection `analytics_rollups`), defined here once: its
 * collection names, document types and typed columns. Written by `projection.ts`, read by
 * `queries.ts` (AnalyticsQuery), by analytics' good-check count (SLOs) and by the status pages
 * (endpoint daily uptime). How a check updates the rollups: `domain/rollup.ts`. The other
 * analytics view (projects and endpoints): `../endpoints/view.ts`.
 */
import type { ColumnType } from '../../../platform/read-store/read-store.port.js';
import type { Accumulator } from '../../domain/aggregate.js';
import type { Granularity } from '../../domain/range-plan.js';
import { decodeRecord, encodeRecord } from '../../../platform/event-store/sqlite/record-codec.js';

/**
 * Rollup rows and raw rows, written by `projection.ts` and read by the query service. Rollups
 * count APPLICABLE checks only (scheduled, unsuppressed); raw rows hold every retained check,
 * the applicable ones apart by `outcome`.
 *
 * Rollups exist per endpoint, project and team. A check counts for its endpoint's CURRENT
 * project (docs/decisions.md, "Analytics"): the projection keeps each endpoint's current project
 * (`ROLLUP_MEMBERS_COLLECTION`) and, when an endpoint moves, moves its share of every project
 * rollup row and its raw rows with it (moves are rare, reads are not). Project rows hold counts
 * and sums only (no minimum or maximum: those cannot be taken back out of a row).
 */
export const ROLLUPS_PROJECTION = 'analytics_rollups';
export const ROLLUPS_COLLECTION = 'analytics_rollups';
export const RAW_CHECKS_COLLECTION = 'analytics_checks';
/** Each endpoint's current project, as this projection applied it (its rows follow it). */
export const ROLLUP_MEMBERS_COLLECTION = 'analytics_members';

/** The scopes of the analytics routes. */
export type AnalyticsScopeKind = 'endpoint' | 'project' | 'team';

/** The scopes that have their own rollups and raw-row indexes: all of them. */
export type RollupScopeKind = AnalyticsScopeKind;

/** The project an endpoint's checks count for now. */
export interface RollupMemberDoc {
  id: string;
  endpoint_id: number;
  project_id: number;
  /**
   * The probe regions the endpoint's applicable checks came from (summarized ones included),
   * sorted; missing while there is none. Two or more: the endpoint has rows per region.
   */
  regions?: string[];
  /**
   * Per region, what retention summaries said of its summarized checks: the newest applicable
   * one, and the failures after the newest success among them (added up while none succeeded).
   * A region's `current` once its raw rows are gone, as `analytics_endpoints` keeps the endpoint's.
   */
  summarized_regions?: Record<string, SummarizedRegion>;
}

/**
 * A team's primary project: the project of the team's first endpoint registered (or, in a log
 * that starts with its checks, of its first check) as this view applied them. Its
 * raw rows leave `team_id` null for ever, whatever other projects the team has (a row moved into
 * it loses its team id, one moved out gets it, in the move's relabelling): the team index is
 * sparse and has no entry for them (about 19 B a check), and a team read takes the primary
 * project's rows (by key range or its endpoints' index ranges, `RawSpans`) beside the team
 * index's range. Never
 * changes, so no step ever rewrites a team's rows. Kept in `ROLLUP_MEMBERS_COLLECTION` under
 * `teamDocId` (no endpoint's id: those are plain numbers).
 */
/** The typed fields of `ROLLUP_MEMBERS_COLLECTION`; a `TeamDoc` has neither. */
export const ROLLUP_MEMBER_COLUMNS = {
  project_id: 'integer',
  endpoint_id: 'integer',
} as const satisfies Partial<Record<keyof RollupMemberDoc, ColumnType>>;

export interface TeamDoc {
  id: string;
  team_id: number;
  primary_project_id: number;
}

/** The id of a team's `TeamDoc`. */
export function teamDocId(teamId: number): string {
  return `t${teamId}`;
}

/** The team id a raw row of `projectId` stores: none in its team's primary project (`TeamDoc`). */
export function storedTeamId(team: TeamDoc, projectId: number): number | null {
  return projectId === team.primary_project_id ? null : team.team_id;
}

export interface SummarizedRegion {
  check_id: number;
  checked_at_ms: number;
  success: boolean;
  status_code: number;
  latency_ms: number;
  trailing_failures: number;
}


/**
 * One aligned period of one scope. Which period is named by the row's id alone (`rollupId`):
 * hour and day sums stay for ever (retention keeps them past the horizon, an endpoint's hours
 * packed into its day rows: `RollupRow.hours`), so a row holds its sums and nothing else, is
 * read and written by id only, and needs no secondary index.
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
  /**
   * An endpoint's (or region's) day row only: the sums of its hours that retention summarized,
   * packed (`packHours` in domain/rollup.ts: v12); their hour rows are gone. Beside the columns
   * (in `$rest`), so no other row pays a byte for it.
   */
  hours?: string;
}

/** Typed columns of the rollup rows (a compact-storage hint to the read store). */
export const ROLLUP_COLUMNS = {
  checks: 'integer',
  failures: 'integer',
  latency_sum: 'integer',
  latency_min: 'integer',
  latency_max: 'integer',
} as const satisfies Record<Exclude<keyof RollupRow, 'id' | 'hours'>, ColumnType>;

/**
 * One retained check (every source, applicable or not: v9, issue 31), kept for sub-minute range
 * edges, p95 and consecutive failures, and for monitoring's checks list and `GET` of one check
 * (`RollupCheckList` in `queries.ts`, behind monitoring's `CheckListSource` port). Its id is the check id's decimal
 * string (`idField`: SQLite keeps the check id once, as the row's integer key).
 *
 * `outcome` puts applicable checks (scheduled, unsuppressed: the only ones analytics counts)
 * and the others in index ranges of their own, so every analytics read asks for outcome 1
 * (`success: true` before v9) or outcomes 0 and 1 and reads exactly the rows it read when the
 * table held applicable checks only. The list's fields follow; the rarely set ones
 * (`body_complete` false, `latency_anomaly`, `alert_suppressed`, `failure_reason`, a region
 * other than `local`) are present only when set, as JSON beside the columns.
 */
export interface RawCheckRow {
  id: string;
  check_id: number;
  /** Null in the team's primary project (`TeamDoc`: the sparse team index skips those rows). */
  team_id: number | null;
  /** The endpoint's current project (rewritten when it moves), not the one it was recorded under. */
  project_id: number;
  endpoint_id: number;
  /** OUTCOME_*: applicable failure 0, success 1; manual or suppressed failure 2, success 3. */
  outcome: number;
  /** Epoch milliseconds of `checked_at`. */
  checked_at_ms: number;
  latency_ms: number;
  configuration_version: number;
  /** Bits: CHECK_MANUAL, CHECK_NO_EXCERPT (0: a probed check with its response excerpt). */
  flags: number;
  /**
   * The status code and the two timings where they differ from 200 and the latency, packed
   * (v14: `packStatusAndTimings`); null when none does (most checks). Also for a region's
   * `current` once the endpoint has rows per region. Read through `rawStatusCode` and `rawTimings`.
   */
  status_and_timings?: string | null;
  /** v12-v13 rows only (v13: null for 200): read through `rawStatusCode`. */
  status_code?: number | null;
  /** v12-v13 rows only (v13: null when equal to `latency_ms`): read through `rawTimings`. */
  time_to_first_byte_ms?: number | null;
  /** v12-v13 rows only (v13: null when equal to `latency_ms`): read through `rawTimings`. */
  duration_ms?: number | null;
  latency_threshold_ms: number | null;
  /** [true] */
  body_complete?: boolean;
  /** [false] */
  latency_anomaly?: true;
  /** [false] */
  alert_suppressed?: true;
  /** [null] */
  failure_reason?: string;
  /** [`local`] */
  region?: string;
}

/**
 * A raw row's status code and timings (issue 31). Most checks hold a status of 200 and timings
 * equal to their latency. v13 stored NULL for those in three columns, but SQLite writes a header
 * byte for every column of a row, NULL or not (docs/benchmarks.md, "NULL columns cost their
 * header byte"); v14 keeps all three in one column, `status_and_timings`, NULL when all three
 * hold their default: 2 B a check less. Not in `$rest`: against a remote target most checks'
 * duration differs from their latency (the connection is set up before the request starts), and
 * `{"duration_ms":120}` takes about 17 bytes of JSON where the packed form takes 2 or 3.
 *
 * Packed as a `record-codec.ts` text (the event log's coded records: 7-bit characters, every
 * value read back exactly) of `[duration - latency, latency - time to first byte, status]`, the
 * trailing values at their default (0, 0, 200) left out: one or two characters a value. Timings
 * that are not safe integers (no writer makes them: the prober rounds to the millisecond and
 * imports take integers) are kept whole, as `[null, status, time to first byte, duration]`.
 * No read filters or sorts on them; every reader takes them through `rawStatusCode` and
 * `rawTimings`, which read rows of v12 (all values in their columns) and v13 (NULL) the same.
 */
const RAW_DEFAULT_STATUS_CODE = 200;

/** The `status_and_timings` of a check (null: status 200, both timings equal to `latencyMs`). */
export function packStatusAndTimings(statusCode: number, latencyMs: number, timeToFirstByteMs: number, durationMs: number): string | null {
  if (statusCode === RAW_DEFAULT_STATUS_CODE && timeToFirstByteMs === latencyMs && durationMs === latencyMs) return null;
  const beyond = durationMs - latencyMs;
  const before = latencyMs - timeToFirstByteMs;
  const exact = [latencyMs, timeToFirstByteMs, durationMs, beyond, before].every(Number.isSafeInteger);
  const values: unknown[] = exact ? [beyond, before, statusCode] : [null, statusCode, timeToFirstByteMs, durationMs];
  if (exact) while (values.length > 0 && values[values.length - 1] === PACKED_DEFAULTS[values.length - 1]) values.pop();
  const packed = encodeRecord(values);
  if (packed === null) throw new Error(`A check's status and timings cannot be stored: ${JSON.stringify(values)}`);
  return packed;
}

/** The defaults of the packed values, by place: nothing beyond the latency, nothing before it, 200. */
const PACKED_DEFAULTS = [0, 0, RAW_DEFAULT_STATUS_CODE];

type StoredStatusAndTimings = Pick<RawCheckRow, 'latency_ms' | 'status_and_timings' | 'status_code' | 'time_to_first_byte_ms' | 'duration_ms'>;

/** The row's status code. */
export function rawStatusCode(row: StoredStatusAndTimings): number {
  const packed = row.status_and_timings;
  if (packed === null || packed === undefined) return row.status_code ?? RAW_DEFAULT_STATUS_CODE;
  const values = decodeRecord(packed, 0);
  return (values[0] === null ? values[1] : (values[2] ?? RAW_DEFAULT_STATUS_CODE)) as number;
}

/** The row's time to first byte and duration. */
export function rawTimings(row: StoredStatusAndTimings): { time_to_first_byte_ms: number; duration_ms: number } {
  const packed = row.status_and_timings;
  if (packed === null || packed === undefined) return { time_to_first_byte_ms: row.time_to_first_byte_ms ?? row.latency_ms, duration_ms: row.duration_ms ?? row.latency_ms };
  const values = decodeRecord(packed, 0);
  if (values[0] === null) return { time_to_first_byte_ms: values[2] as number, duration_ms: values[3] as number };
  return { time_to_first_byte_ms: row.latency_ms - ((values[1] as number | undefined) ?? 0), duration_ms: row.latency_ms + (values[0] as number) };
}

/** An applicable check (scheduled, unsuppressed) that failed: analytics counts it. */
export const OUTCOME_FAILURE = 0;
/** An applicable check that succeeded. */
export const OUTCOME_SUCCESS = 1;
/** A manual or alert-suppressed check that failed: listed, never counted by analytics. */
export const OUTCOME_OTHER_FAILURE = 2;
/** A manual or alert-suppressed check that succeeded. */
export const OUTCOME_OTHER_SUCCESS = 3;
/** The outcomes analytics counts (failures and successes of applicable checks). */
export const APPLICABLE_OUTCOMES = [OUTCOME_FAILURE, OUTCOME_SUCCESS];

/** `flags`: source `manual` (otherwise `scheduled`). */
export const CHECK_MANUAL = 1;
/** `flags`: no response excerpt was taken (`response_excerpt_omitted` false). */
export const CHECK_NO_EXCERPT = 2;

export const RAW_CHECK_COLUMNS = {
  id: 'integer',
  check_id: 'integer',
  team_id: 'integer',
  project_id: 'integer',
  endpoint_id: 'integer',
  outcome: 'integer',
  checked_at_ms: 'integer',
  latency_ms: 'integer',
  configuration_version: 'integer',
  flags: 'integer',
  status_and_timings: 'text',
  latency_threshold_ms: 'real',
} as const satisfies Record<
  Exclude<keyof RawCheckRow, 'status_code' | 'time_to_first_byte_ms' | 'duration_ms' | 'body_complete' | 'latency_anomaly' | 'alert_suppressed' | 'failure_reason' | 'region'>,
  ColumnType
>;

/**
 * The raw rows' time -> key map (rollups v15, issue 31): per minute (epoch minutes), the least
 * and greatest check id among the raw rows checked in that minute. Raw rows are keyed by their
 * check id, which the recorder hands out in the order checks are recorded, so a minute's rows
 * lie in a short range of keys, and a project's rows of a short time span are one key range of
 * the raw table (filtered by `project_id` as SQLite walks it), with no project index (about
 * 19 B a check). Widened by every raw row written, never narrowed: a row that leaves (retention,
 * a move's relabelling keeps it) leaves a range that is still a superset, and reads test the
 * time and project of every row. One small row per minute of the whole service.
 */
export const CHECK_MINUTES_COLLECTION = 'analytics_check_minutes';

export interface CheckMinuteRow {
  id: string;
  /** Epoch minutes (`floor(checked_at_ms / 60,000)`). */
  minute: number;
  first_check_id: number;
  last_check_id: number;
}

export const CHECK_MINUTE_COLUMNS = {
  id: 'integer',
  minute: 'integer',
  first_check_id: 'integer',
  last_check_id: 'integer',
} as const satisfies Record<keyof CheckMinuteRow, ColumnType>;

/** The minute of the time -> key map that holds a check of `checkedAtMs`. */
export function checkMinuteOf(checkedAtMs: number): number {
  return Math.floor(checkedAtMs / 60_000);
}

/** The map's row of the check's minute once it takes in the check's key; null when `existing` already does. */
export function widenedCheckMinute(existing: CheckMinuteRow | null, check: { check_id: number; checked_at_ms: number }): CheckMinuteRow | null {
  if (existing && existing.first_check_id <= check.check_id && check.check_id <= existing.last_check_id) return null;
  const minute = checkMinuteOf(check.checked_at_ms);
  return {
    id: String(minute),
    minute,
    first_check_id: existing ? Math.min(existing.first_check_id, check.check_id) : check.check_id,
    last_check_id: existing ? Math.max(existing.last_check_id, check.check_id) : check.check_id,
  };
}

/**
 * Probe regions (issue 25): the endpoint route answers `?region=` from rows of the endpoint's
 * checks of one region. An endpoint whose applicable checks all came from one region needs none
 * (its figures are that region's), so it has no region rows: single-region deployments pay
 * nothing. When a second region's check arrives, the endpoint's rollup and raw rows so far are
 * copied as the first region's (once, as a move does), and from then on each check also adds
 * to its region's rows. An endpoint's regions: `RollupMemberDoc.regions`.
 *
 * Region rollup rows live in `ROLLUPS_COLLECTION` under their own ids (`regionRollupId`), with
 * the endpoint rows' sums and extremes; region raw rows in `REGION_CHECKS_COLLECTION`.
 */
export const REGION_CHECKS_COLLECTION = 'analytics_region_checks';

/** One applicable check of an endpoint with checks from several regions, for its region's edges, p95 and `current`; id as a raw row's. */
export interface RegionCheckRow {
  id: string;
  check_id: number;
  endpoint_id: number;
  region: string;
  checked_at_ms: number;
  success: boolean;
  status_code: number;
  latency_ms: number;
}

export const REGION_CHECK_COLUMNS = {
  id: 'integer',
  check_id: 'integer',
  endpoint_id: 'integer',
  region: 'text',
  checked_at_ms: 'integer',
  success: 'boolean',
  status_code: 'integer',
  latency_ms: 'integer',
} as const satisfies Record<keyof RegionCheckRow, ColumnType>;
