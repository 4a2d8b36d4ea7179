/**
 * Events of the status-pages context. Each page is one stream (`status-page-<id>`); each slug
 * in use is claimed in its own stream (`status-page-slug-<slug>`), appended with the expected
 * revision, so two pages can never hold the same slug whatever the number of API processes.
 */

export const STATUS_PAGE_CREATED = 'StatusPageCreated';
export const STATUS_PAGE_UPDATED = 'StatusPageUpdated';
export const STATUS_PAGE_DELETED = 'StatusPageDeleted';
export const STATUS_PAGE_SLUG_CLAIMED = 'StatusPageSlugClaimed';
export const STATUS_PAGE_SLUG_RELEASED = 'StatusPageSlugReleased';

export const STATUS_PAGE_EVENT_TYPES = [STATUS_PAGE_CREATED, STATUS_PAGE_UPDATED, STATUS_PAGE_DELETED] as const;

export const statusPageStream = (pageId: number) => `status-page-${pageId}`;
export const slugStream = (slug: string) => `status-page-slug-${slug}`;

/** One component: an endpoint of the page's team, under an optional display name. */
export interface StatusPageComponent {
  endpoint_id: number;
  /** null: the endpoint's own name, read when the page is served. */
  name: string | null;
}

export interface StatusPageFields {
  slug: string;
  title: string;
  description: string;
  components: StatusPageComponent[];
  history_days: number;
  /**
   * Show automatic incidents of the page's endpoints without waiting for a checkpoint, with a
   * generated first update (pages created before the setting existed: false).
   */
  publish_automatic_incidents: boolean;
}

export interface StatusPageCreatedData extends StatusPageFields {
  page_id: number;
  team_id: number;
  created_at: string;
}

export interface StatusPageUpdatedData {
  page_id: number;
  team_id: number;
  changes: Partial<StatusPageFields>;
  updated_at: string;
}

export interface StatusPageDeletedData {
  page_id: number;
  team_id: number;
  slug: string;
  deleted_at: string;
}

export interface SlugClaimedData {
  slug: string;
  page_id: number;
  claimed_at: string;
}

export interface SlugReleasedData {
  slug: string;
  page_id: number;
  released_at: string;
}
