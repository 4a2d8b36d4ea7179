import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { AlreadyExistsError, MaintenanceWindowNotFoundError, MonitoringRulesError, TeamNotFoundError, type RuleViolation } from './errors.js';
import {
  MAINTENANCE_WINDOW_CANCELLED,
  MAINTENANCE_WINDOW_SCHEDULED,
  maintenanceStream,
  type MaintenanceEvent,
  type MaintenanceWindowScheduledData,
} from './events.js';
import { coverage, type CoveredEndpoint, type MaintenanceWindow } from './maintenance.js';

/**
 * A team's maintenance windows (stream `maintenance-<teamId>`): the one command-side fold of that
 * stream and the decider of its commands. Commands decide on it, and check recording folds it per
 * process so a check sees a window as soon as it is scheduled (no projection lag).
 */
export interface MaintenanceScheduleState {
  windows: Map<number, MaintenanceWindow & { reason: string | null; created_at: string }>;
}

export function evolveMaintenance(state: MaintenanceScheduleState, event: MaintenanceEvent): MaintenanceScheduleState {
  switch (event.type) {
    case MAINTENANCE_WINDOW_SCHEDULED: {
      const windows = new Map(state.windows);
      windows.set(event.data.window_id, { ...event.data, cancelled_at: null });
      return { windows };
    }
    case MAINTENANCE_WINDOW_CANCELLED: {
      const window = state.windows.get(event.data.window_id);
      if (!window) return state;
      const windows = new Map(state.windows);
      windows.set(event.data.window_id, { ...window, cancelled_at: event.data.cancelled_at });
      return { windows };
    }
    default:
      return state;
  }
}

/** The maintenance stream's fold, in the shape runStreamCommand, loadStream and StreamCache take. */
export const maintenanceScheduleAggregate = {
  initial: (): MaintenanceScheduleState => ({ windows: new Map() }),
  // The stream holds maintenance events only (events.ts): the one place its events are typed.
  evolve: (state: MaintenanceScheduleState, event: RecordedEvent): MaintenanceScheduleState => evolveMaintenance(state, event as MaintenanceEvent),
};

/** True when a team, project, endpoint or legacy maintenance window covers `at` (`coverage`, the one rule). */
export function isCovered(at: string, endpoint: CoveredEndpoint, state: MaintenanceScheduleState): boolean {
  return coverage(at, endpoint, [...state.windows.values()]).under_maintenance;
}

// ---------------------------------------------------------------------------------------------
// Decisions

/** A window as the client asked for it, with the facts of other streams the handler gathered. */
export interface WindowRequest {
  team_id: number;
  /** Both null: team-wide. */
  project_id: number | null;
  endpoint_id: number | null;
  starts_at: string;
  ends_at: string;
  reason: string | null;
  team_exists: boolean;
  /** project_id (when given) names a project of the team. */
  project_known: boolean;
  /** The endpoint endpoint_id names, when it is one of the team's (null otherwise or when not given). */
  endpoint: { project_id: number } | null;
}

export type MaintenanceCommand =
  | ({ kind: 'schedule_window'; window_id: number; created_at: string } & WindowRequest)
  | { kind: 'cancel_window'; team_id: number; window_id: number; cancelled_at: string };

/**
 * Refuses a window the rules forbid: 404 for the team first, then every broken rule at once.
 * Handlers call it before allocating an id (so a refused request uses none); decide checks the same.
 */
export function checkWindow(request: WindowRequest): void {
  if (!request.team_exists) throw new TeamNotFoundError(request.team_id);
  const violations: RuleViolation[] = [];
  if (request.project_id !== null && !request.project_known) {
    violations.push({ field: 'project_id', code: 'not_found', message: 'does not name a project of this team' });
  }
  if (request.endpoint_id !== null) {
    if (request.endpoint === null) violations.push({ field: 'endpoint_id', code: 'not_found', message: 'does not name an endpoint of this team' });
    else if (request.project_id !== null && request.endpoint.project_id !== request.project_id) {
      violations.push({ field: 'endpoint_id', code: 'invalid_value', message: 'does not belong to project_id' });
    }
  }
  if (Date.parse(request.ends_at) <= Date.parse(request.starts_at)) violations.push({ field: 'ends_at', code: 'out_of_range', message: 'must be after starts_at' });
  MonitoringRulesError.throwIfAny(violations);
}

export function decideMaintenance(state: MaintenanceScheduleState, command: MaintenanceCommand): MaintenanceEvent[] {
  switch (command.kind) {
    case 'schedule_window': {
      checkWindow(command);
      if (state.windows.has(command.window_id)) throw new AlreadyExistsError(`${maintenanceStream(command.team_id)} window ${command.window_id}`);
      const { window_id, team_id, project_id, endpoint_id, starts_at, ends_at, reason, created_at } = command;
      const data: MaintenanceWindowScheduledData = { window_id, team_id, project_id, endpoint_id, starts_at, ends_at, reason, created_at };
      return [{ type: MAINTENANCE_WINDOW_SCHEDULED, data }];
    }
    case 'cancel_window': {
      const window = state.windows.get(command.window_id);
      if (!window || window.cancelled_at) throw new MaintenanceWindowNotFoundError(command.window_id);
      return [{ type: MAINTENANCE_WINDOW_CANCELLED, data: { window_id: command.window_id, team_id: command.team_id, cancelled_at: command.cancelled_at } }];
    }
  }
}
