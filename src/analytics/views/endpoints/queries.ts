import type { Doc, Filter } from '../../../platform/read-store/read-store.port.js';
import type { ReadStore } from '../../../platform/read-store/read-store.port.js';
import { ViewRebuildingError, type ViewReader } from '../../../platform/projections/views.js';
import {
  ANALYTICS_ENDPOINTS_COLLECTION,
  ANALYTICS_ENDPOINTS_PROJECTION,
  ANALYTICS_PROJECT_HEALTH_COLLECTION,
  ANALYTICS_PROJECTS_COLLECTION,
  type AnalyticsEndpointDoc,
  type AnalyticsProjectDoc,
  type AnalyticsProjectHealthDoc,
} from './view.js';
import { CHECK_MINUTES_COLLECTION, RAW_CHECKS_COLLECTION, REGION_CHECKS_COLLECTION, ROLLUPS_COLLECTION, ROLLUPS_PROJECTION, ROLLUP_MEMBERS_COLLECTION } from '../rollups/view.js';
import { RAW_OUTCOMES, consecutiveFailuresIn } from '../../application/consecutive-failures.js';
import { INCIDENTS, INCIDENTS_VIEW } from '../../../incidents/views/incidents/view.js';
import type { AnalyticsCollections } from '../rollups/queries.js';
import { healthByProjectOf, type AnalyticsFacts, type AnalyticsScope, type EndpointFact, type Health, type IncidentCounts, type ProjectFact, type ProjectMember } from '../../application/analytics-facts.js';
import { Slices } from '../../application/slices.js';


/** Documents per read: a page of 1,000 endpoint documents took up to 27 ms on a loaded machine. */
const PAGE = 250;
/** Project ids per membership query. */
const IN_CHUNK = 250;

interface IncidentDoc extends Doc {
  team_id: number;
  project_id: number;
  endpoint_ids: number[];
  first_error_at?: string | null;
  created_at?: string | null;
  resolved_at: string | null;
  merged_into_id: number | null;
}

/**
 * AnalyticsFacts over the views: projects, endpoints and latest applicable checks from
 * `analytics_endpoints`, consecutive failures from the raw applicable checks of
 * `analytics_rollups`, incidents from the incidents context's `incidents` view. While no
 * `incidents` view exists in the store (that context not deployed), there are no incidents to
 * count, so both counts are 0.
 */
export class ViewAnalyticsFacts implements AnalyticsFacts {
  private readonly present = new Set<string>();

  constructor(
    private readonly reader: ViewReader,
    private readonly store: ReadStore,
    /** Pass the AnalyticsQuery's: a large project's endpoint pages then share its turns of the event loop. */
    private readonly slices: Slices = new Slices(),
  ) {}

  /** Physical names of the rollup collections for AnalyticsQuery (active generation). */
  async collections(): Promise<AnalyticsCollections> {
    const [rollups, checks, regionChecks, members, checkMinutes] = await Promise.all([
      this.reader.collection(ROLLUPS_PROJECTION, ROLLUPS_COLLECTION),
      this.reader.collection(ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION),
      this.reader.collection(ROLLUPS_PROJECTION, REGION_CHECKS_COLLECTION),
      this.reader.collection(ROLLUPS_PROJECTION, ROLLUP_MEMBERS_COLLECTION),
      // A generation from before the time -> key map (v14, while 15 is rebuilt) has none: its
      // project index is read instead (`RawSpans`).
      this.reader.collection(ROLLUPS_PROJECTION, CHECK_MINUTES_COLLECTION).catch((error: unknown) => {
        if (error instanceof ViewRebuildingError) return null;
        throw error;
      }),
    ]);
    return { rollups, checks, regionChecks, members, checkMinutes };
  }

  async projects(teamId: number): Promise<ProjectFact[]> {
    const docs = (await this.findAll(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_PROJECTS_COLLECTION, { team_id: teamId }, 'project_id')) as unknown as AnalyticsProjectDoc[];
    return docs.map((d) => ({ project_id: d.project_id, name: d.name }));
  }

  /** The project when it belongs to the team; null otherwise. */
  async project(teamId: number, projectId: number): Promise<ProjectFact | null> {
    const doc = (await this.reader.get(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_PROJECTS_COLLECTION, projectId)) as AnalyticsProjectDoc | null;
    return doc && doc.team_id === teamId ? { project_id: doc.project_id, name: doc.name } : null;
  }

  async endpoints(teamId: number, scope: AnalyticsScope): Promise<EndpointFact[]> {
    let docs: AnalyticsEndpointDoc[];
    if (scope.kind === 'endpoint') {
      const doc = (await this.reader.get(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_ENDPOINTS_COLLECTION, scope.id)) as AnalyticsEndpointDoc | null;
      docs = doc && doc.team_id === teamId ? [doc] : [];
    } else {
      const filter: Filter = scope.kind === 'project' ? { team_id: teamId, project_id: scope.id } : { team_id: teamId };
      docs = (await this.findAll(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_ENDPOINTS_COLLECTION, filter, 'endpoint_id')) as unknown as AnalyticsEndpointDoc[];
    }
    return this.endpointFacts(docs, scope.kind === 'endpoint');
  }

  /**
   * The counts the projection keeps per project (one document per project with enabled
   * endpoints). While the active generation predates them (version 2 serves until version 3 is
   * built), they are counted from the team's endpoint documents.
   */
  async healthByProject(teamId: number): Promise<Map<number, Health>> {
    if (!(await this.hasCollection(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_PROJECT_HEALTH_COLLECTION))) {
      return healthByProjectOf(await this.endpoints(teamId, { kind: 'team', id: teamId }));
    }
    const docs = (await this.findAll(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_PROJECT_HEALTH_COLLECTION, { team_id: teamId }, 'project_id')) as unknown as AnalyticsProjectHealthDoc[];
    return new Map(
      docs.map((doc) => [
        doc.project_id,
        {
          enabled_endpoints: doc.enabled_endpoints,
          healthy_endpoints: doc.healthy_endpoints,
          failing_endpoints: doc.failing_endpoints,
          unchecked_endpoints: doc.unchecked_endpoints,
        },
      ]),
    );
  }

  /** One read of the project's endpoint documents for both `endpoints` and `membersOf`. */
  async projectEndpoints(teamId: number, projectId: number): Promise<{ endpoints: EndpointFact[]; members: ProjectMember[] }> {
    const docs = (await this.findAll(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_ENDPOINTS_COLLECTION, { project_id: projectId }, 'endpoint_id')) as unknown as AnalyticsEndpointDoc[];
    return {
      endpoints: await this.endpointFacts(docs.filter((doc) => doc.team_id === teamId), false),
      members: docs.map((doc) => ({ endpoint_id: doc.endpoint_id, project_id: doc.project_id })),
    };
  }

  /**
   * The facts of the documents that are not deleted. `consecutive`: count each failing
   * endpoint's failures in a row (only the endpoint object shows them; two indexed queries per
   * endpoint); otherwise the facts are made without a promise per document.
   */
  private async endpointFacts(docs: AnalyticsEndpointDoc[], consecutive: boolean): Promise<EndpointFact[]> {
    const live = docs.filter((doc) => !doc.deleted);
    const facts = live.map((doc): EndpointFact => ({
      endpoint_id: doc.endpoint_id,
      project_id: doc.project_id,
      name: doc.name,
      enabled: doc.enabled,
      latest:
        doc.latest_checked_at === null
          ? null
          : {
              checked_at: doc.latest_checked_at,
              success: doc.latest_success === true,
              status_code: doc.latest_status_code ?? 0,
              latency_ms: doc.latest_latency_ms ?? 0,
              consecutive_failures: 0,
            },
    }));
    if (consecutive) {
      await Promise.all(
        live.map(async (doc, i) => {
          const latest = facts[i].latest;
          if (latest && doc.latest_success === false) latest.consecutive_failures = await this.consecutiveFailures(doc.endpoint_id, doc.summarized_trailing_failures ?? 0);
        }),
      );
    }
    return facts;
  }

  async membersOf(projectIds: number[]): Promise<ProjectMember[]> {
    const members: ProjectMember[] = [];
    for (let i = 0; i < projectIds.length; i += IN_CHUNK) {
      const filter: Filter = { project_id: { in: projectIds.slice(i, i + IN_CHUNK) } };
      const docs = (await this.findAll(ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_ENDPOINTS_COLLECTION, filter, 'endpoint_id')) as unknown as AnalyticsEndpointDoc[];
      members.push(...docs.map((doc) => ({ endpoint_id: doc.endpoint_id, project_id: doc.project_id })));
    }
    return members;
  }

  /**
   * Failed applicable checks after the newest successful one (all of them when none succeeded).
   * `summarized`: those among the checks retention replaced by summaries, counted when no
   * retained check succeeded.
   */
  async consecutiveFailures(endpointId: number, summarized = 0): Promise<number> {
    const checks = await this.reader.collection(ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION);
    return consecutiveFailuresIn(this.store, checks, { endpoint_id: endpointId }, RAW_OUTCOMES, summarized);
  }

  async incidentCounts(teamId: number, scope: AnalyticsScope, range: { from: number; to: number }): Promise<IncidentCounts> {
    const incidents = await this.incidents(teamId, scope);
    let total = 0;
    let open = 0;
    for (const incident of incidents) {
      if (incident.resolved_at === null) open++;
      if (activeIn(incident, range)) total++;
    }
    return { total, open };
  }

  async openIncidentsByProject(teamId: number): Promise<Map<number, number>> {
    const open = new Map<number, number>();
    for (const incident of await this.incidents(teamId, { kind: 'team', id: teamId })) {
      if (incident.resolved_at === null) open.set(incident.project_id, (open.get(incident.project_id) ?? 0) + 1);
    }
    return open;
  }

  private async incidents(teamId: number, scope: AnalyticsScope): Promise<IncidentDoc[]> {
    if (!(await this.hasCollection(INCIDENTS_VIEW, INCIDENTS))) return [];
    const filter: Filter = { team_id: teamId };
    if (scope.kind === 'project') filter.project_id = scope.id;
    if (scope.kind === 'endpoint') filter.endpoint_ids = { has: scope.id };
    const docs = await this.findAll(INCIDENTS_VIEW, INCIDENTS, filter, 'id');
    // The view keeps the aggregate state under `state` (flat copies of a few fields beside it).
    const incidents = docs.map((doc): IncidentDoc => {
      const state = (doc.state ?? {}) as Record<string, unknown>;
      const pick = (field: string) => (state[field] !== undefined ? state[field] : doc[field]);
      return {
        id: doc.id,
        team_id: doc.team_id as number,
        project_id: doc.project_id as number,
        endpoint_ids: (doc.endpoint_ids ?? []) as number[],
        first_error_at: (pick('first_error_at') ?? null) as string | null,
        created_at: (pick('created_at') ?? null) as string | null,
        resolved_at: (pick('resolved_at') ?? null) as string | null,
        merged_into_id: (pick('merged_into_id') ?? null) as number | null,
      };
    });
    // A merged-away incident lives on in its target; it is not counted twice.
    return incidents.filter((incident) => incident.merged_into_id === null);
  }

  /** Whether the active generation has the collection; one found is remembered (a generation's collections stay until it is dropped, and a new generation has new names). */
  private async hasCollection(projection: string, collection: string): Promise<boolean> {
    const physical = await this.reader.collection(projection, collection);
    if (this.present.has(physical)) return true;
    if (!(await this.store.listCollections()).includes(physical)) return false;
    this.present.add(physical);
    return true;
  }

  private async findAll(projection: string, collection: string, filter: Filter, key: string): Promise<Doc[]> {
    const rows: Doc[] = [];
    let after: Array<string | number> | undefined;
    for (;;) {
      const page = await this.slices.run(() => this.reader.find(projection, collection, { filter, sort: [[key, 'asc']], after, limit: PAGE }));
      rows.push(...page);
      if (page.length < PAGE) return rows;
      after = [page[page.length - 1][key] as string | number];
    }
  }
}

/**
 * Active over [first error (or creation, if earlier), resolved_at): it overlaps the half-open
 * range when it started before `to` and was resolved after `from`. At the instant `resolved_at`
 * it is already resolved, so one resolved exactly at `from` was never active in the range.
 */
function activeIn(incident: IncidentDoc, range: { from: number; to: number }): boolean {
  const startText = incident.first_error_at ?? incident.created_at;
  const start = startText ? Date.parse(startText) : Number.NEGATIVE_INFINITY;
  const created = incident.created_at ? Date.parse(incident.created_at) : start;
  const startedAt = Math.min(start, created);
  if (!(startedAt < range.to)) return false;
  return incident.resolved_at === null || Date.parse(incident.resolved_at) > range.from;
}
