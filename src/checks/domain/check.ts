/**
 * A check is one probe of one endpoint. It is recorded as a `CheckRecorded` event on the
 * endpoint's check stream (`checks-<endpointId>`), whatever produced it: the scheduler, a
 * manual request, or an operator import.
 */

import { DEFAULT_REGION } from '../../platform/config/region.js';

export const CHECK_RECORDED = 'CheckRecorded';

/** An endpoint's checks, and nothing else (alert signals are on `alerts-<endpointId>`). */
export const checksStream = (endpointId: number) => `checks-${endpointId}`;

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
  /**
   * https only: the `notAfter` of the certificate the server presented (absent when no handshake
   * succeeded, and on http). Internal: kept in the event for the certificate signal, never in a
   * public Check.
   */
  certificate_expires_at?: string;
  /**
   * How long this process's event loop was busy while the request was in flight (ms): a
   * response that waits in the socket for a busy loop reads as target latency, so up to this
   * much of `latency_ms` may be the monitor's own. Read by the latency judgment; never stored.
   */
  loop_busy_ms?: number;
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
  /**
   * Covered by a maintenance window (team, project, endpoint or legacy) at `checked_at`, or a
   * failure while an endpoint it depends on was down (then `suppressed_by` names them).
   */
  alert_suppressed: boolean;
  /** The endpoints whose outage suppressed this failing check (dependencies); absent otherwise. Kept in the event, not in the public Check. */
  suppressed_by?: number[];
  latency_anomaly: boolean;
  /** Latency threshold applied to this check; null while none applies (detection off, or baseline not ready). */
  latency_threshold_ms: number | null;
  /**
   * The latency was not judged: it exceeds the threshold only with the time the monitor's own
   * event loop was busy during the request in it (alerting's `judgeLatency`). Like a failed
   * check it moves no latency window and joins no baseline. Absent otherwise.
   */
  latency_unjudged?: true;
  /**
   * The monitor's loop was busy longer than the materiality floor during the request: judged,
   * but its latency is partly the monitor's, so it does not join the baseline. Absent otherwise.
   */
  latency_inflated?: true;
  /** Imported by an operator: never raises alerts. */
  imported: boolean;
  /**
   * Region of the prober that took it (PROBE_REGION). Absent means `local`: the embedded
   * process, imports, and checks recorded before regions existed.
   */
  region?: string;
  /**
   * Taken for one of the endpoint's regions (a job of its region quorum): alerting keeps it in
   * its region's windows. Absent otherwise.
   */
  regional?: true;
}

/**
 * What a check is besides its probe outcome and latency judgment: its ids, how it was taken, and
 * whether it is suppressed (`suppressed_by` left out when empty; `region` defaults to `local`;
 * `regional`: taken for one of the endpoint's regions).
 */
export type CheckFacts = Pick<
  CheckRecordedData,
  'check_id' | 'team_id' | 'project_id' | 'endpoint_id' | 'configuration_version' | 'source' | 'job_id' | 'alert_suppressed' | 'suppressed_by' | 'imported' | 'region'
> & { regional?: boolean };

/** The latency judgment a check carries (alerting's, on the state before the check). */
export type CheckLatencyJudgment = Pick<CheckRecordedData, 'latency_anomaly' | 'latency_threshold_ms' | 'latency_unjudged' | 'latency_inflated'>;

/**
 * The one builder of a recorded check: the recorder's, the check import's, and alerting's
 * `decide` that the property tests drive. One literal of a fixed shape, then the optional
 * fields: the key order is the stored form's (the compact form keeps it, and the SQLite log
 * keeps each key list once), and spreading the outcome into a growing object cost more than the
 * rest of the decision.
 */
export function recordedCheck(outcome: ProbeOutcome, facts: CheckFacts, judgment: CheckLatencyJudgment): CheckRecordedData {
  const check: CheckRecordedData = {
    success: outcome.success,
    status_code: outcome.status_code,
    latency_ms: outcome.latency_ms,
    time_to_first_byte_ms: outcome.time_to_first_byte_ms,
    duration_ms: outcome.duration_ms,
    body_complete: outcome.body_complete,
    failure_reason: outcome.failure_reason,
    response_excerpt: outcome.response_excerpt,
    checked_at: outcome.checked_at,
    region: facts.region ?? DEFAULT_REGION,
    check_id: facts.check_id,
    team_id: facts.team_id,
    project_id: facts.project_id,
    endpoint_id: facts.endpoint_id,
    configuration_version: facts.configuration_version,
    source: facts.source,
    job_id: facts.job_id,
    alert_suppressed: facts.alert_suppressed,
    latency_anomaly: judgment.latency_anomaly,
    latency_threshold_ms: judgment.latency_threshold_ms,
    imported: facts.imported,
  };
  if (outcome.certificate_expires_at !== undefined) check.certificate_expires_at = outcome.certificate_expires_at;
  if (judgment.latency_unjudged === true) check.latency_unjudged = true;
  if (judgment.latency_inflated === true) check.latency_inflated = true;
  if (facts.regional === true) check.regional = true;
  if (facts.suppressed_by !== undefined && facts.suppressed_by.length > 0) check.suppressed_by = facts.suppressed_by;
  return check;
}

/** Scheduled and not suppressed: the only checks that feed analytics and alert signals. */
export function isApplicable(check: Pick<CheckRecordedData, 'source' | 'alert_suppressed'>): boolean {
  return check.source === 'scheduled' && !check.alert_suppressed;
}

/**
 * Stored shapes of CheckRecorded (checks are most of the log, so every byte counts):
 *   v1: every field of CheckRecordedData, nulls and defaults included.
 *   v2: the same JSON object without the fields that hold their default, which are
 *       null (`job_id`, `failure_reason`, `response_excerpt`, `latency_threshold_ms`),
 *       `source` "scheduled", `body_complete` true, `alert_suppressed`, `latency_anomaly` and
 *       `imported` false, `region` "local", `time_to_first_byte_ms` and `duration_ms` equal to `latency_ms`, and
 *       `checked_at` equal to the envelope's `metadata.occurred_at` (every recorder sets it so).
 *   v3: v2, and a scheduled job's id (`<endpoint_id>:<due ms>`, the scheduler's form) as
 *       `job_due_lag_ms`, checked_at less the due time: a few digits instead of about 19
 *       characters on every probed check (issue 31). Any other job id stays as it is, so a v2
 *       stored form is a v3 one.
 *   v4: v3 without `endpoint_id` when the check is in its endpoint's stream (`checks-<id>`, where
 *       every recorder appends it): the stream's name says it (issue 31). A v3 stored form is a
 *       v4 one.
 *   v5: v4 without `success` when true and `status_code` when 200, what most checks hold: three
 *       characters less a successful check in the SQLite log (issue 31, session 18). A v4 stored
 *       form is a v5 one (it always holds both).
 * Reads always hand out the full CheckRecordedData: v1 is lifted to v2, v2 to v4 read as v5, v5
 * expanded.
 */
export const CHECK_RECORDED_STORED_VERSION = 5;

const CHECK_DEFAULTS = {
  source: 'scheduled',
  job_id: null,
  body_complete: true,
  failure_reason: null,
  response_excerpt: null,
  alert_suppressed: false,
  latency_anomaly: false,
  latency_threshold_ms: null,
  imported: false,
  region: DEFAULT_REGION,
} as const;

/** The v2 stored form of a check: fields at their default are left out. */
export function compactCheck(check: CheckRecordedData, occurredAt: string | undefined): Record<string, unknown> {
  return compacted(check, occurredAt, null, false);
}

/**
 * The v5 stored form (what appends store; the v3 and v4 forms are only read): v2 with a
 * scheduled job's id kept as its due time's lag behind checked_at (v3), without the endpoint id
 * when `streamId` is the endpoint's check stream (v4), and without `success` when true and
 * `status_code` when 200.
 */
export function compactCheckV5(check: CheckRecordedData, occurredAt: string | undefined, streamId: string | undefined): Record<string, unknown> {
  return compacted(check, occurredAt, jobDueLag(check), streamId !== undefined && endpointOfStream(streamId) === check.endpoint_id, true);
}

/** What v5 leaves out besides CHECK_DEFAULTS (a v2-v4 form always holds them). */
const V5_DEFAULTS = { success: true, status_code: 200 } as const;

/**
 * The stored forms in one pass (every probed check is compacted on its append): the fields at
 * their default left out, `job_id` as `job_due_lag_ms` (last) when `lag` is not null, and the
 * endpoint id left out when the stream names it. Keys keep the check's order; nothing is
 * deleted afterwards (a deleted key turns the object into a slow dictionary).
 */
function compacted(check: CheckRecordedData, occurredAt: string | undefined, lag: number | null, streamNamesEndpoint: boolean, v5 = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const fields = check as unknown as Record<string, unknown>;
  for (const key in fields) {
    const value = fields[key];
    if (value === undefined || value === null) continue;
    if (Object.hasOwn(CHECK_DEFAULTS, key) && CHECK_DEFAULTS[key as keyof typeof CHECK_DEFAULTS] === value) continue;
    if ((key === 'time_to_first_byte_ms' || key === 'duration_ms') && value === check.latency_ms) continue;
    if (key === 'checked_at' && occurredAt !== undefined && value === occurredAt) continue;
    if (key === 'job_id' && lag !== null) continue;
    if (key === 'endpoint_id' && streamNamesEndpoint) continue;
    if (v5 && Object.hasOwn(V5_DEFAULTS, key) && V5_DEFAULTS[key as keyof typeof V5_DEFAULTS] === value) continue;
    out[key] = value;
  }
  if (lag !== null) out.job_due_lag_ms = lag;
  return out;
}

/** checked_at less the due time of a job id in the scheduler's form for this endpoint; null for any other id. */
function jobDueLag(check: CheckRecordedData): number | null {
  if (typeof check.job_id !== 'string') return null;
  const prefix = `${check.endpoint_id}:`;
  if (!check.job_id.startsWith(prefix)) return null;
  const digits = check.job_id.slice(prefix.length);
  const due = Number(digits);
  const checkedMs = Date.parse(check.checked_at);
  // Only an id that `${endpoint_id}:${due}` writes back exactly.
  if (!/^(0|[1-9][0-9]*)$/.test(digits) || !Number.isSafeInteger(due) || !Number.isFinite(checkedMs)) return null;
  return checkedMs - due;
}

/** A check stream's endpoint id (`checks-<id>`), or undefined for another stream. */
function endpointOfStream(streamId: string): number | undefined {
  const match = /^checks-(0|[1-9][0-9]*)$/.exec(streamId);
  const id = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(id) ? id : undefined;
}

/**
 * The full check from its v5 (or v4, v3, v2) stored form; `occurredAt` is the envelope's
 * `metadata.occurred_at`, `streamId` the stream it was read from.
 *
 * Every check the views apply comes through here once, so it builds one literal in
 * `recordedCheck`'s key order: spreading the defaults and the stored form into one object and
 * deleting `job_due_lag_ms` afterwards was about 6 % of the main thread's samples at embedded
 * saturation (60-80 µs a call in a micro-benchmark, against 1-2 µs now), and the delete left every
 * handler reading a dictionary-mode object. A stored key this code does not
 * know is still carried over, as the spread did.
 */
export function expandCheck(stored: Record<string, unknown>, occurredAt: string, streamId: string): CheckRecordedData {
  const form = stored as Partial<CheckRecordedData> & { job_due_lag_ms?: number };
  const latency = form.latency_ms as number;
  const endpointId = form.endpoint_id ?? endpointOfStream(streamId)!;
  const checkedAt = form.checked_at ?? occurredAt;
  const lag = form.job_due_lag_ms;
  const check: CheckRecordedData = {
    success: form.success ?? V5_DEFAULTS.success,
    status_code: form.status_code ?? V5_DEFAULTS.status_code,
    latency_ms: latency,
    time_to_first_byte_ms: form.time_to_first_byte_ms ?? latency,
    duration_ms: form.duration_ms ?? latency,
    body_complete: form.body_complete ?? CHECK_DEFAULTS.body_complete,
    failure_reason: form.failure_reason ?? CHECK_DEFAULTS.failure_reason,
    response_excerpt: form.response_excerpt ?? CHECK_DEFAULTS.response_excerpt,
    checked_at: checkedAt,
    region: form.region ?? CHECK_DEFAULTS.region,
    check_id: form.check_id as number,
    team_id: form.team_id as number,
    project_id: form.project_id as number,
    endpoint_id: endpointId,
    configuration_version: form.configuration_version as number,
    source: form.source ?? CHECK_DEFAULTS.source,
    job_id: lag !== undefined ? `${endpointId}:${Date.parse(checkedAt) - lag}` : (form.job_id ?? CHECK_DEFAULTS.job_id),
    alert_suppressed: form.alert_suppressed ?? CHECK_DEFAULTS.alert_suppressed,
    latency_anomaly: form.latency_anomaly ?? CHECK_DEFAULTS.latency_anomaly,
    latency_threshold_ms: form.latency_threshold_ms ?? CHECK_DEFAULTS.latency_threshold_ms,
    imported: form.imported ?? CHECK_DEFAULTS.imported,
  };
  if (form.certificate_expires_at !== undefined) check.certificate_expires_at = form.certificate_expires_at;
  if (form.latency_unjudged !== undefined) check.latency_unjudged = form.latency_unjudged;
  if (form.latency_inflated !== undefined) check.latency_inflated = form.latency_inflated;
  if (form.regional !== undefined) check.regional = form.regional;
  if (form.suppressed_by !== undefined) check.suppressed_by = form.suppressed_by;
  const fields = check as unknown as Record<string, unknown>;
  for (const key in stored) if (!(key in fields) && key !== 'job_due_lag_ms') fields[key] = stored[key];
  return check;
}

interface CheckUpcasterRegistry {
  register(type: string, fromVersion: number, fn: (data: unknown) => unknown): unknown;
  registerStoredShape(
    type: string,
    shape: {
      version: number;
      compact(data: unknown, metadata: { occurred_at?: string } | undefined, streamId?: string): unknown;
      expand(data: unknown, event: { streamId: string; metadata: { occurred_at: string } }): unknown;
      packed?: boolean;
      streamConstants?: readonly string[];
    },
  ): unknown;
}

/** Registers the lift of stored v1 checks and the compact v2 stored shape. */
export function registerCheckUpcasters(registry: CheckUpcasterRegistry): void {
  // A v1 check is a v2 check with every default written out: nothing to drop but the nulls,
  // and `checked_at` stays (the envelope of a v1 check need not carry it).
  registry.register(CHECK_RECORDED, 1, (data) => compactCheck(data as CheckRecordedData, undefined));
  // A v2 stored form is a v3 one (its job id written out), a v3 one a v4 one (its endpoint id
  // written out), a v4 one a v5 one (its success and status code written out).
  registry.register(CHECK_RECORDED, 2, (data) => data);
  registry.register(CHECK_RECORDED, 3, (data) => data);
  registry.register(CHECK_RECORDED, 4, (data) => data);
  registry.registerStoredShape(CHECK_RECORDED, {
    version: CHECK_RECORDED_STORED_VERSION,
    compact: (data, metadata, streamId) => compactCheckV5(data as CheckRecordedData, metadata?.occurred_at, streamId),
    expand: (data, event) => expandCheck(data as Record<string, unknown>, event.metadata.occurred_at, event.streamId),
    // Checks are most of the log: the SQLite log keeps their key lists once (NewEvent.packed).
    packed: true,
    // An endpoint's checks repeat its team, project and configuration version, and a healthy
    // endpoint's checks the same excerpt of its answer: the SQLite log keeps them once per check
    // stream (NewEvent.streamConstants). In this order: a check that differs in one (a move, a
    // configuration change, another answer) still leaves out those before it.
    streamConstants: ['team_id', 'project_id', 'configuration_version', 'response_excerpt'],
  });
}
