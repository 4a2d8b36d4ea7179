import type { CheckRecordedData } from '../src/checks/domain/check.js';

/** How the analytics benches spread their synthetic checks over endpoints, projects and time. */
export interface CheckSpread {
  team: number;
  endpoints: number;
  /** The checks cover [to - spanMs, to). */
  spanMs: number;
  projectOf: (endpointId: number) => number;
}

/**
 * Check `n` of `total`: endpoints in turn, evenly spread over the span with a per-endpoint
 * offset so minutes do not all align; one check in 50 fails, latencies vary over 40-439 ms.
 */
export function syntheticCheck(spread: CheckSpread, n: number, total: number, to: number): CheckRecordedData {
  const endpoint_id = (n % spread.endpoints) + 1;
  const at = to - spread.spanMs + Math.floor((n * spread.spanMs) / total) + ((endpoint_id * 137) % 1000);
  const success = n % 50 !== 0;
  const latency = 40 + ((n * 7919) % 400);
  return {
    check_id: n + 1,
    team_id: spread.team,
    project_id: spread.projectOf(endpoint_id),
    endpoint_id,
    configuration_version: 1,
    source: 'scheduled',
    job_id: null,
    alert_suppressed: false,
    latency_anomaly: false,
    latency_threshold_ms: null,
    imported: false,
    success,
    status_code: success ? 200 : 503,
    latency_ms: latency,
    time_to_first_byte_ms: latency,
    duration_ms: latency,
    body_complete: true,
    failure_reason: success ? null : 'status: 503',
    response_excerpt: null,
    checked_at: new Date(at).toISOString(),
  };
}
