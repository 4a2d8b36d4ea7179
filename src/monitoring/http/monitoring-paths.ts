import type { PathResource } from '../../platform/http/path-resources.js';
import type { ViewReader } from '../../platform/projections/views.js';

function inTeam(collection: string) {
  return async (reader: ViewReader, id: number, teamId: number | null) => {
    const row = await reader.get('monitoring', collection, id);
    return row !== null && (teamId === null || row.team_id === teamId);
  };
}

/** `:projectID`: a project of the path's team (application API) or the token's team (public API). */
export const PROJECT_PATH: PathResource = { param: 'projectID', what: 'The project', exists: inTeam('projects') };

/** `:endpointID`: an endpoint of the path's team or the token's team. */
export const ENDPOINT_PATH: PathResource = { param: 'endpointID', what: 'The endpoint', exists: inTeam('endpoints') };
