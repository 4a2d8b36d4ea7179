import { DerivedViewCache, type ViewSource } from '../../platform/projections/view-cache.js';
import type { ViewReader } from '../../platform/projections/views.js';
import { INCIDENTS, INCIDENTS_VIEW } from '../../incidents/views/incidents/view.js';
import { ROLLUPS_COLLECTION, ROLLUPS_PROJECTION } from '../views/rollups/view.js';
import { ANALYTICS_ENDPOINTS_COLLECTION, ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_PROJECTS_COLLECTION } from '../views/endpoints/view.js';
import type { AnalyticsWindow } from '../domain/window.js';
import type { AnalyticsQuery, EndpointAnalytics, ProjectAnalytics, TeamAnalytics } from '../views/rollups/queries.js';

/**
 * The rollups and the endpoints' latest checks are written with every check: an expensive
 * object read before such a write is served for up to this long after it was computed (the
 * status pages' rule for their derived views, `DerivedViewCache`), so a flood of the same
 * request costs at most one computation per period. Projects and incidents change rarely: their
 * writes show at once.
 */
export const BUSY_VIEW_LAG_MS = 2_000;

/** An object that took at least this long to compute is kept (cheaper ones are computed afresh, so they read their writes). */
export const EXPENSIVE_MS = 200;

const SOURCES: ViewSource[] = [
  { projection: ROLLUPS_PROJECTION, collection: ROLLUPS_COLLECTION, lagMs: BUSY_VIEW_LAG_MS },
  // Also stands for the projects' health counts, written only in the same commits as endpoint documents.
  { projection: ANALYTICS_ENDPOINTS_PROJECTION, collection: ANALYTICS_ENDPOINTS_COLLECTION, lagMs: BUSY_VIEW_LAG_MS },
  { projection: ANALYTICS_ENDPOINTS_PROJECTION, collection: ANALYTICS_PROJECTS_COLLECTION },
  { projection: INCIDENTS_VIEW, collection: INCIDENTS },
];

type AnyAnalytics = TeamAnalytics | ProjectAnalytics | EndpointAnalytics | null;

/**
 * The three analytics objects, bounded: requests for the same object arriving together under
 * the same views share one computation, and an object that was expensive to compute is served
 * again under the freshness rule above. Everything it depends on is in `SOURCES`, except the
 * retention horizon, which moves at UTC midnight: no object is kept past the next one.
 */
export class AnalyticsReads {
  private readonly cache: DerivedViewCache<AnyAnalytics>;

  constructor(
    reader: ViewReader,
    private readonly query: AnalyticsQuery,
    private readonly expensiveMs = EXPENSIVE_MS,
  ) {
    this.cache = new DerivedViewCache(reader, SOURCES, { capacity: 500 });
  }

  async team(teamId: number, window: AnalyticsWindow): Promise<TeamAnalytics> {
    return (await this.read(`team:${teamId}:${key(window)}`, () => this.query.teamAnalytics(teamId, window))) as TeamAnalytics;
  }

  async project(teamId: number, projectId: number, window: AnalyticsWindow): Promise<ProjectAnalytics> {
    return (await this.read(`project:${teamId}:${projectId}:${key(window)}`, () => this.query.projectAnalytics(teamId, projectId, window))) as ProjectAnalytics;
  }

  /**
   * `region`: that probe region's checks alone. The regions' rows and documents are written in
   * the same commits as rollup rows, so `SOURCES` covers them.
   */
  async endpoint(teamId: number, endpointId: number, window: AnalyticsWindow, region?: string): Promise<EndpointAnalytics | null> {
    const cacheKey = `endpoint:${teamId}:${endpointId}:${key(window)}${region === undefined ? '' : `:${region}`}`;
    return (await this.read(cacheKey, () => this.query.endpointAnalytics(teamId, endpointId, window, region))) as EndpointAnalytics | null;
  }

  private async read(cacheKey: string, compute: () => Promise<AnyAnalytics>): Promise<AnyAnalytics> {
    let value: AnyAnalytics = null;
    const kept = await this.cache.get(cacheKey, async () => {
      const started = performance.now();
      value = await compute();
      if (value === null) return null;
      const expensive = performance.now() - started >= this.expensiveMs;
      return { value, validUntil: expensive ? nextUtcMidnight(Date.now()) : 0 };
    });
    return kept ?? value;
  }
}

function key(window: AnalyticsWindow): string {
  return `${window.from}:${window.to}:${window.buckets}`;
}

function nextUtcMidnight(now: number): number {
  return Math.floor(now / 86_400_000) * 86_400_000 + 86_400_000;
}
