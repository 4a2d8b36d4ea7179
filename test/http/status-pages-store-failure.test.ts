/**
 * The public status routes are plain Fastify routes, not Nest controllers: a failure of the view
 * store while answering one still comes back as the platform's 500 problem details, with the
 * request id and without the internal error's text.
 */
import { jest } from '@jest/globals';
import { createPage, statusTeam } from '../support/status-page-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const INTERNAL = 'disk I/O error at /var/lib/secret-path/views.sqlite';

describe('status pages when the view store fails', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
    const team = await statusTeam(t, 1, 'Failing store');
    // One page per route, none read before its case: nothing of it is cached yet.
    for (const slug of ['failing-page', 'failing-summary', 'failing-feed']) {
      await createPage(t, team.teamId, { slug, title: 'Failing store', components: [{ endpoint_id: team.endpoints[0] }] });
    }
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t?.close();
  });

  it.each(['/status/failing-page', '/status/failing-summary/summary.json', '/status/failing-feed/feed.atom'])('%s answers 500 problem details without the internal error', async (path) => {
    const reader = t.platform.reader as unknown as Record<string, (...args: unknown[]) => unknown>;
    const spies = ['get', 'getMany', 'find', 'count', 'aggregate'].filter((name) => typeof reader[name] === 'function').map((name) =>
      jest.spyOn(reader, name as never).mockImplementation((() => Promise.reject(new Error(INTERNAL))) as never),
    );
    try {
      const response = await t.request('GET', path);
      expect(response.statusCode).toBe(500);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      const body = response.json();
      expect(body).toMatchObject({ status: 500, request_id: response.headers['x-request-id'] });
      expect(response.body).not.toContain('secret-path');
      expect(response.body).not.toContain('disk I/O');
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    // The store is back: the same route answers again.
    expect((await t.request('GET', path)).statusCode).toBe(200);
  });
});
