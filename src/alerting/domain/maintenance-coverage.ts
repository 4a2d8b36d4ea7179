/**
 * Maintenance coverage of a check, folded from `maintenance-<teamId>` plus the endpoint's legacy
 * `maintenance_until`. A window covers [starts_at, ends_at); team-wide when project and endpoint
 * are null, project-wide when only project_id is set.
 */
import {
  MAINTENANCE_WINDOW_CANCELLED,
  MAINTENANCE_WINDOW_SCHEDULED,
  type MaintenanceWindowCancelledData,
  type MaintenanceWindowScheduledData,
} from '../../monitoring/domain/events.js';

export interface MaintenanceWindow {
  window_id: number;
  project_id: number | null;
  endpoint_id: number | null;
  starts_at: string;
  ends_at: string;
}

export type MaintenanceState = Record<string, MaintenanceWindow>;

export function evolveMaintenance(state: MaintenanceState, event: { type: string; data: unknown }): MaintenanceState {
  if (event.type === MAINTENANCE_WINDOW_SCHEDULED) {
    const data = event.data as MaintenanceWindowScheduledData;
    return {
      ...state,
      [data.window_id]: { window_id: data.window_id, project_id: data.project_id, endpoint_id: data.endpoint_id, starts_at: data.starts_at, ends_at: data.ends_at },
    };
  }
  if (event.type === MAINTENANCE_WINDOW_CANCELLED) {
    const data = event.data as MaintenanceWindowCancelledData;
    const { [data.window_id]: _removed, ...rest } = state;
    return rest;
  }
  return state;
}

export function windowCovers(window: MaintenanceWindow, at: number, endpoint: { endpoint_id: number; project_id: number }): boolean {
  if (at < Date.parse(window.starts_at) || at >= Date.parse(window.ends_at)) return false;
  if (window.endpoint_id !== null) return window.endpoint_id === endpoint.endpoint_id;
  if (window.project_id !== null) return window.project_id === endpoint.project_id;
  return true;
}

/** True when a team, project, endpoint or legacy maintenance covers `at`. */
export function isCovered(
  at: string,
  endpoint: { endpoint_id: number; project_id: number; maintenance_until: string | null },
  windows: Iterable<MaintenanceWindow>,
): boolean {
  const time = Date.parse(at);
  if (endpoint.maintenance_until !== null && time < Date.parse(endpoint.maintenance_until)) return true;
  for (const window of windows) if (windowCovers(window, time, endpoint)) return true;
  return false;
}
