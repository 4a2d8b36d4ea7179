/**
 * Maintenance coverage. A window covers its scope while `starts_at <= at < ends_at` and it is
 * not cancelled: team-wide (no project, no endpoint), a project, or one endpoint. The legacy
 * `maintenance_until` of an endpoint covers it while `at < maintenance_until`, with no window id.
 */

export interface MaintenanceWindow {
  window_id: number;
  team_id: number;
  project_id: number | null;
  endpoint_id: number | null;
  starts_at: string;
  ends_at: string;
  cancelled_at?: string | null;
}

export interface CoveredEndpoint {
  team_id: number;
  project_id: number;
  endpoint_id: number;
  maintenance_until: string | null;
}

export interface Coverage {
  under_maintenance: boolean;
  maintenance_window_ids: number[];
}

export function isActive(window: MaintenanceWindow, at: string | number | Date): boolean {
  const time = new Date(at).getTime();
  if (window.cancelled_at) return false;
  return Date.parse(window.starts_at) <= time && time < Date.parse(window.ends_at);
}

export function windowCoversEndpoint(window: MaintenanceWindow, endpoint: CoveredEndpoint): boolean {
  if (window.team_id !== endpoint.team_id) return false;
  if (window.endpoint_id !== null) return window.endpoint_id === endpoint.endpoint_id;
  if (window.project_id !== null) return window.project_id === endpoint.project_id;
  return true;
}

function windowCoversProject(window: MaintenanceWindow, teamId: number, projectId: number): boolean {
  if (window.team_id !== teamId || window.endpoint_id !== null) return false;
  return window.project_id === null || window.project_id === projectId;
}

const ids = (windows: MaintenanceWindow[]) => windows.map((w) => w.window_id).sort((a, b) => a - b);

/** Endpoint coverage at `at`: team-wide, project and endpoint windows, plus legacy maintenance_until. */
export function coverage(at: string | number | Date, endpoint: CoveredEndpoint, windows: MaintenanceWindow[]): Coverage {
  const covering = ids(windows.filter((w) => isActive(w, at) && windowCoversEndpoint(w, endpoint)));
  const legacy = endpoint.maintenance_until !== null && new Date(at).getTime() < Date.parse(endpoint.maintenance_until);
  return { under_maintenance: covering.length > 0 || legacy, maintenance_window_ids: covering };
}

/** Project coverage at `at`: team-wide and project windows only; endpoint-only windows do not count. */
export function projectCoverage(at: string | number | Date, project: { team_id: number; project_id: number }, windows: MaintenanceWindow[]): Coverage {
  const covering = ids(windows.filter((w) => isActive(w, at) && windowCoversProject(w, project.team_id, project.project_id)));
  return { under_maintenance: covering.length > 0, maintenance_window_ids: covering };
}
