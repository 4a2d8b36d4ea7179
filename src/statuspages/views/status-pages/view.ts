import type { StatusPageFields } from '../../domain/events.js';

/** The status-pages view (projection `status_pages`), written by `projection.ts`, read through `queries.ts` and by the public pages. */
export const STATUS_PAGES_PROJECTION = 'status_pages';
export const STATUS_PAGES_COLLECTION = 'status_pages';

/** One live page; a deleted page's document is removed. */
export interface StatusPageDoc extends Omit<StatusPageFields, 'publish_automatic_incidents'> {
  id: string;
  page_id: number;
  team_id: number;
  /** Absent in documents written before the setting existed: false. */
  publish_automatic_incidents?: boolean;
  created_at: string;
  updated_at: string;
}
