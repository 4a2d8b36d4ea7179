import type { RecordedEvent } from '../event-store/event-store.port.js';
import type { CollectionSpec, Doc, FindQuery } from '../read-store/read-store.port.js';

/**
 * What a projection handler sees of its views while a batch is applied: reads see the batch's
 * own earlier writes; nothing is visible to others until the runner commits the batch together
 * with the checkpoint.
 */
export interface ViewTransaction {
  get(collection: string, id: string): Promise<Doc | null>;
  /** Committed rows matching the query, overlaid with this batch's pending writes. */
  find(collection: string, query: FindQuery): Promise<Doc[]>;
  put(collection: string, doc: Doc): void;
  delete(collection: string, id: string): void;
}

export type ProjectionHandler = (event: RecordedEvent<any>, views: ViewTransaction) => void | Promise<void>;

/**
 * A view built from the log. One file per projection under `projections/`. Collection names are
 * logical; the runner maps them to the physical collections of the active generation.
 */
export interface Projection {
  /** `[a-z0-9_]+`, unique. */
  name: string;
  /** Bump when the handlers or the view shape change: the runner rebuilds on start. */
  version: number;
  collections: CollectionSpec[];
  handlers: Record<string, ProjectionHandler>;
}

export function defineProjection(projection: Projection): Projection {
  return projection;
}
