/**
 * Events of the incident aggregate, one stream per incident (`incident-<id>`).
 *
 * Every event carries everything a replay needs: evolve never looks anything up and never reads
 * the clock. Timestamps are RFC 3339 UTC with milliseconds. All events are schema version 1.
 */
import { DEFAULT_REGION } from '../../platform/config/region.js';
import type { CheckRecordedData } from '../../checks/domain/check.js';

export const INCIDENT_OPENED = 'IncidentOpened';
export const INCIDENT_DETAILS_UPDATED = 'IncidentDetailsUpdated';
export const INCIDENT_STATUS_CHANGED = 'IncidentStatusChanged';
export const INCIDENT_RESOLVED = 'IncidentResolved';
export const INCIDENT_REOPENED = 'IncidentReopened';
export const INCIDENT_AUTO_RESOLVE_CHANGED = 'IncidentAutoResolveChanged';
export const INCIDENT_CHECK_LINKED = 'IncidentCheckLinked';
export const COMMENT_ADDED = 'CommentAdded';
export const COMMENT_UPDATED = 'CommentUpdated';
export const COMMENT_DELETED = 'CommentDeleted';
export const CHECKPOINT_ADDED = 'CheckpointAdded';
export const CHECKPOINT_UPDATED = 'CheckpointUpdated';
export const INCIDENT_MERGED_INTO = 'IncidentMergedInto';
export const INCIDENTS_ABSORBED = 'IncidentsAbsorbed';
export const INCIDENT_MERGE_RELEASED = 'IncidentMergeReleased';
/** Grouping (issue 26): another endpoint's automatic incident joined this one instead of opening. */
export const INCIDENT_ENDPOINT_JOINED = 'IncidentEndpointJoined';
/** Grouping: one endpoint of a grouped automatic incident recovered. */
export const INCIDENT_ENDPOINT_RECOVERED = 'IncidentEndpointRecovered';
/** An alert awaited as a whole (an SLO burn alert: no endpoint of it recovers) ended while auto_resolve was off. */
export const INCIDENT_ALERT_ENDED = 'IncidentAlertEnded';
/** That alert triggered again: the incident kept open awaits it again instead of a second one opening. */
export const INCIDENT_ALERT_TRIGGERED_AGAIN = 'IncidentAlertTriggeredAgain';

export const INCIDENT_EVENT_TYPES = [
  INCIDENT_OPENED,
  INCIDENT_DETAILS_UPDATED,
  INCIDENT_STATUS_CHANGED,
  INCIDENT_RESOLVED,
  INCIDENT_REOPENED,
  INCIDENT_AUTO_RESOLVE_CHANGED,
  INCIDENT_CHECK_LINKED,
  COMMENT_ADDED,
  COMMENT_UPDATED,
  COMMENT_DELETED,
  CHECKPOINT_ADDED,
  CHECKPOINT_UPDATED,
  INCIDENT_MERGED_INTO,
  INCIDENTS_ABSORBED,
  INCIDENT_MERGE_RELEASED,
  INCIDENT_ENDPOINT_JOINED,
  INCIDENT_ENDPOINT_RECOVERED,
  INCIDENT_ALERT_ENDED,
  INCIDENT_ALERT_TRIGGERED_AGAIN,
] as const;

export function incidentStreamId(incidentId: number): string {
  return `incident-${incidentId}`;
}

export type Severity = 'warning' | 'critical';
export const SEVERITIES: readonly Severity[] = ['warning', 'critical'];
export type IncidentSource = 'manual' | 'automatic';
export type JsonObject = Record<string, unknown>;

/** A before/after pair; history renders it as "field: from -> to". */
export interface Change<T> {
  from: T;
  to: T;
}

/**
 * A failing check as the incident detail shows it: the public Check fields. There is no
 * response excerpt field at all, so none can leak through an incident.
 */
export interface LinkedCheck {
  id: number;
  endpoint_id: number;
  configuration_version: number;
  success: boolean;
  status_code: number;
  latency_ms: number;
  time_to_first_byte_ms: number;
  duration_ms: number;
  source: 'scheduled' | 'manual';
  body_complete: boolean;
  latency_anomaly: boolean;
  latency_threshold_ms: number | null;
  alert_suppressed: boolean;
  failure_reason: string | null;
  response_excerpt_omitted: boolean;
  /** Region of the prober that took it; absent (`local`, as picking fills in) on checks linked before regions existed. */
  region?: string;
  checked_at: string;
}

/** The fields of a LinkedCheck, each once: what a linked check shows and nothing else. */
const LINKED_CHECK_FIELDS = [
  'id',
  'endpoint_id',
  'configuration_version',
  'success',
  'status_code',
  'latency_ms',
  'time_to_first_byte_ms',
  'duration_ms',
  'source',
  'body_complete',
  'latency_anomaly',
  'latency_threshold_ms',
  'alert_suppressed',
  'failure_reason',
  'response_excerpt_omitted',
  'region',
  'checked_at',
] as const satisfies ReadonlyArray<keyof LinkedCheck>;

/** Field by field, so nothing stored beside a check (such as an excerpt) can slip out. */
export function pickLinkedCheck(check: LinkedCheck): LinkedCheck {
  const picked: Partial<Record<keyof LinkedCheck, unknown>> = {};
  for (const field of LINKED_CHECK_FIELDS) picked[field] = check[field];
  picked.region ??= DEFAULT_REGION;
  return picked as LinkedCheck;
}

/** Copies the public fields of a recorded check; the internal excerpt is dropped here. */
export function toLinkedCheck(check: CheckRecordedData): LinkedCheck {
  return pickLinkedCheck({ ...check, id: check.check_id, response_excerpt_omitted: check.response_excerpt !== null, region: check.region ?? DEFAULT_REGION });
}

export interface Comment {
  id: number;
  body: string;
  pinned: boolean;
  created_at: string;
  updated_at: string;
}

export interface Checkpoint {
  id: number;
  title: string;
  body: string;
  status_label: string;
  created_at: string;
  updated_at: string;
}

export interface MergedIncidentRef {
  id: number;
  title: string;
  merged_at: string;
}

/**
 * Fields PATCH /incidents/:id may change: declared here once, and every shape of an incident
 * (the opening event, the folded state, the public summary) extends it.
 */
export interface IncidentDetails {
  project_id: number;
  endpoint_ids: number[];
  title: string;
  type: string;
  severity: Severity;
  detection_reason: string;
  metadata: JsonObject;
  first_error_at: string;
  last_error_at: string;
}

export interface IncidentOpenedData extends IncidentDetails {
  incident_id: number;
  team_id: number;
  status_id: number;
  status_name: string;
  auto_resolve: boolean;
  source: IncidentSource;
  opened_at: string;
}
export type DetailField = keyof IncidentDetails;
export const DETAIL_FIELDS: readonly DetailField[] = [
  'project_id',
  'endpoint_ids',
  'title',
  'type',
  'severity',
  'detection_reason',
  'metadata',
  'first_error_at',
  'last_error_at',
];

export interface IncidentDetailsUpdatedData {
  incident_id: number;
  /** Only the fields that changed, each with its previous value. */
  changes: { [K in DetailField]?: Change<IncidentDetails[K]> };
  updated_at: string;
}

export interface IncidentStatusChangedData {
  incident_id: number;
  status_id: number;
  status_name: string;
  previous_status_id: number;
  previous_status_name: string;
  changed_at: string;
}

/** `merge`: a source incident resolved because it was merged into another. */
export type ResolvedBy = 'manual' | 'automatic' | 'merge';

export interface IncidentResolvedData {
  incident_id: number;
  resolved_at: string;
  by: ResolvedBy;
  /** Why, when it is not what `by` says alone (an automatic resolution after the recovery). */
  reason?: string;
}

export interface IncidentReopenedData {
  incident_id: number;
  reopened_at: string;
  previous_resolved_at: string;
}

export interface IncidentAutoResolveChangedData {
  incident_id: number;
  auto_resolve: boolean;
  changed_at: string;
}

/**
 * A failing check joins the incident: error_count + 1, last_error_at moves forward to the
 * check time (never back), and the check's endpoint joins endpoint_ids if missing.
 */
export interface IncidentEndpointJoinedData {
  incident_id: number;
  endpoint_id: number;
  /** The alert signal that would have opened an incident of its own. */
  signal: string;
  /** Why it triggered, as the incident it would have opened would say. */
  reason: string;
  joined_at: string;
  /** The endpoint was in the incident already and had recovered: it triggered again. */
  again?: true;
}

export interface IncidentEndpointRecoveredData {
  incident_id: number;
  endpoint_id: number;
  recovered_at: string;
  /** The endpoint was deleted: the incident stops waiting for a recovery that cannot come. */
  endpoint_deleted?: true;
}

/**
 * `alert`: its name as the history shows it. `sequence`: the transition's place in the alert's
 * own order at its source (a later transition has a greater one), so a transition handled again
 * after a later one was recorded changes nothing.
 */
export interface IncidentAlertEndedData {
  incident_id: number;
  alert: string;
  sequence: number;
  ended_at: string;
}

export interface IncidentAlertTriggeredAgainData {
  incident_id: number;
  alert: string;
  sequence: number;
  /** Why it triggered, as the incident it would have opened would say. */
  reason: string;
  triggered_at: string;
}

export interface IncidentCheckLinkedData {
  incident_id: number;
  check: LinkedCheck;
  linked_at: string;
}

export interface CommentAddedData {
  incident_id: number;
  comment_id: number;
  body: string;
  pinned: boolean;
  created_at: string;
}

export interface CommentUpdatedData {
  incident_id: number;
  comment_id: number;
  changes: { body?: Change<string>; pinned?: Change<boolean> };
  updated_at: string;
}

export interface CommentDeletedData {
  incident_id: number;
  comment_id: number;
  deleted_at: string;
}

export interface CheckpointAddedData {
  incident_id: number;
  checkpoint_id: number;
  title: string;
  body: string;
  status_label: string;
  created_at: string;
}

export interface CheckpointUpdatedData {
  incident_id: number;
  checkpoint_id: number;
  changes: { title?: Change<string>; body?: Change<string>; status_label?: Change<string> };
  updated_at: string;
}

/**
 * On the source: it now lives on in the target. Its comments, checkpoints and checks left with
 * the merge (they are on the target); its own summary fields stay as they were, readable.
 */
export interface IncidentMergedIntoData {
  incident_id: number;
  target_id: number;
  merged_at: string;
  /**
   * The merge request that marked the source (absent on marks recorded before merges carried
   * one). Only that merge, or its retry with the same Idempotency-Key, finishes or releases it.
   */
  merge_id?: string;
}

/**
 * On a source: the merge that marked it failed before the target absorbed it, so the mark is
 * undone. The source is writable again with the content it had before the merge (`restored`;
 * nothing could change it while it was marked). The IncidentMergedInto stays in the history.
 */
export interface IncidentMergeReleasedData {
  incident_id: number;
  target_id: number;
  merge_id: string | null;
  /** Why the merge failed, as the request was answered (problem code and detail). */
  reason: string;
  restored: {
    resolved_at: string | null;
    comments: Comment[];
    checkpoints: Checkpoint[];
    checks: LinkedCheck[];
  };
  released_at: string;
}

/** What one source hands over to the target, as it was at merge time. */
export interface AbsorbedSource {
  id: number;
  title: string;
  endpoint_ids: number[];
  error_count: number;
  first_error_at: string;
  last_error_at: string;
  checks: LinkedCheck[];
  comments: Comment[];
  checkpoints: Checkpoint[];
  /** Incidents that had been merged into the source earlier: they now count for the target. */
  merged_incidents: MergedIncidentRef[];
}

/** On the target: the sources' content moves in; `changes` holds the resulting summary values. */
export interface IncidentsAbsorbedData {
  incident_id: number;
  sources: AbsorbedSource[];
  changes: {
    endpoint_ids?: Change<number[]>;
    error_count?: Change<number>;
    first_error_at?: Change<string>;
    last_error_at?: Change<string>;
  };
  merged_at: string;
}

interface Ev<T extends string, D> {
  type: T;
  data: D;
}

export type IncidentEvent =
  | Ev<typeof INCIDENT_OPENED, IncidentOpenedData>
  | Ev<typeof INCIDENT_DETAILS_UPDATED, IncidentDetailsUpdatedData>
  | Ev<typeof INCIDENT_STATUS_CHANGED, IncidentStatusChangedData>
  | Ev<typeof INCIDENT_RESOLVED, IncidentResolvedData>
  | Ev<typeof INCIDENT_REOPENED, IncidentReopenedData>
  | Ev<typeof INCIDENT_AUTO_RESOLVE_CHANGED, IncidentAutoResolveChangedData>
  | Ev<typeof INCIDENT_CHECK_LINKED, IncidentCheckLinkedData>
  | Ev<typeof INCIDENT_ENDPOINT_JOINED, IncidentEndpointJoinedData>
  | Ev<typeof INCIDENT_ENDPOINT_RECOVERED, IncidentEndpointRecoveredData>
  | Ev<typeof INCIDENT_ALERT_ENDED, IncidentAlertEndedData>
  | Ev<typeof INCIDENT_ALERT_TRIGGERED_AGAIN, IncidentAlertTriggeredAgainData>
  | Ev<typeof COMMENT_ADDED, CommentAddedData>
  | Ev<typeof COMMENT_UPDATED, CommentUpdatedData>
  | Ev<typeof COMMENT_DELETED, CommentDeletedData>
  | Ev<typeof CHECKPOINT_ADDED, CheckpointAddedData>
  | Ev<typeof CHECKPOINT_UPDATED, CheckpointUpdatedData>
  | Ev<typeof INCIDENT_MERGED_INTO, IncidentMergedIntoData>
  | Ev<typeof INCIDENTS_ABSORBED, IncidentsAbsorbedData>
  | Ev<typeof INCIDENT_MERGE_RELEASED, IncidentMergeReleasedData>;

export type IncidentEventType = IncidentEvent['type'];

export function isIncidentEvent(event: { type: string; data: unknown }): event is IncidentEvent {
  return (INCIDENT_EVENT_TYPES as readonly string[]).includes(event.type);
}
