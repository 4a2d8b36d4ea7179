/**
 * Facts the analytics objects need from other contexts' views (endpoints, latest checks,
 * incidents). Analytics does not build those views; whoever owns them implements this port.
 */
import type { AnalyticsScopeKind } from '../views/rollups/view.js';

export type { AnalyticsScopeKind };

export interface AnalyticsScope {
  kind: AnalyticsScopeKind;
  id: number;
  /** Endpoint scope only: the checks recorded in this probe region alone (facts ignore it). */
  region?: string;
}

/** The newest APPLICABLE (scheduled, unsuppressed) check of an endpoint. */
export interface LatestApplicableCheck {
  checked_at: string;
  success: boolean;
  status_code: number;
  latency_ms: number;
  /** Failing applicable checks in a row, ending with this one (0 when it succeeded). */
  consecutive_failures: number;
}

export interface EndpointFact {
  endpoint_id: number;
  project_id: number;
  name: string;
  enabled: boolean;
  /** null: the endpoint has no applicable check yet (it counts as unchecked). */
  latest: LatestApplicableCheck | null;
}

/** An endpoint whose checks count for a project: it is in the project now (a deleted one: the project it was deleted from). */
export interface ProjectMember {
  endpoint_id: number;
  project_id: number;
}

export interface ProjectFact {
  project_id: number;
  name: string;
}

export interface IncidentCounts {
  /** Incidents active at any time in `[from, to)`. */
  total: number;
  /** Incidents open now. */
  open: number;
}

export interface AnalyticsFacts {
  /** Every project of the team. */
  projects(teamId: number): Promise<ProjectFact[]>;
  /** Every endpoint (enabled or not, not deleted) of the scope; for an endpoint scope, that endpoint alone. */
  endpoints(teamId: number, scope: AnalyticsScope): Promise<EndpointFact[]>;
  /**
   * The endpoints whose checks count for these projects (docs/decisions.md, "Analytics"): those
   * in them now, deleted ones included. Project ids are unique across teams.
   */
  membersOf(projectIds: number[]): Promise<ProjectMember[]>;
  /**
   * Optional: a project's `endpoints` and its `membersOf`, as those give them, read together
   * (both come from the same endpoint documents; a project of thousands pays for them once).
   */
  projectEndpoints?(teamId: number, projectId: number): Promise<{ endpoints: EndpointFact[]; members: ProjectMember[] }>;
  /**
   * Incidents of the scope (affecting the endpoint, for an endpoint scope; of the project by the
   * incident's own project, for a project scope). Range in epoch ms.
   */
  incidentCounts(teamId: number, scope: AnalyticsScope, range: { from: number; to: number }): Promise<IncidentCounts>;
  /** Open incidents per project id; projects without any may be missing. */
  openIncidentsByProject(teamId: number): Promise<Map<number, number>>;
}
