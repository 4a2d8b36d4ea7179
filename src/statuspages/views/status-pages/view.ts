import type { StatusPageComponent } from '../../domain/events.js';

/** The status-pages view (projection `status_pages`), written by `projection.ts`, read through `queries.ts` and by the public pages. */
export const STATUS_PAGES_PROJECTION = 'status_pages';
export const STATUS_PAGES_COLLECTION = 'status_pages';

/** One live page; a deleted page's document is removed. */
export interface StatusPageDoc {
  id: string;
  page_id: number;
  team_id: number;
  slug: string;
  title: string;
  description: string;
  components: StatusPageComponent[];
  history_days: number;
  /** Absent in documents written before the setting existed: false. */
  publish_automatic_incidents?: boolean;
  created_at: string;
  updated_at: string;
}
