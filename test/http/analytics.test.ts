import fc from 'fast-check';
import type { CheckRecordedData } from '../../src/checks/domain/check.js';
import { referenceAnalytics } from '../../src/analytics/domain/reference.js';
import { makeWindow } from '../../src/analytics/domain/window.js';
import { analyticsWorld, iso, type AnalyticsTeam, type CheckSpec } from '../support/analytics-fixtures.js';

const T0 = Date.parse('2025-06-01T00:00:00.000Z');
const MIN = 60_000;

describe('analytics API', () => {
  const { w, t } = analyticsWorld();

  interface Setup extends AnalyticsTeam {
    projectId: number;
    endpointId: number;
  }

  /** A fresh team with an editor token, one project "Main" and one enabled endpoint "API". */
  async function setup(): Promise<Setup> {
    const team = await w.team();
    const projectId = await w.project(team.teamId, 'Main');
    const endpointId = await w.endpoint(team.teamId, projectId, 'API');
    return { ...team, projectId, endpointId };
  }

  const importInto = (s: { teamId: number }, endpointId: number, checks: CheckSpec[]) => w.importChecks(s.teamId, endpointId, checks);
  /** An endpoint maintenance window: the imported checks inside it are alert_suppressed. */
  const suppress = (s: { teamId: number }, endpointId: number, startsAt: number, endsAt: number) =>
    w.maintenance(s.teamId, { endpoint_id: endpointId }, startsAt, endsAt);

  const range = (from: number, to: number, buckets?: number) =>
    `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}${buckets ? `&buckets=${buckets}` : ''}`;

  it('reports null figures (not zero) when the range has no applicable checks, and the endpoint as unchecked', async () => {
    const s = await setup();
    await suppress(s, s.endpointId, T0 + 1500, T0 + 2500);
    await importInto(s, s.endpointId, [{ at: T0 + 1000, source: 'manual' }, { at: T0 + 2000 }]);
    const response = await t.request('GET', `/api/public/v2/analytics?${range(T0, T0 + 60 * MIN, 2)}`, { token: s.token });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toEqual({
      team_id: s.teamId,
      window: { from: iso(T0), to: iso(T0 + 60 * MIN), bucket_seconds: 1800 },
      health: { enabled_endpoints: 1, healthy_endpoints: 0, failing_endpoints: 0, unchecked_endpoints: 1 },
      totals: { checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null, min_latency_ms: null, max_latency_ms: null, p95_latency_ms: null },
      incidents: { total: 0, open: 0 },
      series: [
        { bucket_start: iso(T0), checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null },
        { bucket_start: iso(T0 + 30 * MIN), checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null },
      ],
      projects: [
        { project_id: s.projectId, name: 'Main', enabled_endpoints: 1, checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null, open_incidents: 0 },
      ],
    });
  });

  it('reports an endpoint that was never checked as unknown (up null), not down, in endpoint and project analytics', async () => {
    const s = await setup();
    const endpoint = await t.request('GET', `/api/public/v2/endpoints/${s.endpointId}/analytics?${range(T0, T0 + 60 * MIN)}`, { token: s.token });
    expect(endpoint.statusCode).toBe(200);
    expect(endpoint.json().data.current).toEqual({ up: null, last_check_at: null, last_status_code: null, last_latency_ms: null, consecutive_failures: 0 });
    const project = await t.request('GET', `/api/public/v2/projects/${s.projectId}/analytics?${range(T0, T0 + 60 * MIN)}`, { token: s.token });
    expect(project.statusCode).toBe(200);
    expect(project.json().data.endpoints).toEqual([expect.objectContaining({ endpoint_id: s.endpointId, up: null, last_check_at: null })]);
  });

  it('counts only scheduled unsuppressed checks: counts, uptime, avg/min/max over all of them (failures included), p95 over successes', async () => {
    const s = await setup();
    // Covers the checks at 5 and 6 minutes, and only those.
    await suppress(s, s.endpointId, T0 + 4 * MIN + 30_000, T0 + 6 * MIN + 30_000);
    await importInto(s, s.endpointId, [
      { at: T0 + 1 * MIN, latency: 100 },
      { at: T0 + 2 * MIN, latency: 200 },
      { at: T0 + 3 * MIN, latency: 1000, success: false, status: 503 },
      { at: T0 + 4 * MIN, latency: 5, source: 'manual' },
      { at: T0 + 5 * MIN, latency: 9000, success: false },
      { at: T0 + 6 * MIN, latency: 1, success: true, source: 'manual' },
    ]);
    const q = range(T0, T0 + 10 * MIN, 1);
    const team = (await t.request('GET', `/api/public/v2/analytics?${q}`, { token: s.token })).json().data;
    // 3 applicable: 2 successes of 3 -> 66.667; (100 + 200 + 1000) / 3 = 433.33; p95 of [100, 200]: index ceil(1.9) - 1 = 1.
    const totals = { checks: 3, failures: 1, uptime_percent: 66.667, avg_latency_ms: 433.33, min_latency_ms: 100, max_latency_ms: 1000, p95_latency_ms: 200 };
    expect(team.totals).toEqual(totals);
    expect(team.series).toEqual([{ bucket_start: iso(T0), checks: 3, failures: 1, uptime_percent: 66.667, avg_latency_ms: 433.33 }]);
    expect(team.health).toEqual({ enabled_endpoints: 1, healthy_endpoints: 0, failing_endpoints: 1, unchecked_endpoints: 0 });

    const project = await t.request('GET', `/api/public/v2/projects/${s.projectId}/analytics?${q}`, { token: s.token });
    expect(project.statusCode).toBe(200);
    expect(project.json().data).toMatchObject({ team_id: s.teamId, project_id: s.projectId, totals });
    expect(project.json().data.endpoints).toEqual([
      { endpoint_id: s.endpointId, name: 'API', enabled: true, checks: 3, failures: 1, uptime_percent: 66.667, avg_latency_ms: 433.33, up: false, last_check_at: iso(T0 + 3 * MIN) },
    ]);

    const endpoint = await t.request('GET', `/api/public/v2/endpoints/${s.endpointId}/analytics?${q}`, { token: s.token });
    expect(endpoint.statusCode).toBe(200);
    expect(endpoint.json().data).toEqual({
      team_id: s.teamId,
      project_id: s.projectId,
      endpoint_id: s.endpointId,
      window: { from: iso(T0), to: iso(T0 + 10 * MIN), bucket_seconds: 600 },
      totals,
      incidents: { total: 0, open: 0 },
      series: team.series,
      // The manual and the suppressed checks after it are not the latest applicable check.
      current: { up: false, last_check_at: iso(T0 + 3 * MIN), last_status_code: 503, last_latency_ms: 1000, consecutive_failures: 1 },
    });
  });

  it('excludes checks suppressed by team-wide and project windows too, and only those the windows cover', async () => {
    const s = await setup();
    const other = await w.project(s.teamId, 'Other');
    const second = await w.endpoint(s.teamId, other, 'Second');
    await w.maintenance(s.teamId, {}, T0 + 10 * MIN, T0 + 20 * MIN);
    await w.maintenance(s.teamId, { project_id: other }, T0 + 30 * MIN, T0 + 40 * MIN);
    // starts_at is covered, ends_at is not.
    const times = [T0 + 10 * MIN - 1, T0 + 10 * MIN, T0 + 20 * MIN - 1, T0 + 20 * MIN, T0 + 30 * MIN, T0 + 40 * MIN];
    await importInto(s, s.endpointId, times.map((at, i) => ({ at, latency: 10 * (i + 1) })));
    await importInto(s, second, times.map((at, i) => ({ at, latency: 100 * (i + 1) })));
    const q = range(T0, T0 + 60 * MIN, 1);
    const team = (await t.request('GET', `/api/public/v2/analytics?${q}`, { token: s.token })).json().data;
    // The team window drops the 2nd and 3rd check of both endpoints, Other's project window its 5th:
    // Main keeps 10, 40, 50, 60 (160 / 4); Other keeps 100, 400, 600 (1100 / 3).
    expect(team.projects.map((p: any) => [p.name, p.checks, p.avg_latency_ms])).toEqual([
      ['Main', 4, 40],
      ['Other', 3, 366.67],
    ]);
    expect(team.totals).toEqual({ checks: 7, failures: 0, uptime_percent: 100, avg_latency_ms: 180, min_latency_ms: 10, max_latency_ms: 600, p95_latency_ms: 600 });
  });

  it('counts consecutive failures since the newest success, and compares projects and endpoints', async () => {
    const s = await setup();
    const other = await w.project(s.teamId, 'Other');
    const disabled = await w.endpoint(s.teamId, other, 'Off', false);
    const second = await w.endpoint(s.teamId, other, 'Second');
    await importInto(s, s.endpointId, [
      { at: T0 + 1 * MIN, success: false },
      { at: T0 + 2 * MIN, success: true, latency: 50 },
      { at: T0 + 3 * MIN, success: false, latency: 300, status: 0 },
      { at: T0 + 4 * MIN, success: false, latency: 301, status: 502 },
    ]);
    // Out of order: an older failure arriving last is still before the newest success.
    await importInto(s, s.endpointId, [{ at: T0 + 30_000, success: false }]);
    await importInto(s, second, [{ at: T0 + 5 * MIN, latency: 40 }]);
    await importInto(s, disabled, [{ at: T0 + 6 * MIN, latency: 60, success: false }]);

    const q = range(T0, T0 + 60 * MIN, 4);
    const endpoint = (await t.request('GET', `/api/public/v2/endpoints/${s.endpointId}/analytics?${q}`, { token: s.token })).json().data;
    expect(endpoint.current).toEqual({ up: false, last_check_at: iso(T0 + 4 * MIN), last_status_code: 502, last_latency_ms: 301, consecutive_failures: 2 });

    const team = (await t.request('GET', `/api/public/v2/analytics?${q}`, { token: s.token })).json().data;
    // The disabled endpoint's checks count in the figures but not in health.
    expect(team.health).toEqual({ enabled_endpoints: 2, healthy_endpoints: 1, failing_endpoints: 1, unchecked_endpoints: 0 });
    expect(team.totals).toMatchObject({ checks: 7, failures: 5 });
    expect(team.projects).toEqual([
      // Main: latencies 100 (failure), 50, 300 (failure), 301 (failure), 100 (late failure): 851 / 5 = 170.2.
      { project_id: s.projectId, name: 'Main', enabled_endpoints: 1, checks: 5, failures: 4, uptime_percent: 20, avg_latency_ms: 170.2, open_incidents: 0 },
      { project_id: other, name: 'Other', enabled_endpoints: 1, checks: 2, failures: 1, uptime_percent: 50, avg_latency_ms: 50, open_incidents: 0 },
    ]);
    const project = (await t.request('GET', `/api/public/v2/projects/${other}/analytics?${q}`, { token: s.token })).json().data;
    expect(project.health).toEqual({ enabled_endpoints: 1, healthy_endpoints: 1, failing_endpoints: 0, unchecked_endpoints: 0 });
    expect(project.endpoints).toEqual([
      { endpoint_id: disabled, name: 'Off', enabled: false, checks: 1, failures: 1, uptime_percent: 0, avg_latency_ms: 60, up: false, last_check_at: iso(T0 + 6 * MIN) },
      { endpoint_id: second, name: 'Second', enabled: true, checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 40, up: true, last_check_at: iso(T0 + 5 * MIN) },
    ]);
  });

  it('puts a check exactly at a bucket start in that bucket and leaves one exactly at `to` out', async () => {
    const s = await setup();
    const from = T0 + 500; // not on a minute boundary: edges come from raw checks
    const to = from + 4 * MIN;
    await importInto(s, s.endpointId, [
      { at: from - 1, latency: 1 }, // before from: out
      { at: from, latency: 10 }, // bucket 0
      { at: from + MIN - 1, latency: 20 }, // last millisecond of bucket 0
      { at: from + MIN, latency: 30, success: false }, // first millisecond of bucket 1
      { at: from + 3 * MIN + 59_999, latency: 40 }, // last millisecond of the range: bucket 3
      { at: to, latency: 50 }, // at `to`: out
    ]);
    const data = (await t.request('GET', `/api/public/v2/endpoints/${s.endpointId}/analytics?${range(from, to, 4)}`, { token: s.token })).json().data;
    expect(data.window).toEqual({ from: iso(from), to: iso(to), bucket_seconds: 60 });
    expect(data.series).toEqual([
      { bucket_start: iso(from), checks: 2, failures: 0, uptime_percent: 100, avg_latency_ms: 15 },
      { bucket_start: iso(from + MIN), checks: 1, failures: 1, uptime_percent: 0, avg_latency_ms: 30 },
      { bucket_start: iso(from + 2 * MIN), checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null },
      { bucket_start: iso(from + 3 * MIN), checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 40 },
    ]);
    expect(data.totals).toEqual({ checks: 4, failures: 1, uptime_percent: 75, avg_latency_ms: 25, min_latency_ms: 10, max_latency_ms: 40, p95_latency_ms: 40 });
  });

  it('cuts the last bucket at `to` when the range does not divide evenly', async () => {
    const s = await setup();
    // 10 minutes in 7 buckets: ceil(600 / 7) = 86 s; the last bucket [516 s, 602 s) is cut at 600 s.
    await importInto(s, s.endpointId, [{ at: T0 + 515_999 }, { at: T0 + 516_000 }, { at: T0 + 599_999 }, { at: T0 + 600_000 }]);
    const data = (await t.request('GET', `/api/public/v2/endpoints/${s.endpointId}/analytics?${range(T0, T0 + 10 * MIN, 7)}`, { token: s.token })).json().data;
    expect(data.window.bucket_seconds).toBe(86);
    expect(data.series.map((b: any) => [b.bucket_start, b.checks])).toEqual([
      [iso(T0), 0],
      [iso(T0 + 86_000), 0],
      [iso(T0 + 172_000), 0],
      [iso(T0 + 258_000), 0],
      [iso(T0 + 344_000), 0],
      [iso(T0 + 430_000), 1],
      [iso(T0 + 516_000), 2],
    ]);
    expect(data.totals.checks).toBe(3);
  });

  it('takes p95 from only the 10,000 most recent successful applicable checks', async () => {
    const s = await setup();
    const older = Array.from({ length: 600 }, (_, i) => ({ at: T0 + i * 250, latency: 5000 }));
    const newer = Array.from({ length: 10_000 }, (_, i) => ({ at: T0 + 600 * 250 + i * 250, latency: 100 }));
    // Newer failures and manual checks do not push successes out of the sample.
    const noise: CheckSpec[] = [
      { at: T0 + 3_000_000, latency: 7, success: false },
      { at: T0 + 3_000_001, latency: 1, source: 'manual' },
    ];
    // 10,602 checks: two import requests (10,000 is the route's limit).
    await importInto(s, s.endpointId, [...older, ...newer, ...noise]);
    const data = (await t.request('GET', `/api/public/v2/endpoints/${s.endpointId}/analytics?${range(T0, T0 + 24 * 60 * MIN, 1)}`, { token: s.token })).json().data;
    // All 10,601 applicable checks count for the other figures: (600 x 5000 + 10000 x 100 + 7) / 10601 = 377.3235...
    expect(data.totals).toEqual({ checks: 10_601, failures: 1, uptime_percent: 99.991, avg_latency_ms: 377.32, min_latency_ms: 7, max_latency_ms: 5000, p95_latency_ms: 100 });
    // Without the cap the 600 older 5000 ms checks would be in the sample and p95 would be 5000.
    const early = (await t.request('GET', `/api/public/v2/endpoints/${s.endpointId}/analytics?${range(T0, T0 + 1000 * 250, 1)}`, { token: s.token })).json().data;
    // 1000 checks: 600 x 5000, 400 x 100; p95 index ceil(950) - 1 = 949 -> 5000.
    expect(early.totals.p95_latency_ms).toBe(5000);
  }, 120_000);

  it('v1 returns the v2 team object without the data wrapper, with Deprecation and Link headers and no Sunset', async () => {
    const s = await setup();
    await importInto(s, s.endpointId, [{ at: T0 + MIN, latency: 70 }]);
    const q = range(T0, T0 + 60 * MIN, 3);
    const v2 = await t.request('GET', `/api/public/v2/analytics?${q}`, { token: s.token });
    const v1 = await t.request('GET', `/api/public/v1/analytics?${q}`, { token: s.token });
    expect(v1.statusCode).toBe(200);
    expect(v1.json()).toEqual(v2.json().data);
    expect(v1.json().totals.checks).toBe(1);
    expect(v1.headers.deprecation).toBe('true');
    expect(v1.headers.link).toBe('</api/public/v2/analytics>; rel="successor-version"');
    expect(v1.headers.sunset).toBeUndefined();
    expect(v2.headers.deprecation).toBeUndefined();
    expect(v2.headers.link).toBeUndefined();
  });

  it('uses the 24h window and 48 buckets by default, and each named window ends now', async () => {
    const s = await setup();
    const before = Date.now();
    const data = (await t.request('GET', '/api/public/v2/analytics', { token: s.token })).json().data;
    const after = Date.now();
    const to = Date.parse(data.window.to);
    expect(to).toBeGreaterThanOrEqual(before);
    expect(to).toBeLessThanOrEqual(after);
    expect(Date.parse(data.window.from)).toBe(to - 24 * 60 * MIN);
    expect(data.window.bucket_seconds).toBe(1800);
    expect(data.series).toHaveLength(48);
    const week = (await t.request('GET', '/api/public/v2/analytics?window=7d&buckets=7', { token: s.token })).json().data;
    expect(Date.parse(week.window.to) - Date.parse(week.window.from)).toBe(7 * 24 * 60 * MIN);
    expect(week.window.bucket_seconds).toBe(86_400);
    expect(week.series).toHaveLength(7);
  });

  it('refuses every bad query combination with one 400 listing every problem', async () => {
    const s = await setup();
    const bad = await t.request('GET', '/api/public/v2/analytics?window=2d&from=yesterday&buckets=0', { token: s.token });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('validation_failed');
    expect(bad.json().errors.map((e: any) => [e.field, e.code]).sort()).toEqual(
      [
        ['buckets', 'out_of_range'],
        ['from', 'invalid_value'],
        ['to', 'required'],
        ['window', 'invalid_value'],
      ].sort(),
    );
    const cases: Array<[string, Array<[string, string]>]> = [
      [`to=${encodeURIComponent(iso(T0))}`, [['from', 'required']]],
      [`${range(T0 + MIN, T0)}`, [['from', 'conflict']]],
      [`${range(T0, T0 + 91 * 24 * 60 * MIN)}`, [['to', 'out_of_range']]],
      ['buckets=201', [['buckets', 'out_of_range']]],
      ['buckets=1.5', [['buckets', 'invalid_type']]],
      ['window=24h&window=7d', [['window', 'invalid_value']]],
    ];
    for (const [query, errors] of cases) {
      for (const path of ['/api/public/v2/analytics', '/api/public/v1/analytics', `/api/public/v2/projects/${s.projectId}/analytics`, `/api/public/v2/endpoints/${s.endpointId}/analytics`]) {
        const response = await t.request('GET', `${path}?${query}`, { token: s.token });
        expect([path, query, response.statusCode]).toEqual([path, query, 400]);
        expect(response.json().errors.map((e: any) => [e.field, e.code])).toEqual(errors);
      }
    }
  });

  it('needs analytics:read (403) and a token (401)', async () => {
    const s = await setup();
    const { token } = await t.issueToken(s.teamId, ['monitoring:read', 'incidents:read', 'incidents:write'], 'editor');
    for (const path of ['/api/public/v2/analytics', '/api/public/v1/analytics', `/api/public/v2/projects/${s.projectId}/analytics`, `/api/public/v2/endpoints/${s.endpointId}/analytics`]) {
      const forbidden = await t.request('GET', path, { token });
      expect([path, forbidden.statusCode, forbidden.json().code]).toEqual([path, 403, 'insufficient_scope']);
      expect((await t.request('GET', path)).statusCode).toBe(401);
    }
  });

  it("answers 404 for another team's project or endpoint, an unknown id and a malformed id", async () => {
    const mine = await setup();
    const theirs = await setup();
    for (const path of [
      `/api/public/v2/projects/${theirs.projectId}/analytics`,
      `/api/public/v2/endpoints/${theirs.endpointId}/analytics`,
      '/api/public/v2/projects/999999/analytics',
      '/api/public/v2/endpoints/999999/analytics',
      '/api/public/v2/projects/abc/analytics',
      '/api/public/v2/endpoints/0/analytics',
    ]) {
      const response = await t.request('GET', path, { token: mine.token });
      expect([path, response.statusCode, response.json().code]).toEqual([path, 404, 'not_found']);
    }
    // And another team's checks never reach this team's figures.
    await importInto(theirs, theirs.endpointId, [{ at: T0 + MIN }]);
    const data = (await t.request('GET', `/api/public/v2/analytics?${range(T0, T0 + 60 * MIN, 1)}`, { token: mine.token })).json().data;
    expect(data.totals.checks).toBe(0);
  });

  it('lists the four analytics routes in the OpenAPI document', async () => {
    const doc = (await t.request('GET', '/api/public/v2/openapi.json')).json();
    for (const path of ['/api/public/v2/analytics', '/api/public/v1/analytics', '/api/public/v2/projects/{projectID}/analytics', '/api/public/v2/endpoints/{endpointID}/analytics']) {
      expect(doc.paths[path]?.get).toBeDefined();
      expect(doc.paths[path].get.parameters.map((p: any) => p.name)).toEqual(expect.arrayContaining(['window', 'from', 'to', 'buckets']));
    }
    expect(doc.paths['/api/public/v1/analytics'].get.deprecated).toBe(true);
  });

  it('property: through HTTP, every figure equals the brute-force reference for random checks, windows, ranges and bucket counts', async () => {
    const s = await setup();
    const second = await w.endpoint(s.teamId, s.projectId, 'Second');
    const otherProject = await w.project(s.teamId, 'Other');
    const third = await w.endpoint(s.teamId, otherProject, 'Third');
    const endpoints = [s.endpointId, second, third];
    const projectOf = new Map([
      [s.endpointId, s.projectId],
      [second, s.projectId],
      [third, otherProject],
    ]);
    const SPAN = 3 * 24 * 60 * MIN;
    // Clustered near hour/minute edges as well as spread out.
    const instant = fc.oneof(fc.integer({ min: 0, max: SPAN }), fc.integer({ min: 0, max: 72 }).map((h) => h * 60 * MIN), fc.integer({ min: 0, max: 4320 }).map((m) => m * MIN - 1));
    const checkArb = fc.record({
      endpoint: fc.integer({ min: 0, max: 2 }),
      at: instant,
      success: fc.boolean(),
      latency: fc.integer({ min: 0, max: 3000 }),
      source: fc.constantFrom<'scheduled' | 'manual'>('scheduled', 'scheduled', 'scheduled', 'manual'),
    });
    // Maintenance windows of every scope: team-wide, a project, an endpoint.
    const windowArb = fc.record({
      scope: fc.constantFrom<Record<string, number>>({}, { project_id: s.projectId }, { project_id: otherProject }, { endpoint_id: s.endpointId }, { endpoint_id: second }, { endpoint_id: third }),
      start: instant,
      length: fc.integer({ min: 1, max: 3 * 60 * MIN }),
    });
    const [checks, windows] = fc.sample(fc.tuple(fc.array(checkArb, { minLength: 300, maxLength: 300 }), fc.array(windowArb, { minLength: 4, maxLength: 4 })), { numRuns: 1, seed: 42 })[0];
    for (const window of windows) await w.maintenance(s.teamId, window.scope, T0 + window.start, T0 + window.start + window.length);
    for (let i = 0; i < endpoints.length; i++) {
      await importInto(s, endpoints[i], checks.filter((c) => c.endpoint === i).map((c) => ({ ...c, at: T0 + c.at })));
    }
    // The reference reads the checks back as a client sees them (ids, alert_suppressed).
    const all: CheckRecordedData[] = [];
    for (const endpointId of endpoints) all.push(...(await w.recordedChecks(s, projectOf.get(endpointId)!, endpointId)));
    expect(all).toHaveLength(300);
    // The sample exercises every exclusion and failures.
    expect(all.filter((c) => c.alert_suppressed && c.source === 'scheduled').length).toBeGreaterThan(5);
    expect(all.filter((c) => c.source === 'manual').length).toBeGreaterThan(30);
    expect(all.filter((c) => !c.success && c.source === 'scheduled' && !c.alert_suppressed).length).toBeGreaterThan(30);

    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: SPAN }),
        fc.integer({ min: 1, max: SPAN }),
        fc.integer({ min: 1, max: 200 }),
        fc.constantFrom('team', 'project', 'endpoint'),
        async (start, length, buckets, kind) => {
          const from = T0 - 60 * MIN + start;
          const to = from + length;
          const q = range(from, to, buckets);
          const window = makeWindow(from, to, buckets);
          if (kind === 'team') {
            const data = (await t.request('GET', `/api/public/v2/analytics?${q}`, { token: s.token })).json().data;
            const ref = referenceAnalytics(all, { kind: 'team', id: s.teamId }, window, [s.projectId, otherProject]);
            expect(data.totals).toEqual(ref.totals);
            expect(data.series).toEqual(ref.series);
            expect(data.projects).toHaveLength(2);
            for (const row of data.projects) {
              const child = ref.children.get(row.project_id)!;
              expect([row.checks, row.failures, row.uptime_percent, row.avg_latency_ms]).toEqual([child.checks, child.failures, child.uptime_percent, child.avg_latency_ms]);
            }
          } else if (kind === 'project') {
            const data = (await t.request('GET', `/api/public/v2/projects/${s.projectId}/analytics?${q}`, { token: s.token })).json().data;
            const ref = referenceAnalytics(all, { kind: 'project', id: s.projectId }, window, [s.endpointId, second]);
            expect(data.totals).toEqual(ref.totals);
            expect(data.series).toEqual(ref.series);
            expect(data.endpoints).toHaveLength(2);
            for (const row of data.endpoints) {
              const child = ref.children.get(row.endpoint_id)!;
              expect([row.checks, row.failures, row.uptime_percent, row.avg_latency_ms]).toEqual([child.checks, child.failures, child.uptime_percent, child.avg_latency_ms]);
            }
          } else {
            const data = (await t.request('GET', `/api/public/v2/endpoints/${third}/analytics?${q}`, { token: s.token })).json().data;
            const ref = referenceAnalytics(all, { kind: 'endpoint', id: third }, window);
            expect(data.totals).toEqual(ref.totals);
            expect(data.series).toEqual(ref.series);
          }
        },
      ),
      { numRuns: 40, seed: 7 },
    );
  }, 120_000);
});
