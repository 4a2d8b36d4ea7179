/**
 * A check counts for its endpoint's CURRENT project (docs/decisions.md, "Analytics"): after an
 * endpoint moves, one project response's totals, series, p95 and endpoint rows, and the team's
 * project rows, all follow the endpoint. A deleted endpoint stays in the project it was deleted
 * from for the checks it made.
 */
import type { CheckRecordedData } from '../../src/checks/domain/check.js';
import { referenceAnalytics } from '../../src/analytics/domain/reference.js';
import { makeWindow } from '../../src/analytics/domain/window.js';
import { analyticsWorld, iso, type CheckSpec } from '../support/analytics-fixtures.js';
import { RAW_CHECKS_COLLECTION, ROLLUPS_PROJECTION, ROLLUP_MEMBERS_COLLECTION } from '../../src/analytics/views/rollups/view.js';
import { ProjectionRegistry, physicalCollection } from '../../src/platform/projections/registry.js';
import type { TestApp } from '../support/test-app.js';

const T0 = Date.parse('2025-09-01T00:00:00.000Z');
const SEC = 1000;
const MIN = 60_000;

// `from` off the minute grid, so the first minute is read from raw checks (where E has one).
const FROM = T0 + 30 * SEC;
const TO = T0 + 60 * MIN + 30 * SEC;
const QUERY = `from=${encodeURIComponent(iso(FROM))}&to=${encodeURIComponent(iso(TO))}&buckets=2`;

/** GET of an analytics route over [FROM, TO) in two buckets: its data. */
const getter = (t: TestApp) => async (token: string, path: string) => {
  const response = await t.request('GET', `${path}?${QUERY}`, { token });
  expect(response.statusCode).toBe(200);
  return response.json().data;
};
const figures = (o: { checks: number; failures: number; uptime_percent: number | null; avg_latency_ms: number | null }) => ({
  checks: o.checks,
  failures: o.failures,
  uptime_percent: o.uptime_percent,
  avg_latency_ms: o.avg_latency_ms,
});

describe('project analytics follow the endpoint’s current project', () => {
  const { w, t } = analyticsWorld();
  const get = getter(t);
  const sumChecks = (rows: Array<{ checks: number }>) => rows.reduce((n, row) => n + row.checks, 0);

  it('after an endpoint moves from A to B, A shows none of its checks and B all of them: totals, series, p95, rows and team rows', async () => {
    const { teamId, token } = await w.team('Movers');
    const a = await w.project(teamId, 'A');
    const b = await w.project(teamId, 'B');
    const moved = await w.endpoint(teamId, a, 'Moved');
    const stays = await w.endpoint(teamId, a, 'Stays');
    const inB = await w.endpoint(teamId, b, 'In B');
    await w.importChecks(teamId, moved, [
      { at: T0 + 45 * SEC, latency: 100 },
      { at: T0 + 2 * MIN, latency: 300 },
      { at: T0 + 3 * MIN, latency: 900, success: false },
    ]);
    await w.importChecks(teamId, stays, [{ at: T0 + 10 * MIN, latency: 20 }]);
    await w.importChecks(teamId, inB, [
      { at: T0 + 90 * SEC, latency: 50 },
      { at: T0 + 40 * MIN, latency: 70 },
    ]);

    await w.moveEndpoint(teamId, moved, b);

    const projectA = await get(token, `/api/public/v2/projects/${a}/analytics`);
    expect(projectA.totals).toEqual({ checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 20, min_latency_ms: 20, max_latency_ms: 20, p95_latency_ms: 20 });
    expect(projectA.series.map((item: { checks: number }) => item.checks)).toEqual([1, 0]);
    expect(projectA.endpoints.map((row: { endpoint_id: number; checks: number }) => [row.endpoint_id, row.checks])).toEqual([[stays, 1]]);
    expect(sumChecks(projectA.endpoints)).toBe(projectA.totals.checks);

    const projectB = await get(token, `/api/public/v2/projects/${b}/analytics`);
    // 100 + 300 + 900 + 50 + 70 = 1420 / 5; p95 of the successes [50, 70, 100, 300]: rank 4.
    expect(projectB.totals).toEqual({ checks: 5, failures: 1, uptime_percent: 80, avg_latency_ms: 284, min_latency_ms: 50, max_latency_ms: 900, p95_latency_ms: 300 });
    expect(projectB.series.map((item: { bucket_start: string; checks: number; failures: number }) => [item.bucket_start, item.checks, item.failures])).toEqual([
      [iso(FROM), 4, 1],
      [iso(FROM + 30 * MIN), 1, 0],
    ]);
    expect(projectB.endpoints.map((row: { endpoint_id: number; checks: number; failures: number }) => [row.endpoint_id, row.checks, row.failures]).sort()).toEqual(
      [
        [moved, 3, 1],
        [inB, 2, 0],
      ].sort(),
    );
    expect(sumChecks(projectB.endpoints)).toBe(projectB.totals.checks);

    const team = await get(token, '/api/public/v2/analytics');
    expect(team.totals.checks).toBe(6);
    const row = (projectId: number) => team.projects.find((p: { project_id: number }) => p.project_id === projectId);
    expect(figures(row(a))).toEqual(figures(projectA.totals));
    expect(figures(row(b))).toEqual(figures(projectB.totals));
    expect(sumChecks(team.projects)).toBe(team.totals.checks);
  });

  it('keeps every figure of both projects and the team exact while an endpoint moves back and forth between them, with checks in between', async () => {
    const team = await w.team('Back and forth');
    const { teamId, token } = team;
    const a = await w.project(teamId, 'A');
    const b = await w.project(teamId, 'B');
    const traveller = await w.endpoint(teamId, a, 'Traveller');
    const homeA = await w.endpoint(teamId, a, 'Home A');
    const homeB = await w.endpoint(teamId, b, 'Home B');
    // Latencies chosen so that the traveller holds each project's minimum and maximum in turn.
    const spread = (first: number, latencies: number[]): CheckSpec[] =>
      latencies.map((latency, i) => ({ at: T0 + first * MIN + i * 7 * MIN + 13 * SEC, latency, success: latency % 3 !== 0 }));
    await w.importChecks(teamId, traveller, spread(0, [5, 900, 40]));
    await w.importChecks(teamId, homeA, spread(1, [50, 60, 70]));
    await w.importChecks(teamId, homeB, spread(2, [20, 80]));
    await w.moveEndpoint(teamId, traveller, b);
    await w.importChecks(teamId, traveller, spread(3, [1, 1000]));
    await w.moveEndpoint(teamId, traveller, a);
    await w.moveEndpoint(teamId, traveller, b);
    await w.importChecks(teamId, homeA, spread(4, [3]));

    const checks: CheckRecordedData[] = [
      ...(await w.recordedChecks(team, b, traveller)),
      ...(await w.recordedChecks(team, a, homeA)),
      ...(await w.recordedChecks(team, b, homeB)),
    ];
    const current = new Map([
      [traveller, b],
      [homeA, a],
      [homeB, b],
    ]);
    const window = makeWindow(FROM, TO, 2);
    for (const [project, members] of [
      [a, [homeA]],
      [b, [traveller, homeB]],
    ] as const) {
      const data = await get(token, `/api/public/v2/projects/${project}/analytics`);
      const reference = referenceAnalytics(checks, { kind: 'project', id: project }, window, [...members], current);
      expect(data.totals).toEqual(reference.totals);
      expect(data.series).toEqual(reference.series);
      expect(data.endpoints.map((row: { endpoint_id: number; checks: number; failures: number; uptime_percent: number | null; avg_latency_ms: number | null }) => [row.endpoint_id, figures(row)])).toEqual(
        [...members].sort((x, y) => x - y).map((id) => {
          const f = reference.children.get(id)!;
          return [id, figures(f)];
        }),
      );
    }
    const teamData = await get(token, '/api/public/v2/analytics');
    const teamReference = referenceAnalytics(checks, { kind: 'team', id: teamId }, window, [a, b], current);
    expect(teamData.totals).toEqual(teamReference.totals);
    for (const row of teamData.projects) expect(figures(row)).toEqual(figures(teamReference.children.get(row.project_id)!));
  });

  it('keeps a deleted endpoint’s checks in the project it was deleted from (totals, series, team row) while it leaves the rows', async () => {
    const { teamId, token } = await w.team('Deleters');
    const project = await w.project(teamId, 'P');
    const doomed = await w.endpoint(teamId, project, 'Doomed');
    const kept = await w.endpoint(teamId, project, 'Kept');
    await w.importChecks(teamId, doomed, [
      { at: T0 + 5 * MIN, latency: 200 },
      { at: T0 + 6 * MIN, latency: 400, success: false },
    ]);
    await w.importChecks(teamId, kept, [{ at: T0 + 7 * MIN, latency: 60 }]);

    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/endpoints/${doomed}`)).statusCode).toBe(204);

    const analytics = await get(token, `/api/public/v2/projects/${project}/analytics`);
    expect(analytics.totals).toMatchObject({ checks: 3, failures: 1, p95_latency_ms: 200 });
    expect(analytics.series.map((item: { checks: number }) => item.checks)).toEqual([3, 0]);
    expect(analytics.endpoints.map((row: { endpoint_id: number; checks: number }) => [row.endpoint_id, row.checks])).toEqual([[kept, 1]]);
    expect(analytics.health.enabled_endpoints).toBe(1);
    const team = await get(token, '/api/public/v2/analytics');
    expect(figures(team.projects[0])).toEqual(figures(analytics.totals));
  });

  it('keeps a deleted project’s checks in the team’s totals, series and p95 (the raw edge minute included)', async () => {
    const { teamId, token } = await w.team('Project deleters');
    const gone = await w.project(teamId, 'Gone');
    const stays = await w.project(teamId, 'Stays');
    const doomed = await w.endpoint(teamId, gone, 'Doomed');
    const kept = await w.endpoint(teamId, stays, 'Kept');
    // 00:00:45 lies in the window's first, part minute: read from raw rows, not rollups.
    await w.importChecks(teamId, doomed, [
      { at: T0 + 45 * SEC, latency: 500 },
      { at: T0 + 5 * MIN, latency: 400 },
    ]);
    await w.importChecks(teamId, kept, [{ at: T0 + 10 * MIN, latency: 10 }]);
    const before = await get(token, '/api/public/v2/analytics');
    expect(before.totals).toMatchObject({ checks: 3, p95_latency_ms: 500 });

    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/endpoints/${doomed}`)).statusCode).toBe(204);
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/projects/${gone}`)).statusCode).toBe(204);

    const after = await get(token, '/api/public/v2/analytics');
    expect(after.projects.map((row: { project_id: number }) => row.project_id)).toEqual([stays]);
    expect(after.totals).toEqual(before.totals);
    expect(after.series).toEqual(before.series);
  });
});

describe('a team’s primary project (rollups v11: its raw rows leave their team id out)', () => {
  // A world of its own: the rebuild below leaves the in-process runner's analytics_rollups in
  // its rebuilt state, which later tests' imports would not reach.
  const { w, t } = analyticsWorld();
  const get = getter(t);

  it('answers a team of several projects as the reference, across moves into and out of its primary project (its first endpoint’s), and the same after a rebuild', async () => {
    const team = await w.team('Primary project');
    const { teamId, token } = team;
    const a = await w.project(teamId, 'A');
    const b = await w.project(teamId, 'B');
    const c = await w.project(teamId, 'C');
    // The team's first endpoint (and check) is in B: B is its primary project (rollups v11), not the first made.
    const first = await w.endpoint(teamId, b, 'First');
    const inA = await w.endpoint(teamId, a, 'In A');
    const inC = await w.endpoint(teamId, c, 'In C');
    const spread = (start: number, latencies: number[]): CheckSpec[] =>
      latencies.map((latency, i) => ({ at: T0 + start * MIN + i * 7 * MIN + 13 * SEC, latency, success: latency % 3 !== 0 }));
    await w.importChecks(teamId, first, [{ at: T0 + 40 * SEC, latency: 7 }, ...spread(0, [5, 900, 40])]);
    // In the window's first and last part minutes (raw edges), the slowest successes (p95).
    await w.importChecks(teamId, inA, [{ at: T0 + 50 * SEC, latency: 2000 }, ...spread(1, [50, 60, 70]), { at: TO - 20 * SEC, latency: 2100, success: true }]);
    await w.importChecks(teamId, inC, spread(2, [20, 80]));
    // Into the primary project, and out of it; then checks in their new projects.
    await w.moveEndpoint(teamId, inA, b);
    await w.moveEndpoint(teamId, first, c);
    await w.importChecks(teamId, first, spread(3, [1, 1000]));
    await w.importChecks(teamId, inA, spread(4, [3, 66]));

    const checks: CheckRecordedData[] = [
      ...(await w.recordedChecks(team, c, first)),
      ...(await w.recordedChecks(team, b, inA)),
      ...(await w.recordedChecks(team, c, inC)),
    ];
    const current = new Map([
      [first, c],
      [inA, b],
      [inC, c],
    ]);
    const window = makeWindow(FROM, TO, 2);
    const routes = [
      '/api/public/v2/analytics',
      ...[a, b, c].map((project) => `/api/public/v2/projects/${project}/analytics`),
      ...[first, inA, inC].map((endpoint) => `/api/public/v2/endpoints/${endpoint}/analytics`),
    ];
    const answers = async () => Promise.all(routes.map((route) => get(token, route)));
    const lists = async () =>
      Promise.all([first, inA, inC].map(async (endpoint) => (await t.request('GET', `/api/public/v2/endpoints/${endpoint}/checks?limit=100`, { token })).body));

    const before = await answers();
    const teamReference = referenceAnalytics(checks, { kind: 'team', id: teamId }, window, [a, b, c], current);
    expect(before[0].totals).toEqual(teamReference.totals);
    expect(before[0].series).toEqual(teamReference.series);
    for (const row of before[0].projects) expect(figures(row)).toEqual(figures(teamReference.children.get(row.project_id)!));
    for (const [i, project] of [a, b, c].entries()) {
      const members = [...current].filter(([, p]) => p === project).map(([endpoint]) => endpoint);
      const reference = referenceAnalytics(checks, { kind: 'project', id: project }, window, members, current);
      expect({ totals: before[1 + i].totals, series: before[1 + i].series }).toEqual({ totals: reference.totals, series: reference.series });
    }
    const listsBefore = await lists();

    // Rebuilt from the log, the view holds the same raw rows and team documents (team ids as
    // they were: the primary project is the first endpoint's again) and answers the same.
    const stored = async (generation: number) =>
      Promise.all([RAW_CHECKS_COLLECTION, ROLLUP_MEMBERS_COLLECTION].map((collection) => t.platform.views.find(physicalCollection(ROLLUPS_PROJECTION, generation, collection), {})));
    const live = await new ProjectionRegistry(t.platform.views).pointer(ROLLUPS_PROJECTION);
    const rowsBefore = await stored(live!.generation);
    expect(rowsBefore[0].filter((row) => row.team_id === null).map((row) => row.project_id)).toEqual(expect.arrayContaining([b]));
    const { generation } = await t.platform.runner!.rebuild(ROLLUPS_PROJECTION);
    expect(await stored(generation)).toEqual(rowsBefore);
    expect(await answers()).toEqual(before);
    expect(await lists()).toEqual(listsBefore);
  });
});
