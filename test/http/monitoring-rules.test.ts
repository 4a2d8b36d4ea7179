import { createEndpoint, createProject, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

/** The monitoring deciders' refusals as a client sees them: order of checks, codes and messages. */
describe('monitoring rules at the edge', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  const errorsOf = (response: { json(): any }) => response.json().errors.map((e: any) => ({ field: e.field, code: e.code, message: e.message }));

  it('answers an unknown team with 404 before looking at a window’s rules', async () => {
    const response = await t.admin('POST', '/api/v2/teams/987654/maintenance-windows', { starts_at: '2030-01-02T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found', detail: 'The team does not exist.' });
  });

  it('lists every broken rule of a window in one 400, in a fixed order', async () => {
    const { teamId } = await readerTeam(t);
    const other = await readerTeam(t);
    const foreignProject = await createProject(t, other.teamId);
    const foreignEndpoint = await createEndpoint(t, other.teamId, foreignProject.id);
    const response = await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, {
      project_id: foreignProject.id,
      endpoint_id: foreignEndpoint.id,
      starts_at: '2030-01-02T00:00:00Z',
      ends_at: '2030-01-02T00:00:00Z',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'validation_failed', detail: 'project_id: does not name a project of this team (and 2 more)' });
    expect(errorsOf(response)).toEqual([
      { field: 'project_id', code: 'not_found', message: 'does not name a project of this team' },
      { field: 'endpoint_id', code: 'not_found', message: 'does not name an endpoint of this team' },
      { field: 'ends_at', code: 'out_of_range', message: 'must be after starts_at' },
    ]);
  });

  it('refuses a window for an endpoint outside the project it names', async () => {
    const { teamId } = await readerTeam(t);
    const web = await createProject(t, teamId, 'Web');
    const api = await createProject(t, teamId, 'API');
    const endpoint = await createEndpoint(t, teamId, api.id);
    const response = await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, {
      project_id: web.id,
      endpoint_id: endpoint.id,
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2030-01-02T00:00:00Z',
    });
    expect(response.statusCode).toBe(400);
    expect(errorsOf(response)).toEqual([{ field: 'endpoint_id', code: 'invalid_value', message: 'does not belong to project_id' }]);
  });

  it('answers a window cancelled twice with 404', async () => {
    const { teamId } = await readerTeam(t);
    const window = (await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-01-02T00:00:00Z' })).json().data;
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/maintenance-windows/${window.id}`)).statusCode).toBe(204);
    const again = await t.admin('DELETE', `/api/v2/teams/${teamId}/maintenance-windows/${window.id}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().detail).toBe('The maintenance window does not exist.');
  });

  it('checks an endpoint change in order: 404 for another team’s endpoint, then the rules (400), then verification (409)', async () => {
    const { teamId, token } = await readerTeam(t);
    const other = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const broken = { interval_seconds: 10, timeout_seconds: 20, enabled: true };

    const foreign = await t.admin('PATCH', `/api/v2/teams/${other.teamId}/endpoints/${endpoint.id}`, broken);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().detail).toBe('The endpoint does not exist.');

    const invalid = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, { ...broken, project_id: 987654 });
    expect(invalid.statusCode).toBe(400);
    expect(errorsOf(invalid)).toEqual([
      { field: 'timeout_seconds', code: 'out_of_range', message: 'must not exceed interval_seconds' },
      { field: 'project_id', code: 'not_found', message: 'does not name a project of this team' },
    ]);

    const unverified = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, { enabled: true });
    expect(unverified.statusCode).toBe(409);
    expect(unverified.json()).toMatchObject({ code: 'destination_not_verified', detail: 'Verify the destination (verify-destination) before enabling the endpoint.' });
    // Nothing of a refused change was applied.
    const read = (await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}`, { token })).json().data;
    expect(read).toMatchObject({ interval_seconds: 60, timeout_seconds: 10, enabled: false, configuration_version: 1 });
  });

  it('deletes a project only when it is the team’s and empty: 404 first, then 409 project_not_empty', async () => {
    const { teamId } = await readerTeam(t);
    const other = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    expect((await t.admin('DELETE', `/api/v2/teams/${other.teamId}/projects/${project.id}`)).statusCode).toBe(404);
    const busy = await t.admin('DELETE', `/api/v2/teams/${teamId}/projects/${project.id}`);
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toMatchObject({ code: 'project_not_empty', detail: 'The project still has endpoints: delete them or move them to another project first.' });
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`)).statusCode).toBe(204);
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`)).statusCode).toBe(404);
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/projects/${project.id}`)).statusCode).toBe(204);
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/projects/${project.id}`, { name: 'Back' })).statusCode).toBe(404);
  });

  it('spends no id on a refused registration, project or window', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const first = await createEndpoint(t, teamId, project.id);
    const refused = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: project.id, name: 'x', url: 'https://example.com', interval_seconds: 5, timeout_seconds: 6 });
    expect(refused.statusCode).toBe(400);
    expect((await createEndpoint(t, teamId, project.id)).id).toBe(first.id + 1);

    expect((await t.admin('POST', '/api/v2/teams/987654/projects', { name: 'Nobody' })).statusCode).toBe(404);
    expect((await createProject(t, teamId)).id).toBe(project.id + 1);

    const window = { starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-01-02T00:00:00Z' };
    const before = (await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, window)).json().data;
    expect((await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { ...window, ends_at: window.starts_at })).statusCode).toBe(400);
    expect((await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, window)).json().data.id).toBe(before.id + 1);
  });
});
