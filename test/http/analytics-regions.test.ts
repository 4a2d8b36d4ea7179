import { analyticsWorld, iso, type CheckSpec } from '../support/analytics-fixtures.js';

const T0 = Date.parse('2025-06-01T00:00:00.000Z');
const MIN = 60_000;
const EMPTY_TOTALS = { checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null, min_latency_ms: null, max_latency_ms: null, p95_latency_ms: null };
const UNCHECKED = { up: null, last_check_at: null, last_status_code: null, last_latency_ms: null, consecutive_failures: 0 };

/** Endpoint analytics with `?region=` (issue 25): the checks of one probe region alone. */
describe('endpoint analytics by probe region', () => {
  const { w, t } = analyticsWorld();

  const range = (from: number, to: number, buckets: number) => `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}&buckets=${buckets}`;
  const Q = range(T0, T0 + 10 * MIN, 2);

  /** Three checks from eu-west, three from us-east and a manual one (counted nowhere). */
  const CHECKS: CheckSpec[] = [
    { at: T0 + 1 * MIN, latency: 100, region: 'eu-west' },
    { at: T0 + 2 * MIN, latency: 200, region: 'eu-west' },
    { at: T0 + 3 * MIN, latency: 300, success: false, status: 503, region: 'eu-west' },
    { at: T0 + 4 * MIN, latency: 1000, region: 'us-east' },
    { at: T0 + 5 * MIN, latency: 3000, success: false, region: 'us-east' },
    { at: T0 + 6 * MIN, latency: 2000, region: 'us-east' },
    { at: T0 + 7 * MIN, latency: 5, source: 'manual', region: 'eu-west' },
  ];

  async function endpointWith(checks: CheckSpec[]) {
    const team = await w.team();
    const projectId = await w.project(team.teamId, 'Main');
    const endpointId = await w.endpoint(team.teamId, projectId, 'API');
    await w.importChecks(team.teamId, endpointId, checks);
    const get = async (path: string) => {
      const response = await t.request('GET', path, { token: team.token });
      expect([path, response.statusCode]).toEqual([path, 200]);
      return response.json().data;
    };
    return { ...team, projectId, endpointId, analytics: (query: string) => get(`/api/public/v2/endpoints/${endpointId}/analytics?${query}`), get };
  }

  it('gives each region its own figures and current, and leaves the figures without ?region= those of every check', async () => {
    const e = await endpointWith(CHECKS);
    const all = await e.analytics(Q);
    // The same checks without regions, on another endpoint: what the route answered before regions.
    const plain = await endpointWith(CHECKS.map(({ region: _region, ...check }) => check));
    const before = await plain.analytics(Q);
    expect({ ...all, team_id: 0, project_id: 0, endpoint_id: 0 }).toEqual({ ...before, team_id: 0, project_id: 0, endpoint_id: 0 });
    expect(all.totals).toEqual({ checks: 6, failures: 2, uptime_percent: 66.667, avg_latency_ms: 1100, min_latency_ms: 100, max_latency_ms: 3000, p95_latency_ms: 2000 });
    expect(all.current).toEqual({ up: true, last_check_at: iso(T0 + 6 * MIN), last_status_code: 200, last_latency_ms: 2000, consecutive_failures: 0 });

    const eu = await e.analytics(`${Q}&region=eu-west`);
    expect(eu).toEqual({
      ...all,
      totals: { checks: 3, failures: 1, uptime_percent: 66.667, avg_latency_ms: 200, min_latency_ms: 100, max_latency_ms: 300, p95_latency_ms: 200 },
      series: [
        { bucket_start: iso(T0), checks: 3, failures: 1, uptime_percent: 66.667, avg_latency_ms: 200 },
        { bucket_start: iso(T0 + 5 * MIN), checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null },
      ],
      current: { up: false, last_check_at: iso(T0 + 3 * MIN), last_status_code: 503, last_latency_ms: 300, consecutive_failures: 1 },
    });
    const us = await e.analytics(`${Q}&region=us-east`);
    expect(us).toEqual({
      ...all,
      totals: { checks: 3, failures: 1, uptime_percent: 66.667, avg_latency_ms: 2000, min_latency_ms: 1000, max_latency_ms: 3000, p95_latency_ms: 2000 },
      series: [
        { bucket_start: iso(T0), checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 1000 },
        { bucket_start: iso(T0 + 5 * MIN), checks: 2, failures: 1, uptime_percent: 50, avg_latency_ms: 2500 },
      ],
      current: all.current,
    });
    // The regions' series add up to the endpoint's.
    expect(all.series.map((b: any) => b.checks)).toEqual(eu.series.map((b: any, i: number) => b.checks + us.series[i].checks));

    // A region no check came from (a name like an Object.prototype member included): the figures of no checks, not an error.
    for (const region of ['ap-south', 'local', 'constructor', 'a'.repeat(32)]) {
      expect(await e.analytics(`${Q}&region=${region}`)).toEqual({
        ...all,
        totals: EMPTY_TOTALS,
        series: all.series.map((b: any) => ({ ...b, checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null })),
        current: UNCHECKED,
      });
    }

    // The team and project routes take no region: every check counts there, as before.
    const project = await e.get(`/api/public/v2/projects/${e.projectId}/analytics?${Q}`);
    expect(await e.get(`/api/public/v2/projects/${e.projectId}/analytics?${Q}&region=eu-west`)).toEqual(project);
    expect(project.totals).toEqual(all.totals);
    expect((await e.get(`/api/public/v2/analytics?${Q}&region=eu-west`)).totals).toEqual(all.totals);
  });

  it('answers an endpoint whose checks all came from one region with its own figures for that region, and none for another', async () => {
    const e = await endpointWith(CHECKS.map((check) => ({ ...check, region: 'eu-west' })));
    const all = await e.analytics(Q);
    expect(all.totals.checks).toBe(6);
    expect(await e.analytics(`${Q}&region=eu-west`)).toEqual(all);
    expect((await e.analytics(`${Q}&region=us-east`)).totals).toEqual(EMPTY_TOTALS);
    // A second region arriving later splits the endpoint's rows: the first region keeps all it had.
    await w.importChecks(e.teamId, e.endpointId, [{ at: T0 + 8 * MIN, latency: 50, region: 'us-east' }]);
    expect((await e.analytics(`${Q}&region=eu-west`)).totals).toEqual(all.totals);
    expect((await e.analytics(`${Q}&region=us-east`)).totals).toEqual({ checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 50, min_latency_ms: 50, max_latency_ms: 50, p95_latency_ms: 50 });
    expect((await e.analytics(Q)).totals.checks).toBe(7);
  });

  it('refuses a region that cannot be one with a 400 listing it beside every other problem', async () => {
    const e = await endpointWith([]);
    const refused = async (query: string) => {
      const response = await t.request('GET', `/api/public/v2/endpoints/${e.endpointId}/analytics?${query}`, { token: e.token });
      expect([query, response.statusCode, response.json().code]).toEqual([query, 400, 'validation_failed']);
      return response.json().errors.map((error: any) => [error.field, error.code]).sort();
    };
    for (const region of ['EU-west', 'eu_west', 'eu.west', '', 'a'.repeat(33), '%20eu']) {
      expect(await refused(`region=${region}`)).toEqual([['region', 'invalid_value']]);
    }
    expect(await refused('region=a&region=b')).toEqual([['region', 'invalid_value']]);
    expect(await refused('region=Nope&window=2d')).toEqual([
      ['region', 'invalid_value'],
      ['window', 'invalid_value'],
    ]);
    // The check import refuses one too.
    const imported = await t.admin('POST', `/api/v2/teams/${e.teamId}/endpoints/${e.endpointId}/checks/import`, {
      checks: [{ checked_at: iso(T0), success: true, status_code: 200, latency_ms: 1, region: 'Not a region' }],
    });
    expect(imported.statusCode).toBe(400);
  });

  it('lists region on the endpoint route in the OpenAPI document, and only there', async () => {
    const doc = (await t.request('GET', '/api/public/v2/openapi.json')).json();
    const parameter = doc.paths['/api/public/v2/endpoints/{endpointID}/analytics'].get.parameters.find((p: any) => p.name === 'region');
    expect(parameter).toMatchObject({ in: 'query', required: false, schema: { type: 'string', pattern: '^[a-z0-9-]{1,32}$' } });
    for (const path of ['/api/public/v2/analytics', '/api/public/v2/projects/{projectID}/analytics']) {
      expect(doc.paths[path].get.parameters.map((p: any) => p.name)).not.toContain('region');
    }
  });
});
