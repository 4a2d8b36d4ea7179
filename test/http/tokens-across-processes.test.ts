import { startSecondApi, type SecondApi } from '../support/second-api.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';
import { TENANCY_VIEW, TOKENS } from '../../src/tenancy/views/tenancy/view.js';
import { eventually } from '../support/eventually.js';

const PROJECTS = '/api/public/v2/projects';

describe('developer tokens seen by two API processes sharing the store', () => {
  let first: TestApp;
  let second: SecondApi;
  beforeAll(async () => {
    first = await startTestApp();
    second = await startSecondApi(first);
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('stops accepting a token in both processes as soon as the other one acknowledged its revocation', async () => {
    const team = await first.createTeam();
    const issued = await first.issueToken(team.id, ['monitoring:read']);
    for (let i = 0; i < 3; i++) {
      expect((await first.request('GET', PROJECTS, { token: issued.token })).statusCode).toBe(200);
      expect((await second.request('GET', PROJECTS, { token: issued.token })).statusCode).toBe(200);
    }
    const revoke = await second.request('DELETE', `/api/v2/teams/${team.id}/tokens/${issued.id}`, { token: ADMIN_TOKEN });
    expect(revoke.statusCode).toBe(204);
    const afterFirst = await first.request('GET', PROJECTS, { token: issued.token });
    expect(afterFirst.statusCode).toBe(401);
    expect(afterFirst.headers['www-authenticate']).toContain('invalid_token');
    expect((await second.request('GET', PROJECTS, { token: issued.token })).statusCode).toBe(401);
  });

  it('keeps accepting the team’s other tokens after one is revoked', async () => {
    const team = await first.createTeam();
    const kept = await first.issueToken(team.id, ['monitoring:read']);
    const revoked = await first.issueToken(team.id, ['monitoring:read']);
    expect((await first.request('GET', PROJECTS, { token: kept.token })).statusCode).toBe(200);
    expect((await first.admin('DELETE', `/api/v2/teams/${team.id}/tokens/${revoked.id}`)).statusCode).toBe(204);
    expect((await second.request('GET', PROJECTS, { token: kept.token })).statusCode).toBe(200);
    expect((await first.request('GET', PROJECTS, { token: kept.token })).statusCode).toBe(200);
    expect((await first.request('GET', PROJECTS, { token: revoked.token })).statusCode).toBe(401);
  });

  it('accepts a token issued through the other process on its first request, after refusing an unknown one', async () => {
    const team = await first.createTeam();
    expect((await first.request('GET', PROJECTS, { token: 'mon_pat_not-issued-yet' })).statusCode).toBe(401);
    const issued = await second.request('POST', `/api/v2/teams/${team.id}/tokens`, {
      token: ADMIN_TOKEN,
      body: { name: 'late', scopes: ['monitoring:read'], role: 'viewer' },
    });
    expect(issued.statusCode).toBe(201);
    expect((await first.request('GET', PROJECTS, { token: issued.json().data.token })).statusCode).toBe(200);
  });

  it('records when a token was last used', async () => {
    const team = await first.createTeam();
    const issued = await first.issueToken(team.id, ['monitoring:read']);
    const lastUsed = async () => (await first.platform.reader.get(TENANCY_VIEW, TOKENS, issued.id))?.last_used_at ?? null;
    expect(await lastUsed()).toBeNull();
    const before = Date.now();
    expect((await second.request('GET', PROJECTS, { token: issued.token })).statusCode).toBe(200);
    const used = await eventually('the token to be marked used', lastUsed, { intervalMs: 20 });
    expect(Date.parse(String(used))).toBeGreaterThanOrEqual(before - 1);
  });
});
