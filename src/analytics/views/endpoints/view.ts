/**
 * The analytics endpoints view (projection `analytics_endpoints`: projects, endpoints with their
 * current project, latest applicable check and deletion tombstone, and each project's health
 * counts), defined here once: written by `projection.ts`, read by `queries.ts` (ViewAnalyticsFacts).
 */
/** Projection `analytics_endpoints`: projects, endpoints (current project, latest applicable check, tombstone). */
export const ANALYTICS_ENDPOINTS_PROJECTION = 'analytics_endpoints';
export const ANALYTICS_PROJECTS_COLLECTION = 'analytics_projects';
export const ANALYTICS_ENDPOINTS_COLLECTION = 'analytics_endpoints';
export const ANALYTICS_PROJECT_HEALTH_COLLECTION = 'analytics_project_health';

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

/**
 * The health counts of the endpoints a project holds now (enabled and not deleted; by their
 * latest applicable check), kept as endpoints change, so that team analytics cost the team's
 * project count, not its endpoint count. Id: the project id. A project without such endpoints
 * has no document. Kept after the project is deleted while an endpoint still names it (see
 * docs/architecture.md, "Deleting endpoints and projects"): its endpoints still count for the team.
 */
export interface AnalyticsProjectHealthDoc {
  id: string;
  project_id: number;
  team_id: number;
  enabled_endpoints: number;
  healthy_endpoints: number;
  failing_endpoints: number;
  unchecked_endpoints: number;
}

/** Where an endpoint document counts in its project's health: nowhere (deleted or disabled), or one of three states. */
export type HealthShare = { team_id: number; project_id: number; state: 'healthy_endpoints' | 'failing_endpoints' | 'unchecked_endpoints' } | null;

export function healthShareOf(doc: AnalyticsEndpointDoc | null): HealthShare {
  if (!doc || doc.deleted || !doc.enabled) return null;
  const state = doc.latest_checked_at === null ? 'unchecked_endpoints' : doc.latest_success === true ? 'healthy_endpoints' : 'failing_endpoints';
  return { team_id: doc.team_id, project_id: doc.project_id, state };
}

export function sameHealthShare(a: HealthShare, b: HealthShare): boolean {
  return a === b || (a !== null && b !== null && a.project_id === b.project_id && a.team_id === b.team_id && a.state === b.state);
}

/** `doc` (null: none yet) with one endpoint's share added (`sign` 1) or taken out (-1). */
export function withHealthShare(doc: AnalyticsProjectHealthDoc | null, share: NonNullable<HealthShare>, sign: 1 | -1): AnalyticsProjectHealthDoc {
  const base = doc ?? {
    id: String(share.project_id),
    project_id: share.project_id,
    team_id: share.team_id,
    enabled_endpoints: 0,
    healthy_endpoints: 0,
    failing_endpoints: 0,
    unchecked_endpoints: 0,
  };
  return { ...base, enabled_endpoints: base.enabled_endpoints + sign, [share.state]: base[share.state] + sign };
}
