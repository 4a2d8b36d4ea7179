/**
 * Importing check history: an operator's checks become `CheckRecorded` events of the endpoint's
 * check stream, judged against the endpoint and the team's maintenance windows as they are now.
 * Imported checks never raise alerts, so nothing of the check stream is decided on: the import
 * appends, it does not fold `checks-<id>`.
 */
import { recordedCheck, type CheckFacts, type CheckLatencyJudgment, type CheckRecordedData, type CheckSource, type ProbeOutcome } from '../../checks/domain/check.js';
import type { EndpointSnapshot } from './endpoint-snapshot.js';
import { coverage } from './maintenance.js';
import type { MaintenanceScheduleState } from './maintenance-schedule.js';

export interface ImportedCheckInput {
  checked_at: string;
  success: boolean;
  status_code: number;
  latency_ms: number;
  time_to_first_byte_ms?: number;
  duration_ms?: number;
  source?: CheckSource;
  failure_reason?: string | null;
  body_complete?: boolean;
  /** The probe region it was taken from; default `local`. */
  region?: string;
}

/** Imported checks are not judged: they never raise alerts, and no baseline stood behind them. */
const NOT_JUDGED: CheckLatencyJudgment = { latency_anomaly: false, latency_threshold_ms: null };

/**
 * The recorded checks (built by the checks domain's one builder, as probed checks are), ids `firstCheckId` on in input order. `endpoint` is the endpoint of the
 * team the import names (`endpointOfTeam` refuses any other).
 */
export function importedChecks(endpoint: EndpointSnapshot, schedule: MaintenanceScheduleState, checks: ImportedCheckInput[], firstCheckId: number): CheckRecordedData[] {
  const windows = [...schedule.windows.values()];
  return checks.map((check, index) => {
    const checked_at = new Date(check.checked_at).toISOString();
    const outcome: ProbeOutcome = {
      success: check.success,
      status_code: check.status_code,
      latency_ms: check.latency_ms,
      time_to_first_byte_ms: check.time_to_first_byte_ms ?? check.latency_ms,
      duration_ms: check.duration_ms ?? check.latency_ms,
      body_complete: check.body_complete ?? true,
      failure_reason: check.failure_reason ?? null,
      response_excerpt: null,
      checked_at,
    };
    const facts: CheckFacts = {
      check_id: firstCheckId + index,
      team_id: endpoint.team_id,
      project_id: endpoint.project_id,
      endpoint_id: endpoint.endpoint_id,
      configuration_version: endpoint.configuration_version,
      source: check.source ?? 'scheduled',
      job_id: null,
      alert_suppressed: coverage(checked_at, endpoint, windows).under_maintenance,
      imported: true,
      region: check.region,
    };
    return recordedCheck(outcome, facts, NOT_JUDGED);
  });
}
