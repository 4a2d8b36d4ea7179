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

/** Counts of enabled endpoints (not deleted) by their latest applicable check; none yet: unchecked. */
export interface Health {
  enabled_endpoints: number;
  healthy_endpoints: number;
  failing_endpoints: number;
  unchecked_endpoints: number;
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
   * `healthOf` the team's endpoints, per project they are in now (the team's `endpoints`, counted
   * without reading each of them where the facts keep counts); projects with none may be missing.
   */
  healthByProject(teamId: number): Promise<Map<number, Health>>;
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

/** The health of these endpoints: enabled ones by their latest applicable check. */
export function healthOf(endpoints: Iterable<EndpointFact>): Health {
  const counts: Health = { enabled_endpoints: 0, healthy_endpoints: 0, failing_endpoints: 0, unchecked_endpoints: 0 };
  for (const e of endpoints) {
    if (!e.enabled) continue;
    counts.enabled_endpoints++;
    if (e.latest === null) counts.unchecked_endpoints++;
    else if (e.latest.success) counts.healthy_endpoints++;
    else counts.failing_endpoints++;
  }
  return counts;
}

/**
 * `healthOf` each project's endpoints, for facts that hold every endpoint (tests, benches, a view
 * generation built before the counts): one pass, so a project of thousands costs its size.
 */
export function healthByProjectOf(endpoints: EndpointFact[]): Map<number, Health> {
  const byProject = new Map<number, EndpointFact[]>();
  for (const e of endpoints) {
    const members = byProject.get(e.project_id);
    if (members) members.push(e);
    else byProject.set(e.project_id, [e]);
  }
  return new Map([...byProject].map(([projectId, members]) => [projectId, healthOf(members)]));
}

/** The sum of several health counts (a team's, from its projects'). */
export function sumHealth(parts: Iterable<Health>): Health {
  const total: Health = { enabled_endpoints: 0, healthy_endpoints: 0, failing_endpoints: 0, unchecked_endpoints: 0 };
  for (const part of parts) {
    total.enabled_endpoints += part.enabled_endpoints;
    total.healthy_endpoints += part.healthy_endpoints;
    total.failing_endpoints += part.failing_endpoints;
    total.unchecked_endpoints += part.unchecked_endpoints;
  }
  return total;
}
