import { startedBeforeAll } from '../support/started-before-all.js';
import { ADMIN_TOKEN, ALL_SCOPES, startTestApp } from '../support/test-app.js';

describe('provisioning and HTTP conventions', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  it('creates a team with the admin token and seeds its incident statuses', async () => {
    const response = await t.admin('POST', '/api/v2/teams', { name: 'Acme' });
    expect(response.statusCode).toBe(201);
    const team = response.json().data;
    expect(team).toEqual({ id: expect.any(Number), name: 'Acme', created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const { token } = await t.issueToken(team.id, ['incidents:read'], 'viewer');
    const statuses = await t.request('GET', '/api/public/v2/incident-statuses', { token });
    if (statuses.statusCode !== 404) {
      expect(statuses.json().data.map((s: any) => [s.name, s.is_default])).toEqual([
        ['Investigating', true],
        ['Identified', false],
        ['Monitoring', false],
      ]);
    }
  });

  it('refuses provisioning without the admin token, with WWW-Authenticate', async () => {
    const missing = await t.request('POST', '/api/v2/teams', { body: { name: 'x' } });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="monitoring"');
    expect(missing.headers['content-type']).toContain('application/problem+json');
    const wrong = await t.request('POST', '/api/v2/teams', { token: 'nope', body: { name: 'x' } });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="monitoring", error="invalid_token"');
    expect(wrong.json()).toMatchObject({ type: 'about:blank', status: 401, code: 'unauthenticated', request_id: wrong.headers['x-request-id'] });
  });

  it('lists every violated rule, and unknown fields, in one 400', async () => {
    const team = await t.createTeam();
    const response = await t.admin('POST', `/api/v2/teams/${team.id}/tokens`, { name: '', scopes: ['monitoring:read', 'root'], role: 'owner', colour: 'red' });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body.code).toBe('validation_failed');
    const fields = body.errors.map((e: any) => `${e.field}:${e.code}`).sort();
    expect(fields).toEqual(['colour:unknown_field', 'name:too_short', 'role:invalid_value', 'scopes:invalid_value']);
  });

  it('shows the token once and stores only its hash', async () => {
    const team = await t.createTeam();
    const issued = await t.issueToken(team.id, ALL_SCOPES);
    expect(issued.token).toMatch(/^mon_pat_[A-Za-z0-9_-]{43}$/);
    const stored = await t.platform.events.readStream(`team-${team.id}`);
    expect(JSON.stringify(stored)).not.toContain(issued.token);
  });

  it('answers invalid JSON with 400 invalid_json and a non-JSON body with 415', async () => {
    const invalid = await t.request('POST', '/api/v2/teams', { token: ADMIN_TOKEN, body: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().code).toBe('invalid_json');
    const text = await t.request('POST', '/api/v2/teams', { token: ADMIN_TOKEN, body: 'name=x', headers: { 'content-type': 'text/plain' } });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('unsupported_media_type');
  });

  it('answers bodies over 1 MiB with 413', async () => {
    const response = await t.request('POST', '/api/v2/teams', { token: ADMIN_TOKEN, body: { name: 'x'.repeat(1024 * 1024 + 10) } });
    expect(response.statusCode).toBe(413);
    expect(response.json().code).toBe('payload_too_large');
  });

  it('echoes a well-formed X-Request-Id and replaces a malformed one', async () => {
    const echoed = await t.request('GET', '/health/live', { headers: { 'x-request-id': 'abc.DEF-1_2' } });
    expect(echoed.headers['x-request-id']).toBe('abc.DEF-1_2');
    const replaced = await t.request('GET', '/health/live', { headers: { 'x-request-id': 'bad id!' } });
    expect(replaced.headers['x-request-id']).not.toBe('bad id!');
    expect(String(replaced.headers['x-request-id'])).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
  });

  it('answers unknown routes 404 and known paths with a wrong method 405 with Allow', async () => {
    const unknown = await t.request('GET', '/api/public/v2/nothing-here');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('not_found');
    const wrongMethod = await t.request('PUT', '/api/v2/teams');
    expect(wrongMethod.statusCode).toBe(405);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD, POST');
    expect(wrongMethod.json().code).toBe('method_not_allowed');
  });

  it('reports readiness of every configured store and of the views this process applies', async () => {
    const response = await t.request('GET', '/health/ready');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', checks: { event_store: 'ok', read_store: 'ok', coordination_store: 'ok', probe_transport: 'ok', projections: 'ok' } });
  });

  it('stops accepting a revoked token at once', async () => {
    const team = await t.createTeam();
    const issued = await t.issueToken(team.id, ['monitoring:read']);
    const before = await t.request('GET', '/api/public/v2/projects', { token: issued.token });
    expect(before.statusCode).not.toBe(401);
    const revoke = await t.admin('DELETE', `/api/v2/teams/${team.id}/tokens/${issued.id}`);
    expect(revoke.statusCode).toBe(204);
    expect(revoke.body).toBe('');
    const after = await t.request('GET', '/api/public/v2/projects', { token: issued.token });
    expect(after.statusCode).toBe(401);
  });

  it('does not accept an expired token', async () => {
    const team = await t.createTeam();
    const expiresAt = Date.now() + 1500;
    const issued = await t.issueToken(team.id, ['monitoring:read'], 'viewer', { expires_at: new Date(expiresAt).toISOString() });
    // Until the expiry has passed on the clock, however long issuing took on a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt + 10 - Date.now())));
    const response = await t.request('GET', '/api/public/v2/projects', { token: issued.token });
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toContain('invalid_token');
  });
});
