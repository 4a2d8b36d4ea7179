import { startTestApp, type TestApp } from '../support/test-app.js';

describe('v1 analytics once a sunset date is set', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ V1_SUNSET_AT: '2027-03-01T00:00:00Z' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('adds the Sunset header (HTTP-date) to v1 responses, errors included, and never to v2', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['analytics:read'], 'viewer');
    const v1 = await t.request('GET', '/api/public/v1/analytics', { token });
    expect(v1.statusCode).toBe(200);
    expect(v1.headers.sunset).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(v1.headers.deprecation).toBe('true');
    const bad = await t.request('GET', '/api/public/v1/analytics?buckets=0', { token });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers.sunset).toBe('Mon, 01 Mar 2027 00:00:00 GMT');
    expect(bad.headers.deprecation).toBe('true');
    const v2 = await t.request('GET', '/api/public/v2/analytics', { token });
    expect(v2.headers.sunset).toBeUndefined();
  });
});
