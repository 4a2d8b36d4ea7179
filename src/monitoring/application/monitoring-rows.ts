import { ViewCache } from '../../platform/projections/view-cache.js';
import type { ViewReader } from '../../platform/projections/views.js';
import { ENDPOINTS, type EndpointDoc, MONITORING_VIEW, type ProjectDoc, PROJECTS } from '../domain/views.js';

interface RowTypes {
  [PROJECTS]: ProjectDoc;
  [ENDPOINTS]: EndpointDoc;
}

type RowCollection = keyof RowTypes;

const caches = new WeakMap<ViewReader, Map<RowCollection, ViewCache<ProjectDoc | EndpointDoc>>>();

/**
 * The one cache of a monitoring collection's rows per reader, shared by the path-resource guard
 * and the read handlers, so a request that checks an endpoint and then reads it finds one entry.
 */
function monitoringRows<C extends RowCollection>(reader: ViewReader, collection: C): ViewCache<RowTypes[C]> {
  let byCollection = caches.get(reader);
  if (!byCollection) caches.set(reader, (byCollection = new Map()));
  let cache = byCollection.get(collection);
  if (!cache) byCollection.set(collection, (cache = new ViewCache(reader, MONITORING_VIEW, collection)));
  return cache as ViewCache<RowTypes[C]>;
}

/**
 * A project or endpoint row by id, through the shared cache (valid while the collection's stamp
 * holds; rows are shared, so callers copy and never mutate them). `scope`: see `ReadStore.stamps`.
 */
export function monitoringRow<C extends RowCollection>(reader: ViewReader, collection: C, id: number, scope?: object): Promise<RowTypes[C] | null> {
  const load = async () => (await reader.get(MONITORING_VIEW, collection, id)) as unknown as RowTypes[C] | null;
  return monitoringRows(reader, collection).get(String(id), load, scope);
}
