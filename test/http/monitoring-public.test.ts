import { createEndpoint, createProject, importChecks, importedCheck, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

describe('public monitoring API', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  const get = (token: string, url: string, query?: Record<string, string>) => t.request('GET', url, { token, query });

  async function walk(token: string, url: string, query: Record<string, string> = {}): Promise<any[]> {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const response = await get(token, url, { ...query, ...(cursor ? { cursor } : {}) });
      expect(response.statusCode).toBe(200);
      seen.push(...response.json().data);
      cursor = response.json().pagination.next_cursor;
      expect(response.json().pagination.has_more).toBe(cursor !== null);
    } while (cursor);
    return seen;
  }

  it('needs monitoring:read: another scope gets 403 insufficient_scope with WWW-Authenticate', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['analytics:read'], 'viewer');
    const response = await get(token, '/api/public/v2/projects');
    expect(response.statusCode).toBe(403);
    expect(response.json().code).toBe('insufficient_scope');
    expect(response.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="monitoring:read"');
  });

  it('reads projects and endpoints of the token team only; others are 404', async () => {
    const mine = await readerTeam(t);
    const other = await readerTeam(t);
    const project = await createProject(t, mine.teamId);
    const endpoint = await createEndpoint(t, mine.teamId, project.id);
    const foreignProject = await createProject(t, other.teamId);
    const foreignEndpoint = await createEndpoint(t, other.teamId, foreignProject.id);
    expect((await get(mine.token, `/api/public/v2/projects/${project.id}`)).json().data).toMatchObject({ id: project.id, name: 'Web' });
    expect((await get(mine.token, `/api/public/v2/endpoints/${endpoint.id}`)).json().data).toMatchObject({ id: endpoint.id, project_id: project.id });
    expect((await get(mine.token, '/api/public/v2/projects')).json().data.map((p: any) => p.id)).toEqual([project.id]);
    expect((await get(mine.token, `/api/public/v2/projects/${foreignProject.id}`)).statusCode).toBe(404);
    expect((await get(mine.token, `/api/public/v2/endpoints/${foreignEndpoint.id}`)).statusCode).toBe(404);
    expect((await get(mine.token, `/api/public/v2/projects/${foreignProject.id}/endpoints`)).statusCode).toBe(404);
    expect((await get(mine.token, `/api/public/v2/endpoints/${foreignEndpoint.id}/checks`)).statusCode).toBe(404);
  });

  it('pages endpoints by id ascending without duplicates, stable under inserts, with filters', async () => {
    const { teamId, token } = await readerTeam(t);
    const a = await createProject(t, teamId, 'A');
    const b = await createProject(t, teamId, 'B');
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createEndpoint(t, teamId, i % 2 === 0 ? a.id : b.id)).id);
    const first = await get(token, '/api/public/v2/endpoints', { limit: '2' });
    expect(first.json().data.map((e: any) => e.id)).toEqual(ids.slice(0, 2));
    const added = await createEndpoint(t, teamId, a.id);
    const rest = await walk(token, '/api/public/v2/endpoints', { limit: '2', cursor: first.json().pagination.next_cursor });
    expect(rest.map((e) => e.id)).toEqual([...ids.slice(2), added.id]);
    const inA = await walk(token, '/api/public/v2/endpoints', { project_id: String(a.id), limit: '1' });
    expect(inA.map((e) => e.id)).toEqual([ids[0], ids[2], ids[4], added.id]);
    const viaProject = await walk(token, `/api/public/v2/projects/${b.id}/endpoints`, { enabled: 'false', limit: '1' });
    expect(viaProject.map((e) => e.id)).toEqual([ids[1], ids[3]]);
    expect((await get(token, '/api/public/v2/endpoints', { enabled: 'true' })).json().data).toEqual([]);
  });

  it('refuses a tampered cursor, a cursor used with other filters, and bad query values all together', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    await createEndpoint(t, teamId, project.id);
    await createEndpoint(t, teamId, project.id);
    const cursor = (await get(token, '/api/public/v2/endpoints', { limit: '1' })).json().pagination.next_cursor;
    const tampered = await get(token, '/api/public/v2/endpoints', { cursor: cursor.slice(0, -2) + 'xx' });
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json().code).toBe('invalid_cursor');
    const otherFilters = await get(token, '/api/public/v2/endpoints', { cursor, enabled: 'false' });
    expect(otherFilters.json().code).toBe('invalid_cursor');
    const bad = await get(token, '/api/public/v2/endpoints', { limit: '0', enabled: 'yes', project_id: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: any) => e.field).sort()).toEqual(['enabled', 'limit', 'project_id']);
  });

  it('lists checks newest first with source/success filters and from inclusive, to exclusive', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    await importChecks(t, teamId, endpoint.id, [
      importedCheck('2030-01-01T00:00:00Z'),
      importedCheck('2030-01-01T00:01:00Z', { success: false, status_code: 500, failure_reason: 'status: 500' }),
      importedCheck('2030-01-01T00:02:00Z', { source: 'manual' }),
      importedCheck('2030-01-01T00:03:00Z'),
    ]);
    const url = `/api/public/v2/endpoints/${endpoint.id}/checks`;
    const all = await walk(token, url, { limit: '3' });
    expect(all.map((c) => c.checked_at)).toEqual(['2030-01-01T00:03:00.000Z', '2030-01-01T00:02:00.000Z', '2030-01-01T00:01:00.000Z', '2030-01-01T00:00:00.000Z']);
    expect(all[0]).toMatchObject({ endpoint_id: endpoint.id, configuration_version: 1, source: 'scheduled', response_excerpt_omitted: false, latency_anomaly: false });
    const window = await walk(token, url, { from: '2030-01-01T00:01:00Z', to: '2030-01-01T00:03:00Z' });
    expect(window.map((c) => c.checked_at)).toEqual(['2030-01-01T00:02:00.000Z', '2030-01-01T00:01:00.000Z']);
    expect((await walk(token, url, { source: 'manual' })).length).toBe(1);
    expect((await walk(token, url, { success: 'false' })).map((c) => c.status_code)).toEqual([500]);
    const bad = await get(token, url, { from: 'yesterday', source: 'cron' });
    expect(bad.json().errors.map((e: any) => e.field).sort()).toEqual(['from', 'source']);
  });

  it('combines the source and success filters, and pages each combination newest first', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const failed = { success: false, status_code: 500, failure_reason: 'status: 500' };
    await importChecks(t, teamId, endpoint.id, [
      importedCheck('2030-01-01T00:00:00Z'),
      importedCheck('2030-01-01T00:01:00Z', failed),
      importedCheck('2030-01-01T00:02:00Z', { source: 'manual' }),
      importedCheck('2030-01-01T00:03:00Z', { source: 'manual', ...failed }),
      importedCheck('2030-01-01T00:04:00Z'),
      importedCheck('2030-01-01T00:05:00Z', { source: 'manual', ...failed }),
    ]);
    const url = `/api/public/v2/endpoints/${endpoint.id}/checks`;
    const minutes = async (query: Record<string, string>) => (await walk(token, url, { limit: '1', ...query })).map((c) => [c.checked_at.slice(14, 16), c.source, c.success]);
    expect(await minutes({ source: 'scheduled', success: 'true' })).toEqual([['04', 'scheduled', true], ['00', 'scheduled', true]]);
    expect(await minutes({ source: 'scheduled', success: 'false' })).toEqual([['01', 'scheduled', false]]);
    expect(await minutes({ source: 'manual', success: 'true' })).toEqual([['02', 'manual', true]]);
    expect(await minutes({ source: 'manual', success: 'false' })).toEqual([['05', 'manual', false], ['03', 'manual', false]]);
    expect((await minutes({ success: 'false' })).map(([minute]) => minute)).toEqual(['05', '03', '01']);
    expect((await minutes({ source: 'manual' })).map(([minute]) => minute)).toEqual(['05', '03', '02']);
    expect((await minutes({})).map(([minute]) => minute)).toEqual(['05', '04', '03', '02', '01', '00']);
  });

  it('returns a check only through its own endpoint and team', async () => {
    const { teamId, token } = await readerTeam(t);
    const other = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const sibling = await createEndpoint(t, teamId, project.id);
    await importChecks(t, teamId, endpoint.id, [importedCheck('2030-01-01T00:00:00Z')]);
    const check = (await get(token, `/api/public/v2/endpoints/${endpoint.id}/checks`)).json().data[0];
    expect((await get(token, `/api/public/v2/endpoints/${endpoint.id}/checks/${check.id}`)).json().data).toEqual(check);
    expect((await get(token, `/api/public/v2/endpoints/${sibling.id}/checks/${check.id}`)).statusCode).toBe(404);
    expect((await get(other.token, `/api/public/v2/endpoints/${endpoint.id}/checks/${check.id}`)).statusCode).toBe(404);
  });

  it('imports up to 10,000 checks and refuses 10,001', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const start = Date.parse('2030-01-01T00:00:00Z');
    const checks = (n: number) => Array.from({ length: n }, (_, i) => importedCheck(new Date(start + i * 1000).toISOString()));
    const tooMany = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}/checks/import`, { checks: checks(10_001) });
    expect(tooMany.statusCode).toBe(400);
    expect(await importChecks(t, teamId, endpoint.id, checks(1200))).toEqual({ imported: 1200 });
    expect((await walk(token, `/api/public/v2/endpoints/${endpoint.id}/checks`, { limit: '100' })).length).toBe(1200);
  });

  it('lists the public monitoring routes in the OpenAPI document', async () => {
    const response = await t.request('GET', '/api/public/v2/openapi.json');
    const paths = Object.keys(response.json().paths);
    expect(paths).toEqual(expect.arrayContaining([
      '/api/public/v2/projects',
      '/api/public/v2/projects/{projectID}',
      '/api/public/v2/projects/{projectID}/endpoints',
      '/api/public/v2/endpoints',
      '/api/public/v2/endpoints/{endpointID}',
      '/api/public/v2/endpoints/{endpointID}/checks',
      '/api/public/v2/endpoints/{endpointID}/checks/{checkID}',
    ]));
    expect(paths.some((p) => p.startsWith('/api/v2/'))).toBe(false);
  });
});
