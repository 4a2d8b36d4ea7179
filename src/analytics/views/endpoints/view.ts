/**
 * The analytics endpoints view (projection `analytics_endpoints`: projects, endpoints with their
 * current project, latest applicable check and deletion tombstone), defined here once: written
 * by `projection.ts`, read by `queries.ts` (ViewAnalyticsFacts).
 */
/** Projection `analytics_endpoints`: projects, endpoints (current project, latest applicable check, tombstone). */
export const ANALYTICS_ENDPOINTS_PROJECTION = 'analytics_endpoints';
export const ANALYTICS_PROJECTS_COLLECTION = 'analytics_projects';
export const ANALYTICS_ENDPOINTS_COLLECTION = 'analytics_endpoints';

export interface AnalyticsProjectDoc {
  id: string;
  project_id: number;
  team_id: number;
  name: string;
}

export interface AnalyticsEndpointDoc {
  id: string;
  endpoint_id: number;
  team_id: number;
  /** The project the endpoint is in now (its checks count for it); a deleted one's last project. */
  project_id: number;
  name: string;
  enabled: boolean;
  /**
   * Deleted (application API): the endpoint has left every comparison (rows, health, its own
   * analytics), but the document stays so that its checks keep counting for the project it was
   * deleted from, as they keep counting for its team.
   */
  deleted?: boolean;
  /** Newest applicable check (by checked_at, then check_id); null fields while there is none. */
  latest_check_id: number | null;
  latest_checked_at: string | null;
  latest_checked_at_ms: number | null;
  latest_success: boolean | null;
  latest_status_code: number | null;
  latest_latency_ms: number | null;
  /** Failed applicable checks, among those retention summarized, after the newest successful one (see onChecksSummarized). */
  summarized_trailing_failures?: number;
}
