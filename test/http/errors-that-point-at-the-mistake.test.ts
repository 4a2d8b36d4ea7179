/**
 * What a newcomer reads when something is wrong: a 401 says which credential is wrong (admin
 * token on the Developer API, team token on the application API, a header without `Bearer `),
 * a 400 reports a value's wrong type first and nothing that cannot apply to it, an unknown field
 * close to a known one suggests it, and `/` names the service and where to go next.
 */
import { ADMIN_TOKEN, ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';

describe('errors that point at the mistake', () => {
  let t: TestApp;
  let teamId: number;
  let token: string;
  beforeAll(async () => {
    t = await startTestApp();
    teamId = (await t.createTeam('Newcomer')).id;
    token = (await t.issueToken(teamId, ALL_SCOPES, 'editor')).token;
  });
  afterAll(async () => {
    await t?.close();
  });

  const unauthenticated = (response: { statusCode: number; headers: Record<string, unknown>; json(): any }) => {
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="monitoring", error="invalid_token"');
    const body = response.json();
    expect(body).toMatchObject({ type: 'about:blank', title: 'Unauthenticated', status: 401, code: 'unauthenticated', request_id: response.headers['x-request-id'] });
    return body.detail as string;
  };

  it('the admin token on the Developer API says it is the admin token and what the Developer API takes', async () => {
    const detail = unauthenticated(await t.request('GET', '/api/public/v2/projects', { token: ADMIN_TOKEN }));
    expect(detail).toBe(
      "This is the application API's admin token; the Developer API (/api/public/...) takes team tokens (mon_pat_...), issued with POST /api/v2/teams/{teamID}/tokens.",
    );
    expect(detail).not.toContain(ADMIN_TOKEN);
  });

  it('a team token on the application API says it is a team token and what the application API takes', async () => {
    const detail = unauthenticated(await t.request('GET', '/api/v2/teams', { token }));
    expect(detail).toBe('This is a team token for the Developer API (/api/public/...); the application API (/api/v2/...) takes the admin token (ADMIN_TOKEN or data/admin-token).');
    expect(detail).not.toContain(token);
  });

  it('a header without `Bearer ` says how to write it', async () => {
    for (const header of [token, `Token ${token}`, 'Bearer']) {
      const detail = unauthenticated(await t.request('GET', '/api/public/v2/projects', { headers: { authorization: header } }));
      expect(detail).toBe('The Authorization header must be `Bearer <token>`: the word Bearer, a space, then the token.');
    }
  });

  it('a revoked token says so; an unknown one keeps the general sentence', async () => {
    const issued = await t.issueToken(teamId, ['monitoring:read'], 'viewer');
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/tokens/${issued.id}`)).statusCode).toBe(204);
    expect(unauthenticated(await t.request('GET', '/api/public/v2/projects', { token: issued.token }))).toBe('The access token has been revoked. Issue a new one.');
    expect(unauthenticated(await t.request('GET', '/api/public/v2/projects', { token: 'mon_pat_unknown' }))).toBe('The access token is invalid, expired or revoked.');
    expect(unauthenticated(await t.request('GET', '/api/v2/teams', { token: 'adm_unknown' }))).toBe('The access token is invalid, expired or revoked.');
  });

  it('a value of the wrong type reports invalid_type first and no rule that cannot apply to it', async () => {
    const response = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: '1', title: 'Down' } });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body.errors).toEqual([{ field: 'project_id', code: 'invalid_type', message: expect.any(String) }]);
    expect(body.detail).toBe(`project_id: ${body.errors[0].message}`);
    expect(body.detail).not.toMatch(/less than|more\)/);
  });

  it('an unknown field close to a known one suggests it', async () => {
    const project = (await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'P' })).json().data;
    const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, {
      project_id: project.id,
      name: 'API',
      url: 'https://example.com/health',
      interval_second: 60,
      colour: 'blue',
    });
    expect(response.statusCode).toBe(400);
    const errors = response.json().errors;
    expect(errors).toContainEqual({ field: 'interval_second', code: 'unknown_field', message: 'is not a known field; did you mean `interval_seconds`?' });
    expect(errors).toContainEqual({ field: 'colour', code: 'unknown_field', message: 'is not a known field' });
  });

  it('GET / names the service, the docs and readiness: a page for browsers, JSON for API clients', async () => {
    const json = await t.request('GET', '/');
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toContain('application/json');
    expect(json.json()).toMatchObject({ service: 'monitoring', docs: '/docs', admin_docs: '/docs/admin', health: { ready: '/health/ready', live: '/health/live' } });

    const page = await t.request('GET', '/', { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    for (const link of ['/docs', '/docs/admin', '/health/ready']) expect(page.body).toContain(`href="${link}"`);
    // Each link it names answers.
    for (const link of ['/docs', '/docs/admin', '/health/ready', '/health/live']) expect((await t.request('GET', link)).statusCode).toBeLessThan(400);
  });
});
