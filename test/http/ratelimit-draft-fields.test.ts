import { startTestApp, type TestApp } from '../support/test-app.js';

const LIMIT = 3;

/** A service limit item of the draft's `RateLimit` field: `"<policy>";r=<int>;t=<int>`. */
function serviceLimit(value: unknown): { policy: string; r: number; t: number } {
  const match = /^"([^"\\]+)";r=(\d+);t=(\d+)$/.exec(String(value));
  if (!match) throw new Error(`not a RateLimit service limit item: ${String(value)}`);
  return { policy: match[1], r: Number(match[2]), t: Number(match[3]) };
}

describe('RateLimit-Policy and RateLimit fields (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  });
  afterAll(async () => {
    await t.close();
  });

  it('advertise the per-token policy and the quota left on every response, the 429 included, next to the older fields', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['monitoring:read'], 'viewer');
    const responses = [];
    for (let i = 0; i < LIMIT + 1; i++) responses.push(await t.request('GET', '/api/public/v2/projects', { token }));
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 429]);

    for (const response of responses) {
      expect(response.headers['ratelimit-policy']).toBe(`"per-token";q=${LIMIT};w=60`);
      const limit = serviceLimit(response.headers.ratelimit);
      expect(limit.policy).toBe('per-token');
      // The same numbers as the older fields, which stay for the clients that read them.
      expect(limit.r).toBe(Number(response.headers['ratelimit-remaining']));
      expect(limit.t).toBe(Number(response.headers['ratelimit-reset']));
      expect(response.headers['ratelimit-limit']).toBe(String(LIMIT));
      expect(limit.t).toBeGreaterThanOrEqual(1);
      expect(limit.t).toBeLessThanOrEqual(60);
    }
    expect(responses.map((r) => serviceLimit(r.headers.ratelimit).r)).toEqual([2, 1, 0, 0]);
    // Retry-After does not point before the end of the effective window.
    const refused = responses[LIMIT];
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(serviceLimit(refused.headers.ratelimit).t);
  });

  it('are absent where no token is rate limited (admin calls)', async () => {
    const response = await t.admin('GET', '/api/v2/teams');
    expect(response.headers['ratelimit-policy']).toBeUndefined();
    expect(response.headers.ratelimit).toBeUndefined();
  });
});
