import { ViewCache } from '../../platform/projections/view-cache.js';
import type { ViewReader } from '../../platform/projections/views.js';
import type { Doc } from '../../platform/read-store/read-store.port.js';
import { type ENDPOINTS, MONITORING_VIEW, type PROJECTS } from '../domain/views.js';

type RowCollection = typeof PROJECTS | typeof ENDPOINTS;

const caches = new WeakMap<ViewReader, Map<RowCollection, ViewCache<Doc>>>();

/**
 * The one cache of a monitoring collection's rows per reader, shared by the path-resource guard
 * and the read handlers, so a request that checks an endpoint and then reads it finds one entry.
 */
export function monitoringRows(reader: ViewReader, collection: RowCollection): ViewCache<Doc> {
  let byCollection = caches.get(reader);
  if (!byCollection) caches.set(reader, (byCollection = new Map()));
  let cache = byCollection.get(collection);
  if (!cache) byCollection.set(collection, (cache = new ViewCache(reader, MONITORING_VIEW, collection)));
  return cache;
}
