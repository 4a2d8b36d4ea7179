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
 * never leaves the log; `manual` is the source (`manual` or `scheduled`).
 */
export interface CheckDoc {
  id: string;
  check_id: number;
  team_id: number;
  endpoint_id: number;
  configuration_version: number;
  success: boolean;
  status_code: number;
  latency_ms: number;
  time_to_first_byte_ms: number;
  duration_ms: number;
  latency_threshold_ms: number | null;
  manual: boolean;
  checked_at: string;
  response_excerpt_omitted: boolean;
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

/** The compact document of a recorded check (fields at their default are left out). */
export function checkViewDoc(check: CheckRecordedData): CheckDoc {
  const doc: CheckDoc = {
    id: String(check.check_id),
    check_id: check.check_id,
    team_id: check.team_id,
    endpoint_id: check.endpoint_id,
    configuration_version: check.configuration_version,
    success: check.success,
    status_code: check.status_code,
    latency_ms: check.latency_ms,
    time_to_first_byte_ms: check.time_to_first_byte_ms,
    duration_ms: check.duration_ms,
    latency_threshold_ms: check.latency_threshold_ms ?? null,
    manual: check.source === 'manual',
    checked_at: check.checked_at,
    response_excerpt_omitted: check.response_excerpt !== null && check.response_excerpt !== undefined,
  };
  if (check.body_complete !== true) doc.body_complete = check.body_complete;
  if (check.latency_anomaly) doc.latency_anomaly = true;
  if (check.alert_suppressed) doc.alert_suppressed = true;
  if (check.failure_reason !== null && check.failure_reason !== undefined) doc.failure_reason = check.failure_reason;
  if (check.region !== undefined && check.region !== DEFAULT_REGION) doc.region = check.region;
  return doc;
}
