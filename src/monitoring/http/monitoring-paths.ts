import type { PathResource } from '../../platform/http/path-resources.js';
import { ViewCache } from '../../platform/projections/view-cache.js';
import type { ViewReader } from '../../platform/projections/views.js';
import type { Doc } from '../../platform/read-store/read-store.port.js';

/** Looks rows up through a ViewCache per reader (valid while the collection's stamp holds). */
function inTeam(collection: string) {
  const caches = new WeakMap<ViewReader, ViewCache<Doc>>();
  return async (reader: ViewReader, id: number, teamId: number | null, scope?: object) => {
    let cache = caches.get(reader);
    if (!cache) caches.set(reader, (cache = new ViewCache(reader, 'monitoring', collection)));
    const row = await cache.get(String(id), () => reader.get('monitoring', collection, id), scope);
    return row !== null && (teamId === null || row.team_id === teamId);
  };
}

/** `:projectID`: a project of the path's team (application API) or the token's team (public API). */
export const PROJECT_PATH: PathResource = { param: 'projectID', what: 'The project', exists: inTeam('projects') };

/** `:endpointID`: an endpoint of the path's team or the token's team. */
export const ENDPOINT_PATH: PathResource = { param: 'endpointID', what: 'The endpoint', exists: inTeam('endpoints') };
