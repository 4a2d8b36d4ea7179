/**
 * A check is one probe of one endpoint. It is recorded as a `CheckRecorded` event on the
 * endpoint's check stream (`checks-<endpointId>`), whatever produced it: the scheduler, a
 * manual request, or an operator import.
 */

export const CHECK_RECORDED = 'CheckRecorded';

export type CheckSource = 'scheduled' | 'manual';

/** What the prober measured, before alerting has looked at it. */
export interface ProbeOutcome {
  success: boolean;
  /** HTTP status; 0 when no response arrived (DNS, refused, timeout, TLS). */
  status_code: number;
  latency_ms: number;
  time_to_first_byte_ms: number;
  duration_ms: number;
  body_complete: boolean;
  /** null on success; otherwise names the cause: `dns: …`, `refused: …`, `timeout: …`, `tls: …`, `status: …`, `body: …`. */
  failure_reason: string | null;
  /** Internal only: never leaves the service. */
  response_excerpt: string | null;
  checked_at: string;
}

/** Data of the CheckRecorded event (schema version 1). */
export interface CheckRecordedData extends ProbeOutcome {
  check_id: number;
  team_id: number;
  project_id: number;
  endpoint_id: number;
  configuration_version: number;
  source: CheckSource;
  /** Probe job that produced it; a redelivered job with the same id records nothing more. null for imports. */
  job_id: string | null;
  /** Covered by a maintenance window (team, project, endpoint or legacy) at `checked_at`. */
  alert_suppressed: boolean;
  latency_anomaly: boolean;
  /** Latency threshold applied to this check; null while none applies (detection off, or baseline not ready). */
  latency_threshold_ms: number | null;
  /** Imported by an operator: never raises alerts. */
  imported: boolean;
}

/** Scheduled and not suppressed: the only checks that feed analytics and alert signals. */
export function isApplicable(check: Pick<CheckRecordedData, 'source' | 'alert_suppressed'>): boolean {
  return check.source === 'scheduled' && !check.alert_suppressed;
}

/** Registers the lifts of stored CheckRecorded shapes to the current one. */
export function registerCheckUpcasters(registry: { register(type: string, fromVersion: number, fn: (data: unknown) => unknown): unknown }): void {
  void registry;
}
