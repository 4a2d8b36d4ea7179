/**
 * The checks view (projection `checks`: every retained check, compact), defined here once:
 * written by `projection.ts`, read through `queries.ts` (the check routes, behind the endpoint's
 * monitoring row) and named by the retention CLI, which waits for it. The checks themselves are
 * the checks context's (`checks/domain/check.ts`); the view serves monitoring's routes.
 */
import type { CheckRecordedData } from '../../../checks/domain/check.js';
import { DEFAULT_REGION } from '../../../platform/config/region.js';

export const CHECKS_VIEW = 'checks';
export const CHECKS = 'checks';

/**
 * A recorded check, compact: the optional fields are present only when they differ from their
 * default (in brackets), and `presentCheck` puts the defaults back. The response excerpt itself
 * never leaves the log; success, source and whether an excerpt was taken are `flags`. No team: a check's team
 * is its endpoint's, which never changes, and every read goes through the endpoint's row.
 */
export interface CheckDoc {
  id: string;
  check_id: number;
  endpoint_id: number;
  configuration_version: number;
  /** Bits: CHECK_FAILED, CHECK_MANUAL, CHECK_NO_EXCERPT (`checkFlags`). */
  flags: number;
  status_code: number;
  latency_ms: number;
  time_to_first_byte_ms: number;
  duration_ms: number;
  latency_threshold_ms: number | null;
  checked_at: string;
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
 * The check's three yes/no facts in one small integer, set when the check differs from a probed
 * success with a response excerpt (most checks), which is 0: SQLite keeps 0 and 1 in the row's
 * header alone, so the three take one header byte instead of three.
 */
export const CHECK_FAILED = 1;
/** Source `manual` (otherwise `scheduled`). */
export const CHECK_MANUAL = 2;
/** No response excerpt was taken (`response_excerpt_omitted` false). */
export const CHECK_NO_EXCERPT = 4;

export function checkFlags(success: boolean, manual: boolean, excerptOmitted: boolean): number {
  return (success ? 0 : CHECK_FAILED) | (manual ? CHECK_MANUAL : 0) | (excerptOmitted ? 0 : CHECK_NO_EXCERPT);
}

/** The `flags` values of the checks a list's `success` and source filters keep (undefined: either). */
export function flagsMatching(success: boolean | undefined, manual: boolean | undefined): number[] {
  const values: number[] = [];
  for (let flags = 0; flags <= (CHECK_FAILED | CHECK_MANUAL | CHECK_NO_EXCERPT); flags++) {
    if (success !== undefined && ((flags & CHECK_FAILED) === 0) !== success) continue;
    if (manual !== undefined && ((flags & CHECK_MANUAL) !== 0) !== manual) continue;
    values.push(flags);
  }
  return values;
}

/** The compact document of a recorded check (fields at their default are left out). */
export function checkViewDoc(check: CheckRecordedData): CheckDoc {
  const doc: CheckDoc = {
    id: String(check.check_id),
    check_id: check.check_id,
    endpoint_id: check.endpoint_id,
    configuration_version: check.configuration_version,
    flags: checkFlags(check.success, check.source === 'manual', check.response_excerpt !== null && check.response_excerpt !== undefined),
    status_code: check.status_code,
    latency_ms: check.latency_ms,
    time_to_first_byte_ms: check.time_to_first_byte_ms,
    duration_ms: check.duration_ms,
    latency_threshold_ms: check.latency_threshold_ms ?? null,
    checked_at: check.checked_at,
  };
  if (check.body_complete !== true) doc.body_complete = check.body_complete;
  if (check.latency_anomaly) doc.latency_anomaly = true;
  if (check.alert_suppressed) doc.alert_suppressed = true;
  if (check.failure_reason !== null && check.failure_reason !== undefined) doc.failure_reason = check.failure_reason;
  if (check.region !== undefined && check.region !== DEFAULT_REGION) doc.region = check.region;
  return doc;
}
