/**
 * The SLO aggregate (`slo-<id>`): `decide(state, command) -> events` and `evolve`. Rules that
 * need other views (the endpoints and the project are the team's) are checked by the
 * application before it decides; the field rules are the DTO's at the edge and `fieldErrors`
 * here, so a command built elsewhere is held to them too.
 *
 * - An update that changes nothing appends nothing.
 * - Giving `endpoint_ids` selects endpoints (and clears `project_id`), giving `project_id`
 *   selects a project (and clears `endpoint_ids`): exactly one is ever set.
 * - A deleted SLO stays deleted; its alerts end with it (no signal is decided on it).
 * - A deleted endpoint leaves the SLO's list; once none is left the SLO covers no endpoint and
 *   its alerts end too (no check of it will ever come to recover them). A project SLO's alerts
 *   end the same way once its project has no endpoint left (deleted or moved out).
 */
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { RuleViolation } from '../../platform/rules/rule-violation.js';
import {
  SLO_BURN_ALERT_RECOVERED,
  SLO_BURN_ALERT_TRIGGERED,
  SLO_BURN_INCIDENT_LINKED,
  SLO_CREATED,
  SLO_DELETED,
  SLO_ENDPOINT_DELETED,
  SLO_PROJECT_EMPTIED,
  SLO_UPDATED,
  type BurnSeverity,
  type SloBurnAlertRecoveredData,
  type SloBurnAlertTriggeredData,
  type SloBurnIncidentLinkedData,
  type SloCreatedData,
  type SloDeletedData,
  type SloEndpointDeletedData,
  type SloFields,
  type SloProjectEmptiedData,
  type SloUpdatedData,
} from './events.js';

export const LIMITS = {
  name: { min: 1, max: 200 },
  endpoint_ids: { min: 1, max: 500 },
  /** Exclusive bounds. */
  objective_percent: { above: 50, below: 100, decimals: 3 },
  window_days: { min: 1, max: 90, default: 30 },
  latency_threshold_ms: { min: 1, max: 600_000 },
} as const;

/** An active burn-rate alert: since when, and the automatic incident it opened (once linked). */
export interface ActiveAlert {
  since: string;
  incident_id: number | null;
}

export interface SloState extends SloFields {
  exists: boolean;
  deleted: boolean;
  slo_id: number;
  team_id: number;
  created_at: string;
  updated_at: string;
  alerts: Record<BurnSeverity, ActiveAlert | null>;
}

export type SloEvent =
  | { type: typeof SLO_CREATED; data: SloCreatedData }
  | { type: typeof SLO_UPDATED; data: SloUpdatedData }
  | { type: typeof SLO_DELETED; data: SloDeletedData }
  | { type: typeof SLO_BURN_ALERT_TRIGGERED; data: SloBurnAlertTriggeredData }
  | { type: typeof SLO_BURN_ALERT_RECOVERED; data: SloBurnAlertRecoveredData }
  | { type: typeof SLO_BURN_INCIDENT_LINKED; data: SloBurnIncidentLinkedData }
  | { type: typeof SLO_ENDPOINT_DELETED; data: SloEndpointDeletedData }
  | { type: typeof SLO_PROJECT_EMPTIED; data: SloProjectEmptiedData };

export type SloCommand =
  | { kind: 'create'; slo_id: number; team_id: number; fields: SloFields; at: string }
  | { kind: 'update'; team_id: number; patch: Partial<SloFields>; at: string }
  | { kind: 'delete'; team_id: number; at: string };

export type Decision = { ok: true; events: SloEvent[] } | { ok: false; reason: 'not_found' | 'already_exists' | 'invalid'; violations?: RuleViolation[] };

export function initialState(): SloState {
  return {
    exists: false,
    deleted: false,
    slo_id: 0,
    team_id: 0,
    name: '',
    endpoint_ids: null,
    project_id: null,
    objective_percent: 99.9,
    window_days: LIMITS.window_days.default,
    latency_threshold_ms: null,
    created_at: '',
    updated_at: '',
    alerts: { page: null, ticket: null },
  };
}

export function evolve(state: SloState, event: Pick<RecordedEvent, 'type' | 'data'>): SloState {
  switch (event.type) {
    case SLO_CREATED: {
      const data = event.data as SloCreatedData;
      return { ...initialState(), ...data, exists: true, updated_at: data.created_at };
    }
    case SLO_UPDATED: {
      const data = event.data as SloUpdatedData;
      return { ...state, ...data.changes, updated_at: data.updated_at };
    }
    case SLO_DELETED:
      return { ...state, deleted: true, updated_at: (event.data as SloDeletedData).deleted_at, alerts: { page: null, ticket: null } };
    case SLO_ENDPOINT_DELETED: {
      const data = event.data as SloEndpointDeletedData;
      const alerts = data.endpoint_ids.length === 0 ? { page: null, ticket: null } : state.alerts;
      return { ...state, endpoint_ids: data.endpoint_ids, alerts };
    }
    case SLO_PROJECT_EMPTIED:
      return { ...state, alerts: { page: null, ticket: null } };
    case SLO_BURN_ALERT_TRIGGERED: {
      const data = event.data as SloBurnAlertTriggeredData;
      return { ...state, alerts: { ...state.alerts, [data.severity]: { since: data.triggered_at, incident_id: null } } };
    }
    case SLO_BURN_ALERT_RECOVERED: {
      const data = event.data as SloBurnAlertRecoveredData;
      return { ...state, alerts: { ...state.alerts, [data.severity]: null } };
    }
    case SLO_BURN_INCIDENT_LINKED: {
      const data = event.data as SloBurnIncidentLinkedData;
      const active = state.alerts[data.severity];
      if (!active || active.since !== data.since) return state;
      return { ...state, alerts: { ...state.alerts, [data.severity]: { ...active, incident_id: data.incident_id } } };
    }
    default:
      return state;
  }
}

export const sloAggregate = { initial: initialState, evolve };

/** The objective in thousandths of a percent (99.95 -> 99950): every budget sum is done on it. */
export function objectiveMilli(objectivePercent: number): number {
  return Math.round(objectivePercent * 1000);
}

/** Rules of the fields themselves (the same as the DTO's), for commands from any edge. */
export function fieldErrors(fields: Partial<SloFields>): RuleViolation[] {
  const errors: RuleViolation[] = [];
  const o = fields.objective_percent;
  if (o !== undefined && !validObjective(o)) {
    errors.push({ field: 'objective_percent', code: 'out_of_range', message: 'must be above 50 and below 100, with at most 3 decimals' });
  }
  if (fields.endpoint_ids !== undefined && fields.project_id !== undefined && (fields.endpoint_ids === null) === (fields.project_id === null)) {
    errors.push({ field: 'project_id', code: 'conflict', message: 'give exactly one of endpoint_ids and project_id' });
  }
  return errors;
}

export function validObjective(value: unknown): boolean {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value > LIMITS.objective_percent.above &&
    value < LIMITS.objective_percent.below &&
    Number(value.toFixed(LIMITS.objective_percent.decimals)) === value
  );
}

const sameIds = (a: number[] | null, b: number[] | null) => (a === null || b === null ? a === b : a.length === b.length && a.every((id, i) => id === b[i]));

/** Only the fields whose value differs; choosing one selection clears the other. */
export function changesOf(state: SloState, patch: Partial<SloFields>): Partial<SloFields> {
  const changes: Partial<SloFields> = {};
  if (patch.name !== undefined && patch.name !== state.name) changes.name = patch.name;
  if (patch.objective_percent !== undefined && patch.objective_percent !== state.objective_percent) changes.objective_percent = patch.objective_percent;
  if (patch.window_days !== undefined && patch.window_days !== state.window_days) changes.window_days = patch.window_days;
  if (patch.latency_threshold_ms !== undefined && patch.latency_threshold_ms !== state.latency_threshold_ms) changes.latency_threshold_ms = patch.latency_threshold_ms;
  if (patch.endpoint_ids != null && !sameIds(patch.endpoint_ids, state.endpoint_ids)) {
    changes.endpoint_ids = patch.endpoint_ids;
    if (state.project_id !== null) changes.project_id = null;
  }
  if (patch.project_id != null && patch.project_id !== state.project_id) {
    changes.project_id = patch.project_id;
    if (state.endpoint_ids !== null) changes.endpoint_ids = null;
  }
  return changes;
}

export const live = (state: SloState, teamId: number) => state.exists && !state.deleted && state.team_id === teamId;

export function decide(state: SloState, command: SloCommand): Decision {
  switch (command.kind) {
    case 'create': {
      if (state.exists) return { ok: false, reason: 'already_exists' };
      const violations = fieldErrors(command.fields);
      if (violations.length > 0) return { ok: false, reason: 'invalid', violations };
      return { ok: true, events: [{ type: SLO_CREATED, data: { slo_id: command.slo_id, team_id: command.team_id, ...command.fields, created_at: command.at } }] };
    }
    case 'update': {
      if (!live(state, command.team_id)) return { ok: false, reason: 'not_found' };
      const violations = fieldErrors(command.patch);
      if (violations.length > 0) return { ok: false, reason: 'invalid', violations };
      const changes = changesOf(state, command.patch);
      if (Object.keys(changes).length === 0) return { ok: true, events: [] };
      return { ok: true, events: [{ type: SLO_UPDATED, data: { slo_id: state.slo_id, team_id: state.team_id, changes, updated_at: command.at } }] };
    }
    case 'delete':
      if (!live(state, command.team_id)) return { ok: false, reason: 'not_found' };
      return { ok: true, events: [{ type: SLO_DELETED, data: { slo_id: state.slo_id, team_id: state.team_id, deleted_at: command.at } }] };
  }
}

/** The endpoint was deleted: it leaves the list of a live SLO that names it (a project's SLO follows its project). */
export function decideEndpointDeleted(state: SloState, endpointId: number, at: string): SloEvent[] {
  if (!state.exists || state.deleted || !state.endpoint_ids?.includes(endpointId)) return [];
  const left = state.endpoint_ids.filter((id) => id !== endpointId);
  return [{ type: SLO_ENDPOINT_DELETED, data: { slo_id: state.slo_id, team_id: state.team_id, endpoint_id: endpointId, endpoint_ids: left, deleted_at: at } }];
}

/**
 * The SLO's project has no endpoint left (`left_by` the last one's deletion or move): a live SLO
 * of that project ends the alerts it has active. Without one it appends nothing, so a batch
 * handled again, or the next endpoint to leave, decides nothing twice.
 */
export function decideProjectEmptied(state: SloState, fact: Omit<SloProjectEmptiedData, 'slo_id' | 'team_id'>): SloEvent[] {
  if (!state.exists || state.deleted || state.project_id !== fact.project_id) return [];
  if (state.alerts.page === null && state.alerts.ticket === null) return [];
  return [{ type: SLO_PROJECT_EMPTIED, data: { slo_id: state.slo_id, team_id: state.team_id, ...fact } }];
}
