import { isReactor } from '../../src/platform/projections/projection.js';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHECK_RECORDED } from '../../src/checks/domain/check.js';
import { CHECKS_SUMMARIZED, checkSummariesStream, retentionHorizon } from '../../src/checks/domain/check-summary.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { CheckRetention } from '../../src/checks/application/retention.js';
import { createEndpoint, createProject, importChecks } from '../support/monitoring-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

const MIN = 60_000;
const DAY = 86_400_000;
const DAYS = 30;
const VIEWS = ['analytics_rollups', 'analytics_endpoints'];
const iso = (ms: number) => new Date(ms).toISOString();
const REGIONS = ['local', 'eu-west', 'us-east'];

async function settled(t: TestApp): Promise<void> {
  const head = await t.platform.events.headPosition();
  if (head !== null && !(await t.platform.freshness.waitFor(head, VIEWS))) throw new Error('views did not catch up');
}

/**
 * One service with two endpoints whose checks span 45 days, retention 30 days; every figure
 * analytics shows is taken before the prune, after it, after a rebuild of every view, and after
 * a restart on the same files.
 */
describe('check retention through the public API', () => {
  const now = Date.now();
  const horizon = retentionHorizon(now, DAYS);
  const dataDir = mkdtempSync(join(tmpdir(), 'retention-test-'));
  let t: TestApp;
  let teamId: number;
  let token: string;
  let endpointA: number;
  let endpointB: number;
  let projectA: number;

  const start = () => startTestApp({ ROLE: 'api', DATA_DIR: dataDir, CHECK_RETENTION_DAYS: String(DAYS) });

  beforeAll(async () => {
    t = await start();
    teamId = (await t.createTeam('Retained')).id;
    token = (await t.issueToken(teamId, ['monitoring:read', 'analytics:read'], 'viewer')).token;
    projectA = (await createProject(t, teamId, 'A')).id;
    const projectB = (await createProject(t, teamId, 'B')).id;
    endpointA = (await createEndpoint(t, teamId, projectA, { name: 'a' })).id;
    endpointB = (await createEndpoint(t, teamId, projectB, { name: 'b' })).id;
    // A: a check every 17 minutes for 45 days (some failing, some manual) from three probe
    // regions in turn, then old-dated checks imported late, behind the recent ones in the stream.
    const checks = [];
    for (let at = now - 45 * DAY + 12_345, n = 0; at < now - MIN; at += 17 * MIN, n++) {
      const region = REGIONS[n % REGIONS.length];
      checks.push({ checked_at: iso(at), success: n % 9 !== 0, status_code: n % 9 === 0 ? 503 : 200, latency_ms: 30 + ((n * 37) % 400), source: n % 25 === 0 ? 'manual' : 'scheduled', region });
    }
    for (let i = 0; i < checks.length; i += 1000) await importChecks(t, teamId, endpointA, checks.slice(i, i + 1000));
    await importChecks(t, teamId, endpointA, [{ checked_at: iso(now - 40 * DAY + 999), success: false, status_code: 500, latency_ms: 777 }]);
    // B: checked only long ago; its latest check must survive in analytics.
    await importChecks(t, teamId, endpointB, [
      { checked_at: iso(now - 44 * DAY), success: true, status_code: 200, latency_ms: 50 },
      { checked_at: iso(now - 43 * DAY), success: false, status_code: 502, latency_ms: 900 },
    ]);
    await settled(t);
    // Thousands of imported checks applied by every view: a minute on a loaded 2-core machine.
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const ranges = [
    // Reaches past the horizon, edges off the minute.
    { from: now - 44 * DAY + 1234, to: now - 2 * DAY + 56_789, buckets: 42 },
    // Entirely before the horizon.
    { from: now - 44 * DAY, to: now - 35 * DAY, buckets: 9 },
    // Inside the horizon: p95 exact.
    { from: horizon + DAY + 1, to: now, buckets: 10 },
  ];

  /** The event log's file and its write-ahead log. */
  function logBytes(): number {
    return ['events.sqlite', 'events.sqlite-wal'].reduce((sum, name) => sum + (existsSync(join(dataDir, name)) ? statSync(join(dataDir, name)).size : 0), 0);
  }

  async function figures(): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const r of ranges) {
      const q = `from=${encodeURIComponent(iso(r.from))}&to=${encodeURIComponent(iso(r.to))}&buckets=${r.buckets}`;
      for (const path of ['/api/public/v2/analytics', `/api/public/v2/projects/${projectA}/analytics`, `/api/public/v2/endpoints/${endpointA}/analytics`, `/api/public/v2/endpoints/${endpointB}/analytics`]) {
        const response = await t.request('GET', `${path}?${q}`, { token });
        expect(response.statusCode).toBe(200);
        out.push(response.json().data);
      }
    }
    // Endpoint A by probe region, after the rest (so the indexes above stay).
    for (const r of ranges) {
      const q = `from=${encodeURIComponent(iso(r.from))}&to=${encodeURIComponent(iso(r.to))}&buckets=${r.buckets}`;
      for (const region of REGIONS) {
        const response = await t.request('GET', `/api/public/v2/endpoints/${endpointA}/analytics?${q}&region=${region}`, { token });
        expect(response.statusCode).toBe(200);
        out.push(response.json().data);
      }
    }
    return out;
  }

  async function listed(endpointId: number): Promise<Array<{ id: number; checked_at: string }>> {
    const rows: Array<{ id: number; checked_at: string }> = [];
    let cursor: string | undefined;
    do {
      const response = await t.request('GET', `/api/public/v2/endpoints/${endpointId}/checks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token });
      expect(response.statusCode).toBe(200);
      rows.push(...response.json().data);
      cursor = response.json().pagination.next_cursor ?? undefined;
    } while (cursor);
    return rows;
  }

  // A prune, a rebuild of every view and a restart: minutes on a loaded 2-core machine.
  it('keeps every analytics figure through prune, rebuild and restart, drops old checks from the routes, and shrinks the log', async () => {
    const before = await figures();
    const listBefore = await listed(endpointA);
    const old = listBefore.filter((c) => Date.parse(c.checked_at) < horizon);
    expect(old.length).toBeGreaterThan(100);
    const oldId = old[old.length - 1].id;
    expect((await t.request('GET', `/api/public/v2/endpoints/${endpointA}/checks/${oldId}`, { token })).statusCode).toBe(200);
    // p95: exact inside the horizon; null for a range whose sample reaches past it, before any prune too.
    expect((before[8] as any).totals.p95_latency_ms).not.toBeNull();
    expect((before[0] as any).totals.p95_latency_ms).toBeNull();
    // Each range's regions add up to endpoint A's checks, and each region has some (before the horizon too).
    ranges.forEach((_, r) => {
      const perRegion = REGIONS.map((__, i) => (before[ranges.length * 4 + r * REGIONS.length + i] as any).totals.checks as number);
      expect(perRegion.every((n) => n > 0)).toBe(true);
      expect(perRegion.reduce((a, b) => a + b, 0)).toBe((before[r * 4 + 2] as any).totals.checks);
    });
    // Both sizes are taken with every page in the file itself: the WAL beside it holds copies of
    // pages, as many as the writes since its last reset, and measured it made this compare the
    // imports' write count, not the log (a 794 KB log of 290 KB of pages "shrank" to 266 KB).
    await t.platform.events.reclaimSpace!(); // the embedded log has it
    const sizeBefore = logBytes();

    const result = await new CheckRetention(t.platform.events, { days: DAYS }).apply(now, { coordination: t.platform.coordination, owner: 'test' });
    expect(result.summaries).toBeGreaterThan(0);
    await settled(t);

    expect(await figures()).toEqual(before);
    expect((await t.request('GET', `/api/public/v2/endpoints/${endpointA}/checks/${oldId}`, { token })).statusCode).toBe(404);
    const listAfter = await listed(endpointA);
    // Older than the horizon still: the newest old checks after the stream's last anchor before
    // the horizon (retention cuts a hash-chained stream just before an anchor: fewer than 64,
    // docs/audit.md), and the check imported late (behind newer ones in the stream).
    const kept = listAfter.filter((c) => Date.parse(c.checked_at) < horizon).map((c) => c.checked_at);
    expect(kept.length).toBeLessThanOrEqual(64);
    expect(kept).toEqual([...old.slice(0, kept.length - 1).map((c) => c.checked_at), iso(now - 40 * DAY + 999)]);
    expect(listAfter.length).toBe(listBefore.length - old.length + kept.length);
    const retainedEvents = await t.platform.events.readStream(checksStream(endpointA));
    expect(retainedEvents.filter((e) => e.type === CHECK_RECORDED).length).toBe(listAfter.length);
    expect((await t.platform.events.readStream(checkSummariesStream(endpointA))).every((e) => e.type === CHECKS_SUMMARIZED)).toBe(true);
    // The removed checks' pages go back to the file system. A third of the checks go and hourly
    // summaries come: 71 pages to 65 here; without reclaimSpace's vacuum the freed pages stay in
    // the file and the summaries grow it to 82.
    expect(logBytes()).toBeLessThan(sizeBefore);

    for (const projection of t.platform.runner!.projections.filter((p) => !isReactor(p))) await t.platform.runner!.rebuild(projection.name);
    await settled(t);
    expect(await figures()).toEqual(before);
    expect(await listed(endpointA)).toEqual(listAfter);

    await t.close();
    t = await start();
    await settled(t);
    expect(await figures()).toEqual(before);

    // A second pass finds nothing more to do.
    const again = await new CheckRetention(t.platform.events, { days: DAYS }).apply(now);
    expect(again).toMatchObject({ summaries: 0, removed: 0 });
  }, 180_000);
});
