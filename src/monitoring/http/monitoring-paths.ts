import type { PathResource } from '../../platform/http/path-resources.js';
import type { ViewReader } from '../../platform/projections/views.js';
import { monitoringRow } from '../views/monitoring/queries.js';
import { ENDPOINTS, PROJECTS } from '../views/monitoring/view.js';

/** Looks rows up through the shared row cache (valid while the collection's stamp holds). */
function inTeam(collection: typeof PROJECTS | typeof ENDPOINTS) {
  return async (reader: ViewReader, id: number, teamId: number | null, scope?: object) => {
    const row = await monitoringRow(reader, collection, id, scope);
    return row !== null && (teamId === null || row.team_id === teamId);
  };
}

/** `:projectID`: a project of the path's team (application API) or the token's team (public API). */
export const PROJECT_PATH: PathResource = { param: 'projectID', what: 'The project', exists: inTeam(PROJECTS) };

/** `:endpointID`: an endpoint of the path's team or the token's team. */
export const ENDPOINT_PATH: PathResource = { param: 'endpointID', what: 'The endpoint', exists: inTeam(ENDPOINTS) };
