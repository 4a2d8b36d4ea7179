import { createEndpoint, createProject, readerTeam } from '../support/monitoring-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/**
 * api-decisions.md, order of checks: authentication, scope/role, idempotency replay, path
 * resource (404), body and query validation. An unknown path resource is 404 whatever the body
 * or query says; a known one with the same body or query is 400.
 */
describe('order of checks: the path resource before the body and query', () => {
  let t: TestApp;
  let teamId: number;
  let token: string;
  let projectId: number;
  let endpointId: number;
  let foreignProjectId: number;
  let foreignEndpointId: number;
  const UNKNOWN = 999_999;

  beforeAll(async () => {
    t = await startTestApp();
    ({ teamId, token } = await readerTeam(t, 'Mine'));
    projectId = (await createProject(t, teamId)).id;
    endpointId = (await createEndpoint(t, teamId, projectId)).id;
    const other = await readerTeam(t, 'Theirs');
    foreignProjectId = (await createProject(t, other.teamId)).id;
    foreignEndpointId = (await createEndpoint(t, other.teamId, foreignProjectId)).id;
  });
  afterAll(async () => {
    await t.close();
  });

  const invalidBodies: Array<[string, string, unknown]> = [
    ['POST', 'projects', { name: '' }],
    ['POST', 'endpoints', { project_id: 'one', url: 'ftp://x' }],
    ['POST', 'maintenance-windows', { starts_at: 'soon' }],
    ['POST', 'tokens', { scopes: ['everything'] }],
  ];

  it.each(invalidBodies)('%s /teams/:unknown/%s with an invalid body is 404 for the team', async (method, path, body) => {
    const response = await t.admin(method, `/api/v2/teams/${UNKNOWN}/${path}`, body);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not_found', detail: 'The team does not exist.' });
  });

  it.each(invalidBodies)('%s /teams/:known/%s with the same body is 400', async (method, path, body) => {
    const response = await t.admin(method, `/api/v2/teams/${teamId}/${path}`, body);
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('validation_failed');
  });

  it('a team id that is not a number names nothing: 404 before the body', async () => {
    const response = await t.admin('POST', '/api/v2/teams/abc/projects', { name: '' });
    expect(response.statusCode).toBe(404);
  });

  it('PATCH an unknown project or endpoint with an invalid body is 404; a known one is 400', async () => {
    const project = await t.admin('PATCH', `/api/v2/teams/${teamId}/projects/${UNKNOWN}`, { name: '' });
    expect(project.statusCode).toBe(404);
    expect(project.json().detail).toBe('The project does not exist.');
    const endpoint = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${UNKNOWN}`, { interval_seconds: 0 });
    expect(endpoint.statusCode).toBe(404);
    expect(endpoint.json().detail).toBe('The endpoint does not exist.');
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/projects/${projectId}`, { name: '' })).statusCode).toBe(400);
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { interval_seconds: 0 })).statusCode).toBe(400);
  });

  it("PATCH another team's endpoint or project under my team with an invalid body is 404", async () => {
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${foreignEndpointId}`, { interval_seconds: 0 })).statusCode).toBe(404);
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/projects/${foreignProjectId}`, {})).statusCode).toBe(404);
  });

  it('PATCH under an unknown team is 404 for the team, even for an endpoint that exists elsewhere', async () => {
    const response = await t.admin('PATCH', `/api/v2/teams/${UNKNOWN}/endpoints/${endpointId}`, { interval_seconds: 0 });
    expect(response.statusCode).toBe(404);
    expect(response.json().detail).toBe('The team does not exist.');
  });

  it('importing checks into an unknown endpoint with an empty list is 404; into a known one 400', async () => {
    const unknown = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${UNKNOWN}/checks/import`, { checks: [] });
    expect(unknown.statusCode).toBe(404);
    const known = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`, { checks: [] });
    expect(known.statusCode).toBe(400);
  });

  it("public list routes: another team's project or endpoint with a bad query is 404; mine is 400", async () => {
    const call = (url: string) => t.request('GET', url, { token });
    const foreignProject = await call(`/api/public/v2/projects/${foreignProjectId}/endpoints?enabled=maybe&limit=0`);
    expect(foreignProject.statusCode).toBe(404);
    expect(foreignProject.json().detail).toBe('The project does not exist.');
    const foreignChecks = await call(`/api/public/v2/endpoints/${foreignEndpointId}/checks?from=yesterday`);
    expect(foreignChecks.statusCode).toBe(404);
    expect(foreignChecks.json().detail).toBe('The endpoint does not exist.');
    expect((await call(`/api/public/v2/projects/${projectId}/endpoints?enabled=maybe`)).statusCode).toBe(400);
    expect((await call(`/api/public/v2/endpoints/${endpointId}/checks?from=yesterday`)).statusCode).toBe(400);
  });

  it('authentication still comes first: an unknown team without the admin token is 401', async () => {
    const response = await t.request('POST', `/api/v2/teams/${UNKNOWN}/projects`, { body: { name: '' } });
    expect(response.statusCode).toBe(401);
  });
});
