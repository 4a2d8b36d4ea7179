import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

const V1 = '/api/public/v1/analytics';

/** The deprecation headers an answer carries, by name. */
function deprecationOf(response: { headers: Record<string, unknown> }) {
  return { deprecation: response.headers.deprecation, link: response.headers.link, sunset: response.headers.sunset };
}

describe('v1 analytics once a sunset date is set', () => {
  const t = startedBeforeAll(() => startTestApp({ V1_SUNSET_AT: '2027-03-01T00:00:00Z', RATE_LIMIT_PER_MINUTE: '3' }), (app) => app.close());

  const expected = { deprecation: 'true', link: '</api/public/v2/analytics>; rel="successor-version"', sunset: 'Mon, 01 Mar 2027 00:00:00 GMT' };

  it('adds the Sunset header (HTTP-date) to v1 responses, errors included, and never to v2', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['analytics:read'], 'viewer');
    const v1 = await t.request('GET', V1, { token });
    expect(v1.statusCode).toBe(200);
    expect(deprecationOf(v1)).toEqual(expected);
    const bad = await t.request('GET', `${V1}?buckets=0`, { token });
    expect(bad.statusCode).toBe(400);
    expect(deprecationOf(bad)).toEqual(expected);
    const v2 = await t.request('GET', '/api/public/v2/analytics', { token });
    expect(v2.headers.sunset).toBeUndefined();
    expect(v2.headers.deprecation).toBeUndefined();
  });

  // The spec: v1 "responses carry header Deprecation: true". These are answered by the auth
  // hook before the handler runs, and carried none of the three before.
  it('carries Deprecation, Link and Sunset on its 401, 403 and 429 as well', async () => {
    const team = await t.createTeam();
    const { token: noScope } = await t.issueToken(team.id, ['monitoring:read'], 'viewer');
    const { token } = await t.issueToken(team.id, ['analytics:read'], 'viewer');
    const unauthenticated = await t.request('GET', V1);
    const forbidden = await t.request('GET', V1, { token: noScope });
    for (let i = 0; i < 3; i++) expect((await t.request('GET', V1, { token })).statusCode).toBe(200);
    const limited = await t.request('GET', V1, { token });
    expect([unauthenticated.statusCode, forbidden.statusCode, limited.statusCode]).toEqual([401, 403, 429]);
    expect([deprecationOf(unauthenticated), deprecationOf(forbidden), deprecationOf(limited)]).toEqual([expected, expected, expected]);
  });
});
