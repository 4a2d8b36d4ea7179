import { startedBeforeAll } from '../support/started-before-all.js';
import { createEndpoint, createProject, importChecks, importedCheck } from '../support/monitoring-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const slosPath = (teamId: number, sloId?: number) => `/api/v2/teams/${teamId}/slos${sloId === undefined ? '' : `/${sloId}`}`;
const PUBLIC = '/api/public/v2/slos';

function errors(response: { json(): any }): string[] {
  return response
    .json()
    .errors.map((e: { field?: string; code: string }) => `${e.field ?? ""}:${e.code}`)
    .sort();
}

interface Team {
  teamId: number;
  token: string;
  projectId: number;
  endpoints: number[];
}

async function team(t: TestApp, name: string, endpoints: number): Promise<Team> {
  const created = await t.createTeam(name);
  const { token } = await t.issueToken(created.id, ['analytics:read'], 'viewer');
  const project = await createProject(t, created.id, 'Shop');
  const ids: number[] = [];
  for (let i = 0; i < endpoints; i++) ids.push((await createEndpoint(t, created.id, project.id, { name: `E${i}` })).id);
  return { teamId: created.id, token, projectId: project.id, endpoints: ids };
}

describe('SLOs: application API', () => {
  const world = startedBeforeAll(
    async () => {
      const t = await startTestApp();
      return { t, a: await team(t, 'Acme', 2), b: await team(t, 'Other', 1) };
    },
    (w) => w.t.close(),
  );
  let t: TestApp;
  let a: Team;
  let b: Team;
  beforeAll(() => ({ t, a, b } = world));

  test('create answers 201 with the SLO, its defaults and empty figures; GET one, PATCH and DELETE', async () => {
    const created = await t.admin('POST', slosPath(a.teamId), { name: 'Checkout', endpoint_ids: [a.endpoints[1], a.endpoints[0]], objective_percent: 99.95 });
    expect(created.statusCode).toBe(201);
    const slo = created.json().data;
    expect(slo).toEqual({
      id: expect.any(Number),
      team_id: a.teamId,
      name: 'Checkout',
      endpoint_ids: [a.endpoints[1], a.endpoints[0]],
      project_id: null,
      objective_percent: 99.95,
      window_days: 30,
      latency_threshold_ms: null,
      window: { from: expect.any(String), to: expect.any(String) },
      good: 0,
      total: 0,
      sli_percent: null,
      error_budget: { allowed_bad: null, bad: null, remaining_percent: null },
      burn_rates: { '5m': null, '30m': null, '1h': null, '6h': null, '24h': null, '72h': null },
      alerts: [],
      status: 'ok',
      created_at: expect.stringMatching(/Z$/),
      updated_at: slo.created_at,
    });
    expect(Date.parse(slo.window.to) - Date.parse(slo.window.from)).toBe(30 * 86_400_000);
    expect(created.headers.location).toBe(slosPath(a.teamId, slo.id));

    const patched = await t.admin('PATCH', slosPath(a.teamId, slo.id), { project_id: a.projectId, window_days: 7, latency_threshold_ms: 500 });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ endpoint_ids: null, project_id: a.projectId, window_days: 7, latency_threshold_ms: 500 });
    expect((await t.admin('GET', slosPath(a.teamId, slo.id))).json().data).toMatchObject({ project_id: a.projectId, window_days: 7 });
    const back = await t.admin('PATCH', slosPath(a.teamId, slo.id), { endpoint_ids: [a.endpoints[0]], latency_threshold_ms: null });
    expect(back.json().data).toMatchObject({ endpoint_ids: [a.endpoints[0]], project_id: null, latency_threshold_ms: null });

    expect((await t.admin('DELETE', slosPath(a.teamId, slo.id))).statusCode).toBe(204);
    expect((await t.admin('GET', slosPath(a.teamId, slo.id))).statusCode).toBe(404);
    expect((await t.admin('PATCH', slosPath(a.teamId, slo.id), { name: 'x' })).statusCode).toBe(404);
  });

  test('validation: every broken rule named by its field', async () => {
    const neither = await t.admin('POST', slosPath(a.teamId), { name: '', objective_percent: 100, window_days: 0, latency_threshold_ms: 0 });
    expect(neither.statusCode).toBe(400);
    expect(neither.json().code).toBe('validation_failed');
    expect(errors(neither)).toEqual(['endpoint_ids:required', 'latency_threshold_ms:out_of_range', 'name:too_short', 'objective_percent:out_of_range', 'window_days:out_of_range']);

    const both = await t.admin('POST', slosPath(a.teamId), { name: 'x', endpoint_ids: [a.endpoints[0]], project_id: a.projectId, objective_percent: 99 });
    expect(errors(both)).toEqual(['project_id:conflict']);

    const objectives: Array<[unknown, string | null]> = [
      [50, 'out_of_range'],
      [50.001, null],
      [99.999, null],
      [99.9999, 'out_of_range'],
      [100, 'out_of_range'],
      ['99', 'invalid_type'],
      [null, 'invalid_type'],
    ];
    for (const [objective, code] of objectives) {
      const response = await t.admin('POST', slosPath(a.teamId), { name: 'o', project_id: a.projectId, objective_percent: objective });
      if (code === null) expect(response.statusCode).toBe(201);
      else expect(errors(response)).toEqual([`objective_percent:${code}`]);
    }
    expect(errors(await t.admin('POST', slosPath(a.teamId), { name: 'o', project_id: a.projectId }))).toEqual(['objective_percent:required']);
    expect(errors(await t.admin('POST', slosPath(a.teamId), { name: 'x'.repeat(201), project_id: a.projectId, objective_percent: 99, window_days: 91 }))).toEqual([
      'name:too_long',
      'window_days:out_of_range',
    ]);
    expect(errors(await t.admin('POST', slosPath(a.teamId), { name: 'x', endpoint_ids: [], objective_percent: 99 }))).toEqual(['endpoint_ids:too_short']);
    expect(errors(await t.admin('POST', slosPath(a.teamId), { name: 'x', endpoint_ids: [a.endpoints[0], a.endpoints[0]], objective_percent: 99 }))).toEqual(['endpoint_ids[1]:not_unique']);
    const many = Array.from({ length: 501 }, (_, i) => i + 1);
    expect(errors(await t.admin('POST', slosPath(a.teamId), { name: 'x', endpoint_ids: many, objective_percent: 99 }))).toEqual(['endpoint_ids:too_many']);
    // Another team's endpoint or project is named as not found, as a missing one.
    const foreign = await t.admin('POST', slosPath(a.teamId), { name: 'x', endpoint_ids: [a.endpoints[0], b.endpoints[0]], objective_percent: 99 });
    expect(errors(foreign)).toEqual(['endpoint_ids[1]:not_found']);
    expect(errors(await t.admin('POST', slosPath(a.teamId), { name: 'x', project_id: b.projectId, objective_percent: 99 }))).toEqual(['project_id:not_found']);
    expect(errors(await t.admin('POST', slosPath(a.teamId), { name: 'x', project_id: a.projectId, objective_percent: 99, colour: 'red' }))).toEqual(['colour:unknown_field']);

    const slo = (await t.admin('POST', slosPath(a.teamId), { name: 'p', project_id: a.projectId, objective_percent: 99 })).json().data;
    expect(errors(await t.admin('PATCH', slosPath(a.teamId, slo.id), {}))).toEqual([':required']);
    expect(errors(await t.admin('PATCH', slosPath(a.teamId, slo.id), { endpoint_ids: [a.endpoints[0]], project_id: a.projectId }))).toEqual(['project_id:conflict']);
  });

  test('another team\'s SLO is 404 on every route, and lists page by id through cursors', async () => {
    const mine = (await t.admin('POST', slosPath(b.teamId), { name: 'b', project_id: b.projectId, objective_percent: 99 })).json().data;
    expect((await t.admin('GET', slosPath(a.teamId, mine.id))).statusCode).toBe(404);
    expect((await t.admin('PATCH', slosPath(a.teamId, mine.id), { name: 'z' })).statusCode).toBe(404);
    expect((await t.admin('DELETE', slosPath(a.teamId, mine.id))).statusCode).toBe(404);
    expect((await t.request('GET', `${PUBLIC}/${mine.id}`, { token: a.token })).statusCode).toBe(404);
    expect((await t.admin('GET', slosPath(999_999))).statusCode).toBe(404);

    for (let i = 0; i < 3; i++) await t.admin('POST', slosPath(a.teamId), { name: `l${i}`, project_id: a.projectId, objective_percent: 99 });
    for (const [list, get] of [
      ['admin', (cursor?: string) => t.admin('GET', `${slosPath(a.teamId)}?limit=2${cursor ? `&cursor=${cursor}` : ''}`)],
      ['public', (cursor?: string) => t.request('GET', PUBLIC, { token: a.token, query: { limit: '2', ...(cursor ? { cursor } : {}) } })],
    ] as const) {
      const ids: number[] = [];
      let cursor: string | undefined;
      do {
        const page = await get(cursor);
        expect(page.statusCode).toBe(200);
        const body = page.json();
        ids.push(...body.data.map((s: { id: number; team_id: number }) => (expect(s.team_id).toBe(a.teamId), s.id)));
        expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
        cursor = body.pagination.next_cursor ?? undefined;
      } while (cursor);
      expect(ids.length).toBeGreaterThanOrEqual(4);
      expect([...ids].sort((x, y) => x - y)).toEqual(ids);
      expect(list).toBeDefined();
    }
    expect((await t.request('GET', PUBLIC, { token: a.token, query: { limit: '0' } })).statusCode).toBe(400);
    expect((await t.request('GET', PUBLIC, { token: a.token, query: { cursor: 'nope' } })).json().code).toBe('invalid_cursor');
  });

  test('the public read needs analytics:read', async () => {
    const { token } = await t.issueToken(a.teamId, ['monitoring:read'], 'viewer');
    const response = await t.request('GET', PUBLIC, { token });
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('insufficient_scope');
  });

  test('figures count imported checks exactly: good, total, budget, burn rates, status', async () => {
    const c = await team(t, 'Figures', 2);
    const now = Date.now();
    const at = (msAgo: number) => new Date(now - msAgo).toISOString();
    // Endpoint 0: 1,000 checks over the last 10 days, 4 of them failed, 10 slower than 300 ms;
    // one failure 2 minutes ago. Endpoint 1: 5 checks, one failure 20 days ago (inside 30 days,
    // outside 7).
    const checks = Array.from({ length: 1000 }, (_, i) =>
      importedCheck(at(10 * 86_400_000 - i * 864_000 - 1), {
        ...(i % 250 === 7 ? { success: false, status_code: 500 } : {}),
        ...(i % 100 === 3 ? { latency_ms: 301 } : {}),
      }),
    );
    checks.push(importedCheck(at(120_000), { success: false, status_code: 503 }));
    await importChecks(t, c.teamId, c.endpoints[0], checks);
    await importChecks(t, c.teamId, c.endpoints[1], [importedCheck(at(20 * 86_400_000), { success: false, status_code: 500 }), ...[1, 2, 3, 4].map((d) => importedCheck(at(d * 86_400_000)))]);

    const project = (await t.admin('POST', slosPath(c.teamId), { name: 'All', project_id: c.projectId, objective_percent: 99 })).json().data;
    expect(project).toMatchObject({ total: 1006, good: 1000, sli_percent: 99.404, error_budget: { allowed_bad: 10.06, bad: 6, remaining_percent: 40.358 }, status: 'ok' });
    // 5m: the one failure of 2 minutes ago alone: burn rate (1/1) / 0.01 = 100.
    expect(project.burn_rates['5m']).toBe(100);
    expect(project.burn_rates['72h']).toBeGreaterThan(0);

    const latency = (await t.admin('POST', slosPath(c.teamId), { name: 'Fast', endpoint_ids: [c.endpoints[0]], objective_percent: 99.5, window_days: 7, latency_threshold_ms: 300 })).json().data;
    const read = (await t.request('GET', `${PUBLIC}/${latency.id}`, { token: c.token })).json().data;
    const inWindow = checks.filter((k) => Date.parse(k.checked_at) >= Date.parse(read.window.from));
    const good = inWindow.filter((k) => k.success && k.latency_ms <= 300).length;
    expect(latency.total).toBeGreaterThan(600);
    expect(read.total).toBe(inWindow.length);
    expect(read.good).toBe(good);
    expect(read.error_budget.bad).toBe(inWindow.length - good);
    // 99.5 %: the budget is exceeded (more than 0.5 % bad): breached, remaining negative.
    expect(read.error_budget.remaining_percent).toBeLessThan(0);
    expect(read.status).toBe('breached');
    // Imports never raise a burn-rate alert.
    expect(read.alerts).toEqual([]);
  });
});
