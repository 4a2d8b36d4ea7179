/**
 * The incident aggregate: `decide(state, command, context) -> events` and
 * `evolve(state, event) -> state` over one stream per incident (`incident-<id>`).
 *
 * Decisions written down here:
 * - A command that changes nothing returns no events (PATCH with the values already stored,
 *   `resolved: true` on a resolved incident, `resolved: false` on an open one, a check linked
 *   twice). History then shows no entry, which is the truth: nothing changed.
 * - `resolved: true` on a resolved incident keeps the first `resolved_at` (no event).
 * - Every write to a merged incident throws IncidentMergedError, automatic writes included:
 *   the caller follows `merged_into_id` to the target instead. The one exception is the
 *   release of a merge that failed before its target absorbed the source (IncidentMergeReleased
 *   restores the source as it was; both events stay in its history).
 * - Merge moves the sources' checks, comments and checkpoints to the target; a source keeps its
 *   own summary fields (title, endpoints, counts) and stays readable with `merged_into_id`.
 *   Comment and checkpoint ids are allocated team-wide outside, so moved items keep their ids.
 * - Timestamps given in commands are stored as UTC with milliseconds.
 * - Every event moves `updated_at` to its own time.
 */
import {
  CHECKPOINT_ADDED,
  CHECKPOINT_UPDATED,
  COMMENT_ADDED,
  COMMENT_DELETED,
  COMMENT_UPDATED,
  DETAIL_FIELDS,
  INCIDENT_AUTO_RESOLVE_CHANGED,
  INCIDENT_CHECK_LINKED,
  INCIDENT_DETAILS_UPDATED,
  INCIDENT_ENDPOINT_JOINED,
  INCIDENT_ENDPOINT_RECOVERED,
  INCIDENT_ALERT_ENDED,
  INCIDENT_ALERT_TRIGGERED_AGAIN,
  INCIDENT_MERGE_RELEASED,
  INCIDENT_MERGED_INTO,
  INCIDENT_OPENED,
  INCIDENT_REOPENED,
  INCIDENT_RESOLVED,
  INCIDENT_STATUS_CHANGED,
  INCIDENTS_ABSORBED,
  type AbsorbedSource,
  type Change,
  type Checkpoint,
  type CheckpointUpdatedData,
  type Comment,
  type CommentUpdatedData,
  type IncidentDetails,
  type IncidentDetailsUpdatedData,
  type IncidentEvent,
  type IncidentSource,
  type IncidentsAbsorbedData,
  type JsonObject,
  type LinkedCheck,
  type MergedIncidentRef,
  type Severity,
} from './events.js';
import {
  CheckpointNotFoundError,
  CommentNotFoundError,
  IncidentAlreadyExistsError,
  IncidentMergedError,
  IncidentNotFoundError,
  IncidentValidationError,
  type FieldError,
} from './errors.js';
import { IdList } from './id-list.js';
import { compareTimes, earliest, latest, toUtcMillis } from './time.js';

export interface Incident extends IncidentDetails {
  id: number;
  team_id: number;
  source: IncidentSource;
  auto_resolve: boolean;
  status_id: number;
  status_name: string;
  error_count: number;
  resolved_at: string | null;
  created_at: string;
  updated_at: string;
  /**
   * Live comments (deleted ones are gone), in the order they arrived; checkpoints; every linked
   * check (a long outage links tens of thousands). O(1) to add to and to look up (see IdList).
   */
  comments: IdList<Comment>;
  checkpoints: IdList<Checkpoint>;
  checks: IdList<LinkedCheck>;
  merged_incidents: MergedIncidentRef[];
  merged_into_id: number | null;
  /**
   * Grouped automatic incidents only (absent until an endpoint joins): the endpoints whose signal
   * has not recovered yet; the incident auto-resolves when none is left.
   */
  awaiting_recovery?: readonly number[];
  /**
   * An incident that awaits an alert as a whole (an SLO burn alert; absent until the alert's
   * first transition after the opening is recorded): whether it has ended, and the sequence of
   * its last recorded transition.
   */
  alert?: { ended: boolean; sequence: number };
}

/** null until the IncidentOpened event. */
export type IncidentState = Incident | null;

export function initialState(): IncidentState {
  return null;
}

// ---------------------------------------------------------------------------------------------
// Commands
// ---------------------------------------------------------------------------------------------

export interface StatusRef {
  id: number;
  name: string;
}

/** Manual create, from a validated body; the caller resolved the status and the project. */
export interface CreateIncident {
  kind: 'create';
  incident_id: number;
  team_id: number;
  project_id: number;
  endpoint_ids: number[];
  title: string;
  type?: string;
  severity?: Severity;
  detection_reason?: string;
  metadata?: JsonObject;
  status: StatusRef;
  auto_resolve?: boolean;
  first_error_at?: string;
  last_error_at?: string;
}

export type AlertSignal = 'availability' | 'latency' | 'certificate';

/** The type of an automatic incident: an endpoint's alert signal, or an SLO burning its error budget (docs/decisions.md). */
export type AutomaticIncidentType = AlertSignal | 'slo_burn';

/** A triggered alert signal opens an automatic incident (api-decisions: Alerting). */
export interface OpenAutomaticIncident {
  kind: 'open_automatic';
  incident_id: number;
  team_id: number;
  project_id: number;
  endpoint_id: number;
  signal: AutomaticIncidentType;
  /** Every affected endpoint, `endpoint_id` first (an SLO's); default `[endpoint_id]`. */
  endpoint_ids?: number[];
  /** Default: the signal's (availability critical, latency warning). */
  severity?: Severity;
  metadata?: JsonObject;
  title: string;
  detection_reason?: string;
  status: StatusRef;
  /**
   * The checks of the run that triggered the signal, oldest first; linked in the same append as
   * the opening, so the incident is never seen (nor announced) without them.
   */
  checks?: LinkedCheck[];
}

export interface UpdateDetails {
  kind: 'update_details';
  changes: Partial<IncidentDetails>;
}

export interface UpdateStatus {
  kind: 'update_status';
  status?: StatusRef;
  resolved?: boolean;
  auto_resolve?: boolean;
}

export interface LinkFailingCheck {
  kind: 'link_check';
  check: LinkedCheck;
}

/**
 * The signal recovered: resolves the incident only when auto_resolve is on. A grouped incident
 * records the recovery of `endpoint_id` and resolves once every endpoint in it has recovered.
 * `endpoint_deleted`: the endpoint was deleted, so its recovery will never come; the incident
 * stops waiting for it (recorded even when not grouped) as if it had recovered.
 */
export interface ResolveOnRecovery {
  kind: 'resolve_on_recovery';
  endpoint_id?: number;
  endpoint_deleted?: true;
  /**
   * The alert the incident awaits as a whole ended (no endpoint: an SLO burn alert). With
   * auto_resolve off the end is recorded, so turning auto_resolve on later resolves it.
   */
  alert?: AlertTransition;
}

/** An alert awaited as a whole, and one transition's place in its own order (a later transition has a greater `sequence`). */
export interface AlertTransition {
  name: string;
  sequence: number;
}

/** The alert a kept-open incident awaits (its end recorded) triggered again: the incident awaits it again. */
export interface AlertTriggeredAgain {
  kind: 'alert_triggered_again';
  alert: AlertTransition;
  reason: string;
}

/**
 * Grouping: an endpoint's automatic incident about to open joins this open automatic incident
 * (the caller chose it: same project and type, opened within the project's window). The run's
 * checks are linked in the same append. An endpoint already waiting for its recovery in it
 * only links the checks.
 */
export interface JoinAutomatic {
  kind: 'join_automatic';
  endpoint_id: number;
  signal: string;
  reason: string;
  checks?: LinkedCheck[];
}

export interface AddComment {
  kind: 'add_comment';
  comment_id: number;
  body: string;
  pinned?: boolean;
}

export interface UpdateComment {
  kind: 'update_comment';
  comment_id: number;
  body?: string;
  pinned?: boolean;
}

export interface DeleteComment {
  kind: 'delete_comment';
  comment_id: number;
}

export interface AddCheckpoint {
  kind: 'add_checkpoint';
  checkpoint_id: number;
  title: string;
  body?: string;
  /** Defaults to the incident's status name at posting time. */
  status_label?: string;
}

export interface UpdateCheckpoint {
  kind: 'update_checkpoint';
  checkpoint_id: number;
  title?: string;
  body?: string;
  status_label?: string;
}

/** Source side of a merge. */
export interface MarkMergedInto {
  kind: 'mark_merged_into';
  target_id: number;
  merge_id?: string;
}

/**
 * Undoes a source's mark when its merge failed before the target absorbed it. `restored` is the
 * source as it was just before the mark. A source no longer marked into `target_id` is left as
 * it is (no event): releasing twice changes nothing.
 */
export interface ReleaseMerge {
  kind: 'release_merge';
  target_id: number;
  merge_id: string | null;
  reason: string;
  restored: Incident;
}

/** Target side of a merge; the caller loaded every source's current state. */
export interface AbsorbSources {
  kind: 'absorb_sources';
  sources: Incident[];
}

export type IncidentCommand =
  | CreateIncident
  | OpenAutomaticIncident
  | UpdateDetails
  | UpdateStatus
  | LinkFailingCheck
  | ResolveOnRecovery
  | AlertTriggeredAgain
  | JoinAutomatic
  | AddComment
  | UpdateComment
  | DeleteComment
  | AddCheckpoint
  | UpdateCheckpoint
  | MarkMergedInto
  | ReleaseMerge
  | AbsorbSources;

export interface DecideContext {
  /** The current time, RFC 3339 UTC with milliseconds. */
  now: string;
}

// ---------------------------------------------------------------------------------------------
// decide
// ---------------------------------------------------------------------------------------------

export function decide(state: IncidentState, command: IncidentCommand, context: DecideContext): IncidentEvent[] {
  const now = toUtcMillis(context.now);
  switch (command.kind) {
    case 'create':
      return decideCreate(state, command, now);
    case 'open_automatic':
      return decideOpenAutomatic(state, command, now);
    case 'release_merge':
      return decideReleaseMerge(state, command, now);
    default:
      return decideOnExisting(writable(state), command, now);
  }
}

type ExistingCommand = Exclude<IncidentCommand, CreateIncident | OpenAutomaticIncident | ReleaseMerge>;

function decideOnExisting(incident: Incident, command: ExistingCommand, now: string): IncidentEvent[] {
  switch (command.kind) {
    case 'update_details':
      return decideUpdateDetails(incident, command, now);
    case 'update_status':
      return decideUpdateStatus(incident, command, now);
    case 'link_check':
      return decideLinkCheck(incident, command.check, now);
    case 'resolve_on_recovery':
      return decideResolveOnRecovery(incident, command, now);
    case 'alert_triggered_again':
      return decideAlertTriggeredAgain(incident, command, now);
    case 'join_automatic':
      return decideJoinAutomatic(incident, command, now);
    case 'add_comment':
      return decideAddComment(incident, command, now);
    case 'update_comment':
      return decideUpdateComment(incident, command, now);
    case 'delete_comment':
      findComment(incident, command.comment_id);
      return [{ type: COMMENT_DELETED, data: { incident_id: incident.id, comment_id: command.comment_id, deleted_at: now } }];
    case 'add_checkpoint':
      return decideAddCheckpoint(incident, command, now);
    case 'update_checkpoint':
      return decideUpdateCheckpoint(incident, command, now);
    case 'mark_merged_into':
      return decideMarkMergedInto(incident, command, now);
    case 'absorb_sources':
      return decideAbsorb(incident, command.sources, now);
  }
}

/** The incident exists and has not been merged away. */
function writable(state: IncidentState): Incident {
  if (state === null) throw new IncidentNotFoundError(null);
  if (state.merged_into_id !== null) throw new IncidentMergedError(state.id, state.merged_into_id);
  return state;
}

function fail(field: string, code: FieldError['code'], message: string): never {
  throw new IncidentValidationError([{ field, code, message }]);
}

function requireOrderedErrorTimes(first: string, last: string): void {
  if (compareTimes(last, first) < 0) fail('last_error_at', 'conflict', 'last_error_at must not precede first_error_at');
}

function decideCreate(state: IncidentState, command: CreateIncident, now: string): IncidentEvent[] {
  if (state !== null) throw new IncidentAlreadyExistsError(state.id);
  const firstErrorAt = command.first_error_at === undefined ? now : toUtcMillis(command.first_error_at);
  const lastErrorAt = command.last_error_at === undefined ? firstErrorAt : toUtcMillis(command.last_error_at);
  requireOrderedErrorTimes(firstErrorAt, lastErrorAt);
  return [
    {
      type: INCIDENT_OPENED,
      data: {
        incident_id: command.incident_id,
        team_id: command.team_id,
        project_id: command.project_id,
        endpoint_ids: [...command.endpoint_ids],
        title: command.title,
        type: command.type ?? 'manual',
        severity: command.severity ?? 'warning',
        detection_reason: command.detection_reason ?? '',
        metadata: command.metadata ?? {},
        status_id: command.status.id,
        status_name: command.status.name,
        auto_resolve: command.auto_resolve ?? false,
        first_error_at: firstErrorAt,
        last_error_at: lastErrorAt,
        source: 'manual',
        opened_at: now,
      },
    },
  ];
}

const SIGNAL_SEVERITY: Record<AutomaticIncidentType, Severity> = { availability: 'critical', latency: 'warning', certificate: 'warning', slo_burn: 'critical' };
/** The incident type of each automatic source (docs/decisions.md: certificate_expiry). */
export const SIGNAL_INCIDENT_TYPE: Record<AutomaticIncidentType, string> = { availability: 'availability', latency: 'latency', certificate: 'certificate_expiry', slo_burn: 'slo_burn' };

function decideOpenAutomatic(state: IncidentState, command: OpenAutomaticIncident, now: string): IncidentEvent[] {
  if (state !== null) throw new IncidentAlreadyExistsError(state.id);
  const checks = command.checks ?? [];
  const firstErrorAt = checks.length > 0 ? toUtcMillis(checks[0].checked_at) : now;
  const opened: IncidentEvent = {
    type: INCIDENT_OPENED,
    data: {
      incident_id: command.incident_id,
      team_id: command.team_id,
      project_id: command.project_id,
      endpoint_ids: command.endpoint_ids ? [...command.endpoint_ids] : [command.endpoint_id],
      title: command.title,
      type: SIGNAL_INCIDENT_TYPE[command.signal],
      severity: command.severity ?? SIGNAL_SEVERITY[command.signal],
      detection_reason: command.detection_reason ?? '',
      metadata: command.metadata ?? {},
      status_id: command.status.id,
      status_name: command.status.name,
      auto_resolve: true,
      first_error_at: firstErrorAt,
      last_error_at: firstErrorAt,
      source: 'automatic',
      opened_at: now,
    },
  };
  const seen = new Set<number>();
  const links: IncidentEvent[] = [];
  for (const check of checks) {
    if (seen.has(check.id)) continue;
    seen.add(check.id);
    links.push({ type: INCIDENT_CHECK_LINKED, data: { incident_id: command.incident_id, check: normalizedCheck(check), linked_at: now } });
  }
  return [opened, ...links];
}

function decideResolveOnRecovery(incident: Incident, command: ResolveOnRecovery, now: string): IncidentEvent[] {
  // A resolved incident records no more recoveries or alert ends: a reactor may still hold it as
  // its alert's incident after a person resolved it (kept open, then closed by hand), and an
  // endpoint deleted days later is no part of its history.
  if (incident.resolved_at !== null) return [];
  if (command.alert !== undefined) return decideAlertEnded(incident, command.alert, now);
  const resolve = automaticResolution(incident, now);
  if (command.endpoint_id === undefined) return resolve;
  // Only an endpoint the incident waits for resolves it: a merge's source endpoint, whose outage
  // the target now holds (docs/decisions.md), recovering does not end the target's own outage.
  if (!awaitingRecovery(incident).includes(command.endpoint_id)) return [];
  // An ungrouped incident resolves on its recovery without a per-endpoint event. A deletion is
  // recorded all the same, so the history says why it resolved; so is a recovery that leaves it
  // open (auto_resolve off), so turning auto_resolve on later finds nothing still failing.
  const recordsRecovery = incident.awaiting_recovery !== undefined || command.endpoint_deleted !== undefined || !incident.auto_resolve;
  if (!recordsRecovery) return resolve;
  const recovered: IncidentEvent = {
    type: INCIDENT_ENDPOINT_RECOVERED,
    data: { incident_id: incident.id, endpoint_id: command.endpoint_id, recovered_at: now, ...(command.endpoint_deleted ? { endpoint_deleted: true as const } : {}) },
  };
  return awaitingRecovery(incident).length === 1 ? [recovered, ...resolve] : [recovered];
}

/**
 * The awaited alert ended: resolved with auto_resolve on, else the end is recorded. An alert
 * already ended changes nothing, nor does an end older than the last transition recorded (a
 * batch handled again after the alert triggered again).
 */
function decideAlertEnded(incident: Incident, alert: AlertTransition, now: string): IncidentEvent[] {
  if (incident.alert !== undefined && (incident.alert.ended || alert.sequence <= incident.alert.sequence)) return [];
  const resolve = automaticResolution(incident, now);
  if (resolve.length > 0) return resolve;
  return [{ type: INCIDENT_ALERT_ENDED, data: { incident_id: incident.id, alert: alert.name, sequence: alert.sequence, ended_at: now } }];
}

/** Only an alert whose end was recorded, and only by a later transition, is awaited again. */
function decideAlertTriggeredAgain(incident: Incident, command: AlertTriggeredAgain, now: string): IncidentEvent[] {
  const awaitedAlert = incident.alert;
  if (awaitedAlert === undefined || !awaitedAlert.ended || command.alert.sequence <= awaitedAlert.sequence) return [];
  if (incident.resolved_at !== null) return [];
  return [
    {
      type: INCIDENT_ALERT_TRIGGERED_AGAIN,
      data: { incident_id: incident.id, alert: command.alert.name, sequence: command.alert.sequence, reason: command.reason, triggered_at: now },
    },
  ];
}

/** The resolution a recovery gives: only with auto_resolve on, once (`reason` says why when it is not the recovery itself). */
function automaticResolution(incident: Incident, now: string, reason?: string): IncidentEvent[] {
  if (!incident.auto_resolve || incident.resolved_at !== null) return [];
  return [resolved(incident, now, 'automatic', reason)];
}

/**
 * Why nothing keeps the incident open once auto_resolve is on (null: something does): every
 * endpoint it waited for has recovered, or the alert it awaits as a whole has ended (recorded
 * while auto_resolve was off). Never true of an incident whose recoveries are not recorded
 * (manual ones, or an open one that nothing recovered from).
 */
function nothingStillFailing(incident: Incident): string | null {
  if (incident.alert !== undefined) return incident.alert.ended ? 'automatic resolution turned on after its alert had ended' : null;
  const allRecovered = incident.awaiting_recovery !== undefined && incident.awaiting_recovery.length === 0;
  return allRecovered ? 'automatic resolution turned on after every endpoint had recovered' : null;
}

function decideJoinAutomatic(incident: Incident, command: JoinAutomatic, now: string): IncidentEvent[] {
  if (incident.source !== 'automatic') throw new IncidentValidationError([{ field: 'source', code: 'invalid_value', message: 'only an automatic incident can be joined' }]);
  if (incident.resolved_at !== null) throw new IncidentValidationError([{ field: 'resolved_at', code: 'invalid_value', message: 'a resolved incident cannot be joined' }]);
  const events: IncidentEvent[] = [];
  if (!awaitingRecovery(incident).includes(command.endpoint_id)) {
    events.push({
      type: INCIDENT_ENDPOINT_JOINED,
      data: {
        incident_id: incident.id,
        endpoint_id: command.endpoint_id,
        signal: command.signal,
        reason: command.reason,
        joined_at: now,
        ...(incident.endpoint_ids.includes(command.endpoint_id) ? { again: true as const } : {}),
      },
    });
  }
  const seen = new Set<number>();
  for (const check of command.checks ?? []) {
    if (seen.has(check.id) || incident.checks.has(check.id)) continue;
    seen.add(check.id);
    events.push({ type: INCIDENT_CHECK_LINKED, data: { incident_id: incident.id, check: normalizedCheck(check), linked_at: now } });
  }
  return events;
}

/** Before its first join an automatic incident waits for the endpoint that opened it only. */
function awaitingRecovery(incident: Incident): readonly number[] {
  return incident.awaiting_recovery ?? incident.endpoint_ids.slice(0, 1);
}

function normalizedCheck(check: LinkedCheck): LinkedCheck {
  return { ...check, checked_at: toUtcMillis(check.checked_at) };
}

function decideUpdateDetails(incident: Incident, command: UpdateDetails, now: string): IncidentEvent[] {
  const wanted = normalizedDetails(command.changes);
  const changes: IncidentDetailsUpdatedData['changes'] = {};
  for (const field of DETAIL_FIELDS) {
    const to = wanted[field];
    if (to === undefined || sameValue(incident[field], to)) continue;
    (changes as Record<string, Change<unknown>>)[field] = { from: incident[field], to };
  }
  requireOrderedErrorTimes(wanted.first_error_at ?? incident.first_error_at, wanted.last_error_at ?? incident.last_error_at);
  if (Object.keys(changes).length === 0) return [];
  return [{ type: INCIDENT_DETAILS_UPDATED, data: { incident_id: incident.id, changes, updated_at: now } }];
}

function normalizedDetails(changes: Partial<IncidentDetails>): Partial<IncidentDetails> {
  const result = { ...changes };
  if (result.first_error_at !== undefined) result.first_error_at = toUtcMillis(result.first_error_at);
  if (result.last_error_at !== undefined) result.last_error_at = toUtcMillis(result.last_error_at);
  return result;
}

function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** JSON with object keys sorted, so `{a,b}` equals `{b,a}`. Array order counts. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function decideUpdateStatus(incident: Incident, command: UpdateStatus, now: string): IncidentEvent[] {
  const events: IncidentEvent[] = [];
  if (command.status && command.status.id !== incident.status_id) {
    events.push({
      type: INCIDENT_STATUS_CHANGED,
      data: {
        incident_id: incident.id,
        status_id: command.status.id,
        status_name: command.status.name,
        previous_status_id: incident.status_id,
        previous_status_name: incident.status_name,
        changed_at: now,
      },
    });
  }
  if (command.resolved === true && incident.resolved_at === null) events.push(resolved(incident, now, 'manual'));
  if (command.resolved === false && incident.resolved_at !== null) {
    events.push({ type: INCIDENT_REOPENED, data: { incident_id: incident.id, reopened_at: now, previous_resolved_at: incident.resolved_at } });
  }
  if (command.auto_resolve !== undefined && command.auto_resolve !== incident.auto_resolve) {
    events.push({ type: INCIDENT_AUTO_RESOLVE_CHANGED, data: { incident_id: incident.id, auto_resolve: command.auto_resolve, changed_at: now } });
    // Turned back on after the recoveries it waited for: resolved as the last recovery would have.
    const why = command.auto_resolve && command.resolved === undefined ? nothingStillFailing(incident) : null;
    if (why !== null) events.push(...automaticResolution({ ...incident, auto_resolve: true }, now, why));
  }
  return events;
}

function resolved(incident: Incident, now: string, by: 'manual' | 'automatic' | 'merge', reason?: string): IncidentEvent {
  return { type: INCIDENT_RESOLVED, data: { incident_id: incident.id, resolved_at: now, by, ...(reason === undefined ? {} : { reason }) } };
}

function decideLinkCheck(incident: Incident, check: LinkedCheck, now: string): IncidentEvent[] {
  if (incident.checks.has(check.id)) return [];
  return [{ type: INCIDENT_CHECK_LINKED, data: { incident_id: incident.id, check: normalizedCheck(check), linked_at: now } }];
}

function findComment(incident: Incident, commentId: number): Comment {
  const comment = incident.comments.get(commentId);
  if (!comment) throw new CommentNotFoundError(incident.id, commentId);
  return comment;
}

function findCheckpoint(incident: Incident, checkpointId: number): Checkpoint {
  const checkpoint = incident.checkpoints.get(checkpointId);
  if (!checkpoint) throw new CheckpointNotFoundError(incident.id, checkpointId);
  return checkpoint;
}

function decideAddComment(incident: Incident, command: AddComment, now: string): IncidentEvent[] {
  if (incident.comments.has(command.comment_id)) {
    fail('comment_id', 'not_unique', `comment ${command.comment_id} already exists`);
  }
  return [
    {
      type: COMMENT_ADDED,
      data: { incident_id: incident.id, comment_id: command.comment_id, body: command.body, pinned: command.pinned ?? false, created_at: now },
    },
  ];
}

function decideUpdateComment(incident: Incident, command: UpdateComment, now: string): IncidentEvent[] {
  const comment = findComment(incident, command.comment_id);
  const changes: CommentUpdatedData['changes'] = {};
  if (command.body !== undefined && command.body !== comment.body) changes.body = { from: comment.body, to: command.body };
  if (command.pinned !== undefined && command.pinned !== comment.pinned) changes.pinned = { from: comment.pinned, to: command.pinned };
  if (Object.keys(changes).length === 0) return [];
  return [{ type: COMMENT_UPDATED, data: { incident_id: incident.id, comment_id: comment.id, changes, updated_at: now } }];
}

function decideAddCheckpoint(incident: Incident, command: AddCheckpoint, now: string): IncidentEvent[] {
  if (incident.checkpoints.has(command.checkpoint_id)) {
    fail('checkpoint_id', 'not_unique', `checkpoint ${command.checkpoint_id} already exists`);
  }
  return [
    {
      type: CHECKPOINT_ADDED,
      data: {
        incident_id: incident.id,
        checkpoint_id: command.checkpoint_id,
        title: command.title,
        body: command.body ?? '',
        status_label: command.status_label ?? incident.status_name,
        created_at: now,
      },
    },
  ];
}

function decideUpdateCheckpoint(incident: Incident, command: UpdateCheckpoint, now: string): IncidentEvent[] {
  const checkpoint = findCheckpoint(incident, command.checkpoint_id);
  const changes: CheckpointUpdatedData['changes'] = {};
  for (const field of ['title', 'body', 'status_label'] as const) {
    const to = command[field];
    if (to !== undefined && to !== checkpoint[field]) changes[field] = { from: checkpoint[field], to };
  }
  if (Object.keys(changes).length === 0) return [];
  return [{ type: CHECKPOINT_UPDATED, data: { incident_id: incident.id, checkpoint_id: checkpoint.id, changes, updated_at: now } }];
}

function decideMarkMergedInto(incident: Incident, command: MarkMergedInto, now: string): IncidentEvent[] {
  if (command.target_id === incident.id) fail('source_incident_ids', 'conflict', 'an incident cannot be merged into itself');
  const data = { incident_id: incident.id, target_id: command.target_id, merged_at: now, ...(command.merge_id ? { merge_id: command.merge_id } : {}) };
  const merged: IncidentEvent = { type: INCIDENT_MERGED_INTO, data };
  return incident.resolved_at === null ? [resolved(incident, now, 'merge'), merged] : [merged];
}

function decideReleaseMerge(state: IncidentState, command: ReleaseMerge, now: string): IncidentEvent[] {
  if (state === null) throw new IncidentNotFoundError(null);
  if (state.merged_into_id !== command.target_id) return [];
  const { resolved_at, comments, checkpoints, checks } = command.restored;
  return [
    {
      type: INCIDENT_MERGE_RELEASED,
      data: {
        incident_id: state.id,
        target_id: command.target_id,
        merge_id: command.merge_id,
        reason: command.reason,
        restored: { resolved_at, comments: comments.toArray(), checkpoints: checkpoints.toArray(), checks: checks.toArray() },
        released_at: now,
      },
    },
  ];
}

function mergeViolations(target: Incident, sources: Incident[]): FieldError[] {
  const errors: FieldError[] = [];
  if (sources.length === 0) errors.push({ field: 'source_incident_ids', code: 'required', message: 'at least one source incident is required' });
  const seen = new Set<number>();
  const absorbed = new Set(target.merged_incidents.map((m) => m.id));
  sources.forEach((source, i) => {
    const field = `source_incident_ids[${i}]`;
    if (source.id === target.id) errors.push({ field, code: 'conflict', message: 'the target cannot be one of its sources' });
    else if (seen.has(source.id)) errors.push({ field, code: 'not_unique', message: `incident ${source.id} is listed more than once` });
    else if (absorbed.has(source.id)) errors.push({ field, code: 'conflict', message: `incident ${source.id} was already merged into this incident` });
    else if (source.team_id !== target.team_id) errors.push({ field, code: 'not_found', message: `incident ${source.id} not found` });
    else if (source.merged_into_id !== null) errors.push({ field, code: 'conflict', message: `incident ${source.id} was already merged` });
    seen.add(source.id);
  });
  return errors;
}

function decideAbsorb(target: Incident, sources: Incident[], now: string): IncidentEvent[] {
  const errors = mergeViolations(target, sources);
  if (errors.length > 0) throw new IncidentValidationError(errors);
  const after = sources.reduce(
    (acc, source) => ({
      endpoint_ids: [...acc.endpoint_ids, ...source.endpoint_ids.filter((id) => !acc.endpoint_ids.includes(id))],
      error_count: acc.error_count + source.error_count,
      first_error_at: earliest(acc.first_error_at, source.first_error_at),
      last_error_at: latest(acc.last_error_at, source.last_error_at),
    }),
    { endpoint_ids: unique(target.endpoint_ids), error_count: target.error_count, first_error_at: target.first_error_at, last_error_at: target.last_error_at },
  );
  const changes: IncidentsAbsorbedData['changes'] = {};
  for (const field of ['endpoint_ids', 'error_count', 'first_error_at', 'last_error_at'] as const) {
    if (!sameValue(target[field], after[field])) (changes as Record<string, Change<unknown>>)[field] = { from: target[field], to: after[field] };
  }
  return [{ type: INCIDENTS_ABSORBED, data: { incident_id: target.id, sources: sources.map(snapshot), changes, merged_at: now } }];
}

function unique(ids: number[]): number[] {
  return [...new Set(ids)];
}

function snapshot(source: Incident): AbsorbedSource {
  return {
    id: source.id,
    title: source.title,
    endpoint_ids: [...source.endpoint_ids],
    error_count: source.error_count,
    first_error_at: source.first_error_at,
    last_error_at: source.last_error_at,
    checks: source.checks.toArray(),
    comments: source.comments.toArray(),
    checkpoints: source.checkpoints.toArray(),
    merged_incidents: source.merged_incidents,
  };
}

// ---------------------------------------------------------------------------------------------
// evolve
// ---------------------------------------------------------------------------------------------

/** When the event happened, by its own timestamp field. */
export function eventTime(event: IncidentEvent): string {
  switch (event.type) {
    case INCIDENT_OPENED:
      return event.data.opened_at;
    case INCIDENT_DETAILS_UPDATED:
      return event.data.updated_at;
    case INCIDENT_STATUS_CHANGED:
    case INCIDENT_AUTO_RESOLVE_CHANGED:
      return event.data.changed_at;
    case INCIDENT_RESOLVED:
      return event.data.resolved_at;
    case INCIDENT_REOPENED:
      return event.data.reopened_at;
    case INCIDENT_CHECK_LINKED:
      return event.data.linked_at;
    case INCIDENT_ENDPOINT_JOINED:
      return event.data.joined_at;
    case INCIDENT_ENDPOINT_RECOVERED:
      return event.data.recovered_at;
    case INCIDENT_ALERT_ENDED:
      return event.data.ended_at;
    case INCIDENT_ALERT_TRIGGERED_AGAIN:
      return event.data.triggered_at;
    case COMMENT_ADDED:
    case CHECKPOINT_ADDED:
      return event.data.created_at;
    case COMMENT_UPDATED:
    case CHECKPOINT_UPDATED:
      return event.data.updated_at;
    case COMMENT_DELETED:
      return event.data.deleted_at;
    case INCIDENT_MERGED_INTO:
    case INCIDENTS_ABSORBED:
      return event.data.merged_at;
    case INCIDENT_MERGE_RELEASED:
      return event.data.released_at;
  }
}

export function evolve(state: IncidentState, event: IncidentEvent): IncidentState {
  if (event.type === INCIDENT_OPENED) return opened(event.data);
  if (state === null) throw new IncidentNotFoundError(event.data.incident_id);
  return { ...apply(state, event), updated_at: eventTime(event) };
}

function opened(data: Extract<IncidentEvent, { type: typeof INCIDENT_OPENED }>['data']): Incident {
  return {
    id: data.incident_id,
    team_id: data.team_id,
    project_id: data.project_id,
    endpoint_ids: [...data.endpoint_ids],
    title: data.title,
    type: data.type,
    source: data.source,
    severity: data.severity,
    auto_resolve: data.auto_resolve,
    detection_reason: data.detection_reason,
    metadata: data.metadata,
    status_id: data.status_id,
    status_name: data.status_name,
    error_count: 0,
    first_error_at: data.first_error_at,
    last_error_at: data.last_error_at,
    resolved_at: null,
    created_at: data.opened_at,
    updated_at: data.opened_at,
    comments: IdList.empty(),
    checkpoints: IdList.empty(),
    checks: IdList.empty(),
    merged_incidents: [],
    merged_into_id: null,
  };
}

function applyChanges<T extends object>(target: T, changes: { [K in keyof T]?: Change<T[K]> }): T {
  const result = { ...target };
  for (const [field, change] of Object.entries(changes) as [keyof T, Change<T[keyof T]>][]) result[field] = change.to;
  return result;
}

function apply(s: Incident, event: Exclude<IncidentEvent, { type: typeof INCIDENT_OPENED }>): Incident {
  switch (event.type) {
    case INCIDENT_DETAILS_UPDATED:
      return applyChanges(s, event.data.changes);
    case INCIDENT_STATUS_CHANGED:
      return { ...s, status_id: event.data.status_id, status_name: event.data.status_name };
    case INCIDENT_RESOLVED:
      return { ...s, resolved_at: s.resolved_at ?? event.data.resolved_at };
    case INCIDENT_REOPENED:
      return { ...s, resolved_at: null };
    case INCIDENT_AUTO_RESOLVE_CHANGED:
      return { ...s, auto_resolve: event.data.auto_resolve };
    case INCIDENT_CHECK_LINKED:
      return linkCheck(s, event.data.check);
    case INCIDENT_ENDPOINT_JOINED: {
      const id = event.data.endpoint_id;
      const awaiting = awaitingRecovery(s);
      return {
        ...s,
        endpoint_ids: s.endpoint_ids.includes(id) ? s.endpoint_ids : [...s.endpoint_ids, id],
        awaiting_recovery: awaiting.includes(id) ? awaiting : [...awaiting, id],
      };
    }
    case INCIDENT_ENDPOINT_RECOVERED:
      return { ...s, awaiting_recovery: awaitingRecovery(s).filter((id) => id !== event.data.endpoint_id) };
    case INCIDENT_ALERT_ENDED:
      return { ...s, alert: { ended: true, sequence: event.data.sequence } };
    case INCIDENT_ALERT_TRIGGERED_AGAIN:
      // Burning again is an error as the opening trigger was (an alert links no checks to move it).
      return { ...s, alert: { ended: false, sequence: event.data.sequence }, last_error_at: latest(s.last_error_at, event.data.triggered_at) };
    case COMMENT_ADDED: {
      const { comment_id: id, body, pinned, created_at } = event.data;
      return { ...s, comments: s.comments.with({ id, body, pinned, created_at, updated_at: created_at }) };
    }
    case COMMENT_UPDATED: {
      const { comment_id, changes, updated_at } = event.data;
      const comment = s.comments.get(comment_id);
      return comment ? { ...s, comments: s.comments.replaced({ ...applyChanges(comment, changes), updated_at }) } : s;
    }
    case COMMENT_DELETED:
      return { ...s, comments: s.comments.without(event.data.comment_id) };
    case CHECKPOINT_ADDED: {
      const { checkpoint_id: id, title, body, status_label, created_at } = event.data;
      return { ...s, checkpoints: s.checkpoints.with({ id, title, body, status_label, created_at, updated_at: created_at }) };
    }
    case CHECKPOINT_UPDATED: {
      const { checkpoint_id, changes, updated_at } = event.data;
      const checkpoint = s.checkpoints.get(checkpoint_id);
      return checkpoint ? { ...s, checkpoints: s.checkpoints.replaced({ ...applyChanges(checkpoint, changes), updated_at }) } : s;
    }
    case INCIDENT_MERGED_INTO:
      return { ...s, merged_into_id: event.data.target_id, comments: IdList.empty(), checkpoints: IdList.empty(), checks: IdList.empty() };
    case INCIDENTS_ABSORBED:
      return absorb(s, event.data);
    case INCIDENT_MERGE_RELEASED: {
      const { resolved_at, comments, checkpoints, checks } = event.data.restored;
      return { ...s, merged_into_id: null, resolved_at, comments: IdList.of(comments), checkpoints: IdList.of(checkpoints), checks: IdList.of(checks) };
    }
  }
}

function linkCheck(s: Incident, check: LinkedCheck): Incident {
  return {
    ...s,
    checks: s.checks.with(check),
    error_count: s.error_count + 1,
    last_error_at: latest(s.last_error_at, check.checked_at),
    endpoint_ids: s.endpoint_ids.includes(check.endpoint_id) ? s.endpoint_ids : [...s.endpoint_ids, check.endpoint_id],
  };
}

function absorb(s: Incident, data: IncidentsAbsorbedData): Incident {
  const result = applyChanges(s, data.changes);
  for (const source of data.sources) {
    result.checks = result.checks.withAll(source.checks);
    result.comments = result.comments.withAll(source.comments);
    result.checkpoints = result.checkpoints.withAll(source.checkpoints);
    result.merged_incidents = [...result.merged_incidents, ...source.merged_incidents, { id: source.id, title: source.title, merged_at: data.merged_at }];
  }
  return result;
}

/** Folds events from the initial state. */
export function replay(events: Iterable<IncidentEvent>, from: IncidentState = initialState()): IncidentState {
  let state = from;
  for (const event of events) state = evolve(state, event);
  return state;
}
