/**
 * Analytics never hold the process (issue 32): the SQLite read store answers synchronously, so a
 * query made of thousands of reads used to run from start to end without giving way, and every
 * other request (a check list, a status page, a probe's result) waited behind it. Now analytics
 * run their statements on a worker thread and give the event loop a turn every few milliseconds,
 * so a cheap request sent behind a burst of expensive analytics is answered while they are still
 * being computed.
 *
 * No timer is asserted: the test compares the order of answers. A burst of project analytics
 * goes out, and the check list is sent from inside the first one's computation (at one of its
 * rollup reads), so it is queued behind work already under way, as a request arriving from the
 * network would be. A project of many endpoints (disabled ones are members too) over a 90-day
 * range in 200 buckets costs the code before issue 32 one read per endpoint, bucket and
 * granularity; the burst's requests each take a different range, so none can share another's
 * result.
 */
import type { InjectResponse } from '../support/test-app.js';
import { analyticsWorld, iso } from '../support/analytics-fixtures.js';

const T0 = Date.parse('2025-10-01T00:00:00.000Z');
const DAY = 86_400_000;
const ENDPOINTS = 40;
const BURST = 8;

describe('analytics give way to other requests', () => {
  const { w, t } = analyticsWorld();

  it('answers a check list sent behind a burst of project analytics before most of them are answered', async () => {
    const { teamId, token } = await w.team('Busy');
    const project = await w.project(teamId, 'Many');
    const endpoints: number[] = [];
    for (let i = 0; i < ENDPOINTS; i++) endpoints.push(await w.endpoint(teamId, project, `endpoint ${i}`, false));
    await w.importChecks(
      teamId,
      endpoints[0],
      Array.from({ length: 30 }, (_, i) => ({ at: T0 + i * 3 * DAY + 12_345, latency: 100 + i, success: i % 7 !== 0 })),
    );

    let answered = 0;
    let list: Promise<InjectResponse> | null = null;
    let reads = 0;
    // The store analytics read through (on SQLite, the one whose reads run on a worker thread).
    const store = t.platform.views.offThread?.() ?? t.platform.views;
    const aggregateRanges = store.aggregateRanges;
    store.aggregateRanges = function (this: typeof store, ...args: Parameters<typeof aggregateRanges>) {
      if (++reads === 3) list = t.request('GET', `/api/public/v2/endpoints/${endpoints[0]}/checks?limit=10`, { token });
      return aggregateRanges.apply(this, args);
    };
    const burst = Array.from({ length: BURST }, (_, i) => {
      // `from` and `to` off the minute grid: each bucket also reads raw edges.
      const from = T0 + i * 1_001;
      const query = `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(from + 90 * DAY - 7_003))}&buckets=200`;
      return t.request('GET', `/api/public/v2/projects/${project}/analytics?${query}`, { token }).then((response) => {
        answered++;
        return response;
      });
    });
    let answeredBeforeList = -1;
    try {
      while (!list) await new Promise((resolve) => setImmediate(resolve));
      const listed = await (list as Promise<InjectResponse>);
      answeredBeforeList = answered;
      expect(listed.statusCode).toBe(200);
      expect(listed.json().data).toHaveLength(10);
    } finally {
      store.aggregateRanges = aggregateRanges;
    }
    const responses = await Promise.all(burst);
    for (const response of responses) expect(response.statusCode).toBe(200);
    expect(responses[0].json().data.totals.checks).toBe(30);
    // Before issue 32 the list waited for (nearly) the whole burst.
    expect(answeredBeforeList).toBeLessThan(BURST / 2);
  });
});
