import { createEndpoint, createProject, importChecks, importedCheck, markVerified, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

describe('maintenance coverage and hidden values', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  const hourAgo = () => new Date(Date.now() - 3600_000).toISOString();
  const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();
  const schedule = async (teamId: number, scope: Record<string, number>) =>
    (await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { ...scope, starts_at: hourAgo(), ends_at: inAnHour() })).json().data;
  const read = async (token: string, path: string) => (await t.request('GET', `/api/public/v2/${path}`, { token })).json().data;

  it('an endpoint-only window covers the endpoint but not its project', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const window = await schedule(teamId, { endpoint_id: endpoint.id });
    expect(await read(token, `endpoints/${endpoint.id}`)).toMatchObject({ under_maintenance: true, maintenance_window_ids: [window.id] });
    expect(await read(token, `projects/${project.id}`)).toMatchObject({ under_maintenance: false, maintenance_window_ids: [] });
  });

  it('project and team-wide windows cover the project and its endpoints; cancelling ends it', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const other = await createProject(t, teamId, 'Other');
    const endpoint = await createEndpoint(t, teamId, project.id);
    const projectWindow = await schedule(teamId, { project_id: project.id });
    expect(await read(token, `projects/${other.id}`)).toMatchObject({ under_maintenance: false });
    const teamWindow = await schedule(teamId, {});
    expect(await read(token, `projects/${project.id}`)).toMatchObject({ under_maintenance: true, maintenance_window_ids: [projectWindow.id, teamWindow.id] });
    expect(await read(token, `endpoints/${endpoint.id}`)).toMatchObject({ maintenance_window_ids: [projectWindow.id, teamWindow.id] });
    expect(await read(token, `projects/${other.id}`)).toMatchObject({ under_maintenance: true, maintenance_window_ids: [teamWindow.id] });
    await t.admin('DELETE', `/api/v2/teams/${teamId}/maintenance-windows/${teamWindow.id}`);
    await t.admin('DELETE', `/api/v2/teams/${teamId}/maintenance-windows/${projectWindow.id}`);
    expect(await read(token, `endpoints/${endpoint.id}`)).toMatchObject({ under_maintenance: false, maintenance_window_ids: [] });
  });

  it('legacy maintenance_until covers the endpoint with no window ids until it passes', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const url = `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`;
    await t.admin('PATCH', url, { maintenance_until: inAnHour() });
    expect(await read(token, `endpoints/${endpoint.id}`)).toMatchObject({ under_maintenance: true, maintenance_window_ids: [] });
    await t.admin('PATCH', url, { maintenance_until: hourAgo() });
    expect(await read(token, `endpoints/${endpoint.id}`)).toMatchObject({ under_maintenance: false, maintenance_window_ids: [] });
  });

  it('imported checks inside a window are alert_suppressed, those outside are not', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { project_id: project.id, starts_at: '2030-01-01T01:00:00Z', ends_at: '2030-01-01T02:00:00Z' });
    await importChecks(t, teamId, endpoint.id, ['2030-01-01T00:59:59Z', '2030-01-01T01:00:00Z', '2030-01-01T01:59:59Z', '2030-01-01T02:00:00Z'].map((at) => importedCheck(at)));
    const checks = (await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks`, { token })).json().data;
    expect(checks.map((c: any) => [c.checked_at.slice(11, 19), c.alert_suppressed])).toEqual([
      ['02:00:00', false],
      ['01:59:59', true],
      ['01:00:00', true],
      ['00:59:59', false],
    ]);
  });

  it('never returns a hidden value from any admin or public route', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const secrets = ['SECRETQUERY7731', 'SECRETUSER4410', 'SECRETPASS9921', 'SECRETHEADER5512', 'SECRETPAYLOAD0081', 'SECRETBODY6634'];
    const responses: Array<{ headers: unknown; body: string }> = [];
    const created = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, {
      project_id: project.id,
      name: 'Secretive',
      url: `https://${secrets[1]}:${secrets[2]}@api.example.com/v1/health?token=${secrets[0]}`,
      headers: { Authorization: `Bearer ${secrets[3]}` },
      request_payload: secrets[4],
      body_match_mode: 'contains',
      expected_body: secrets[5],
    });
    responses.push(created);
    const endpoint = created.json().data;
    expect(endpoint).toMatchObject({ url: 'https://api.example.com/v1/health', url_query_configured: true, header_names: ['Authorization'], request_payload_configured: true, expected_body_configured: true });
    await markVerified(t, teamId, endpoint.id);
    responses.push(await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, { enabled: true, headers: { Authorization: `Bearer ${secrets[3]}`, 'X-Trace': secrets[3] } }));
    await importChecks(t, teamId, endpoint.id, [importedCheck('2030-01-01T00:00:00Z')]);
    for (const path of ['projects', `projects/${project.id}`, `projects/${project.id}/endpoints`, 'endpoints', `endpoints/${endpoint.id}`, `endpoints/${endpoint.id}/checks`]) {
      const response = await t.request('GET', `/api/public/v2/${path}`, { token });
      expect(response.statusCode).toBe(200);
      responses.push(response);
    }
    const check = JSON.parse(responses[responses.length - 1].body).data[0];
    responses.push(await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks/${check.id}`, { token }));
    const everything = responses.map((r) => JSON.stringify(r.headers) + r.body).join('\n');
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});
