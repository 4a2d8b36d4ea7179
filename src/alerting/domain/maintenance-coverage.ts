/**
 * The maintenance windows of one team, folded from `maintenance-<teamId>` so check recording sees
 * a window as soon as it is scheduled (no projection lag). Whether they cover a check is decided
 * by the monitoring context's `coverage()`, the one rule for maintenance.
 */
import {
  MAINTENANCE_WINDOW_CANCELLED,
  MAINTENANCE_WINDOW_SCHEDULED,
  type MaintenanceWindowCancelledData,
  type MaintenanceWindowScheduledData,
} from '../../monitoring/domain/events.js';
import { type CoveredEndpoint, coverage, type MaintenanceWindow } from '../../monitoring/domain/maintenance.js';

export type MaintenanceState = Record<string, MaintenanceWindow>;

export function evolveMaintenance(state: MaintenanceState, event: { type: string; data: unknown }): MaintenanceState {
  if (event.type === MAINTENANCE_WINDOW_SCHEDULED) {
    const { window_id, team_id, project_id, endpoint_id, starts_at, ends_at } = event.data as MaintenanceWindowScheduledData;
    return { ...state, [window_id]: { window_id, team_id, project_id, endpoint_id, starts_at, ends_at } };
  }
  if (event.type === MAINTENANCE_WINDOW_CANCELLED) {
    const data = event.data as MaintenanceWindowCancelledData;
    const { [data.window_id]: _removed, ...rest } = state;
    return rest;
  }
  return state;
}

/** True when a team, project, endpoint or legacy maintenance covers `at`. */
export function isCovered(at: string, endpoint: CoveredEndpoint, state: MaintenanceState): boolean {
  return coverage(at, endpoint, Object.values(state)).under_maintenance;
}
