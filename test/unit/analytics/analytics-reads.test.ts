import { AnalyticsReads } from '../../../src/analytics/application/analytics-reads.js';
import type { AnalyticsQuery, TeamAnalytics } from '../../../src/analytics/views/rollups/queries.js';
import { ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_PROJECTS_COLLECTION } from '../../../src/analytics/views/endpoints/view.js';
import { makeWindow } from '../../../src/analytics/domain/window.js';
import { physicalCollection } from '../../../src/platform/projections/registry.js';
import { ViewReader } from '../../../src/platform/projections/views.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { analyticsEndpointsProjection } from '../../../src/analytics/views/endpoints/projection.js';
import { analyticsRollupsProjection } from '../../../src/analytics/views/rollups/projection.js';

/** Expensive analytics objects are bounded: computed once for requests arriving together, and kept under the status pages' freshness rule. */
describe('AnalyticsReads', () => {
  const window = makeWindow(Date.parse('2026-03-01T00:00:00Z'), Date.parse('2026-03-02T00:00:00Z'), 24);
  let store: SqliteReadStore;
  let computed = 0;
  const query = {
    teamAnalytics: async (teamId: number) => {
      computed++;
      await new Promise((resolve) => setImmediate(resolve));
      return { team_id: teamId, computed } as unknown as TeamAnalytics;
    },
  } as unknown as AnalyticsQuery;

  beforeEach(async () => {
    computed = 0;
    store = new SqliteReadStore(':memory:');
    for (const projection of [analyticsRollupsProjection, analyticsEndpointsProjection]) {
      for (const spec of projection.collections) await store.ensureCollection({ ...spec, name: physicalCollection(projection.name, 1, spec.name) });
    }
  });
  afterEach(() => store.close());

  it('computes an object once for requests that arrive together', async () => {
    const reads = new AnalyticsReads(new ViewReader(store), query, Number.POSITIVE_INFINITY);
    const answers = await Promise.all([reads.team(1, window), reads.team(1, window), reads.team(1, window)]);
    expect(computed).toBe(1);
    expect(answers.map((a) => a.team_id)).toEqual([1, 1, 1]);
  });

  it('serves an expensive object again until a view it is read from changes, and computes a cheap one afresh', async () => {
    const expensive = new AnalyticsReads(new ViewReader(store), query, 0);
    await expensive.team(1, window);
    await expensive.team(1, window);
    expect(computed).toBe(1);
    // Projects change rarely: their writes show at once.
    await store.commit([{ op: 'put', collection: physicalCollection(ANALYTICS_ENDPOINTS_PROJECTION, 1, ANALYTICS_PROJECTS_COLLECTION), doc: { id: '1', project_id: 1, team_id: 1, name: 'P' } }]);
    await expensive.team(1, window);
    expect(computed).toBe(2);

    const cheap = new AnalyticsReads(new ViewReader(store), query, Number.POSITIVE_INFINITY);
    await cheap.team(1, window);
    await cheap.team(1, window);
    expect(computed).toBe(4);
  });
});
