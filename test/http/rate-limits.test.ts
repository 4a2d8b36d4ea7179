import { startSecondApi, type SecondApi } from '../support/second-api.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const LIMIT = 6;
const PROJECTS = '/api/public/v2/projects';

/** Fixed one-minute windows: start a burst early enough in a minute that it cannot straddle two. */
async function awayFromMinuteEdge(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_100 - intoMinute));
}

describe('rate limits per token, shared by API processes', () => {
  let first: TestApp;
  let second: SecondApi;
  beforeAll(async () => {
    first = await startTestApp({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
    second = await startSecondApi(first, { RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('admits the limit in total across two processes, with RateLimit headers on every response, then 429 with Retry-After', async () => {
    const team = await first.createTeam();
    const { token } = await first.issueToken(team.id, ['monitoring:read'], 'viewer');
    await awayFromMinuteEdge();
    const responses = [];
    for (let i = 0; i < LIMIT + 3; i++) responses.push(await (i % 2 ? second : first).request('GET', PROJECTS, { token }));
    expect(responses.map((r) => r.statusCode)).toEqual([...Array(LIMIT).fill(200), 429, 429, 429]);
    expect(responses.map((r) => Number(r.headers['ratelimit-remaining']))).toEqual([5, 4, 3, 2, 1, 0, 0, 0, 0]);
    for (const response of responses) {
      expect(response.headers['ratelimit-limit']).toBe(String(LIMIT));
      expect(Number(response.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(1);
      expect(Number(response.headers['ratelimit-reset'])).toBeLessThanOrEqual(60);
    }
    const refused = responses[LIMIT];
    expect(refused.headers['content-type']).toContain('application/problem+json');
    expect(refused.json()).toMatchObject({ status: 429, code: 'rate_limited', request_id: refused.headers['x-request-id'] });
    expect(refused.headers['retry-after']).toBe(refused.headers['ratelimit-reset']);
  });

  it('counts each token on its own', async () => {
    const team = await first.createTeam();
    const spent = await first.issueToken(team.id, ['monitoring:read'], 'viewer');
    const fresh = await first.issueToken(team.id, ['monitoring:read'], 'viewer');
    await awayFromMinuteEdge();
    for (let i = 0; i < LIMIT; i++) await second.request('GET', PROJECTS, { token: spent.token });
    expect((await first.request('GET', PROJECTS, { token: spent.token })).statusCode).toBe(429);
    const other = await first.request('GET', PROJECTS, { token: fresh.token });
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe(String(LIMIT - 1));
  });
});

describe('rate limits under load', () => {
  const BUSY_LIMIT = 300;
  let first: TestApp;
  let second: SecondApi;
  beforeAll(async () => {
    first = await startTestApp({ RATE_LIMIT_PER_MINUTE: String(BUSY_LIMIT) });
    second = await startSecondApi(first, { RATE_LIMIT_PER_MINUTE: String(BUSY_LIMIT) });
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  it('never admits more than the limit when two processes serve concurrent bursts, and counts Remaining down by one on one process', async () => {
    const team = await first.createTeam();
    const { token } = await first.issueToken(team.id, ['monitoring:read'], 'viewer');
    await awayFromMinuteEdge();
    const alone = [];
    for (let i = 0; i < 20; i++) alone.push(Number((await first.request('GET', PROJECTS, { token })).headers['ratelimit-remaining']));
    expect(alone).toEqual(Array.from({ length: 20 }, (_, i) => BUSY_LIMIT - 1 - i));

    const burst = await Promise.all(Array.from({ length: BUSY_LIMIT + 40 }, (_, i) => (i % 2 ? second : first).request('GET', PROJECTS, { token })));
    const admitted = 20 + burst.filter((r) => r.statusCode === 200).length;
    expect(burst.every((r) => r.statusCode === 200 || r.statusCode === 429)).toBe(true);
    expect(admitted).toBeLessThanOrEqual(BUSY_LIMIT);
    // Each process may hold at most 1% of the limit taken from the shared count but unspent.
    expect(admitted).toBeGreaterThanOrEqual(BUSY_LIMIT - 2 * (BUSY_LIMIT / 100));
  });
});
