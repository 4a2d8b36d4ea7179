/**
 * The checks list (`GET /endpoints/{id}/checks`) under every combination of its filters (source,
 * success, region, from, to), paged through cursors, against a model made from the endpoint's
 * unfiltered list; `GET` of each check; checks of one instant crossed one per page; and the same
 * answers after the endpoint moved to another project (its rows are relabelled). The list reads
 * the analytics rows (one per retained check, manual and suppressed ones in outcomes of their
 * own), so these pin that every outcome is listed, merged newest first, then by id.
 */
import { createEndpoint, createProject, importChecks, importedCheck, readerTeam } from '../support/monitoring-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

type Check = Record<string, any>;

const SOURCES = [undefined, 'scheduled', 'manual'] as const;
const SUCCESSES = [undefined, 'true', 'false'] as const;
const REGIONS = [undefined, 'local', 'eu-west', 'nowhere'] as const;
const FROM = '2030-01-01T00:30:00Z';
const TO = '2030-01-01T02:00:00Z';
const RANGES: Array<{ from?: string; to?: string }> = [{}, { from: FROM }, { to: TO }, { from: FROM, to: TO }];
/** Several checks of one instant, of every outcome: a cursor must cross them by id. */
const INSTANT = '2030-01-01T01:30:00Z';

describe('checks list: every filter combination, cursors, one instant', () => {
  let t: TestApp;
  let token: string;
  let url: string;
  let sibling: number;
  let all: Check[];
  let teamId: number;
  let endpointId: number;

  beforeAll(async () => {
    t = await startTestApp();
    ({ teamId, token } = await readerTeam(t));
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    endpointId = endpoint.id;
    sibling = (await createEndpoint(t, teamId, project.id)).id;
    // Checks imported inside a maintenance window are alert_suppressed: scheduled, yet not counted.
    await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { endpoint_id: endpoint.id, project_id: project.id, starts_at: '2030-01-01T01:00:00Z', ends_at: '2030-01-01T01:20:00Z' });
    const failed = { success: false, status_code: 503, failure_reason: 'status: 503' };
    const manual = { source: 'manual' };
    const west = { region: 'eu-west' };
    await importChecks(t, teamId, sibling, [importedCheck('2030-01-01T00:00:00Z'), importedCheck(INSTANT)]);
    await importChecks(t, teamId, endpoint.id, [
      importedCheck('2030-01-01T00:00:00Z'),
      importedCheck('2030-01-01T00:10:00Z', failed),
      importedCheck('2030-01-01T00:20:00Z', { ...manual, body_complete: false }),
      importedCheck('2030-01-01T00:30:00Z', { ...manual, ...failed, ...west }),
      importedCheck('2030-01-01T00:40:00Z', { ...west, latency_ms: 77, time_to_first_byte_ms: 12, duration_ms: 90 }),
      importedCheck('2030-01-01T00:50:00Z', { ...failed, ...west }),
      importedCheck('2030-01-01T01:05:00Z'),
      importedCheck('2030-01-01T01:10:00Z', failed),
      importedCheck('2030-01-01T01:15:00Z', { ...west, ...failed }),
      importedCheck(INSTANT, failed),
      importedCheck(INSTANT, manual),
      importedCheck(INSTANT),
      importedCheck(INSTANT, { ...manual, ...failed, ...west }),
      importedCheck(INSTANT, west),
      importedCheck('2030-01-01T02:00:00Z'),
      importedCheck('2030-01-01T02:10:00Z', { ...manual, ...west }),
    ]);
    url = `/api/public/v2/endpoints/${endpoint.id}/checks`;
    all = await walk({ limit: '100' });
  }, 60_000);
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, query?: Record<string, string>) => t.request('GET', path, { token, query });

  async function walk(query: Record<string, string>): Promise<Check[]> {
    const seen: Check[] = [];
    let cursor: string | null = null;
    do {
      const response = await get(url, { ...query, ...(cursor ? { cursor } : {}) });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      seen.push(...body.data);
      cursor = body.pagination.next_cursor;
      expect(body.pagination.has_more).toBe(cursor !== null);
    } while (cursor);
    return seen;
  }

  function keeps(check: Check, query: Record<string, string>): boolean {
    if (query.source !== undefined && check.source !== query.source) return false;
    if (query.success !== undefined && String(check.success) !== query.success) return false;
    if (query.region !== undefined && check.region !== query.region) return false;
    if (query.from !== undefined && check.checked_at < new Date(query.from).toISOString()) return false;
    if (query.to !== undefined && check.checked_at >= new Date(query.to).toISOString()) return false;
    return true;
  }

  const combinations: Array<Record<string, string>> = SOURCES.flatMap((source) =>
    SUCCESSES.flatMap((success) =>
      REGIONS.flatMap((region) =>
        RANGES.map((range) => {
          const query: Record<string, string | undefined> = { source, success, region, ...range };
          return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as Record<string, string>;
        }),
      ),
    ),
  );

  it('lists every check of the endpoint, newest first then by id, with its fields and defaults', async () => {
    expect(all).toHaveLength(16);
    for (let i = 1; i < all.length; i++) {
      const [newer, older] = [all[i - 1], all[i]];
      expect(newer.checked_at > older.checked_at || (newer.checked_at === older.checked_at && newer.id > older.id)).toBe(true);
    }
    expect(new Set(all.map((c) => c.endpoint_id))).toEqual(new Set([endpointId]));
    // The instant's five checks, by id descending (imported in order: the last has the largest id).
    expect(all.filter((c) => c.checked_at === '2030-01-01T01:30:00.000Z').map((c) => [c.source, c.success, c.region])).toEqual([
      ['scheduled', true, 'eu-west'],
      ['manual', false, 'eu-west'],
      ['scheduled', true, 'local'],
      ['manual', true, 'local'],
      ['scheduled', false, 'local'],
    ]);
    // Suppressed inside the window only; every field the API gives, defaults put back.
    expect(all.filter((c) => c.alert_suppressed).map((c) => c.checked_at)).toEqual(['2030-01-01T01:15:00.000Z', '2030-01-01T01:10:00.000Z', '2030-01-01T01:05:00.000Z']);
    const timed = all.find((c) => c.checked_at === '2030-01-01T00:40:00.000Z')!;
    expect(Object.keys(timed)).toEqual([
      'id', 'endpoint_id', 'configuration_version', 'success', 'status_code', 'latency_ms', 'time_to_first_byte_ms', 'duration_ms', 'source', 'body_complete',
      'latency_anomaly', 'latency_threshold_ms', 'alert_suppressed', 'failure_reason', 'response_excerpt_omitted', 'region', 'checked_at',
    ]);
    expect(timed).toMatchObject({ success: true, status_code: 200, latency_ms: 77, time_to_first_byte_ms: 12, duration_ms: 90, source: 'scheduled', body_complete: true, latency_anomaly: false, latency_threshold_ms: null, alert_suppressed: false, failure_reason: null, response_excerpt_omitted: false, region: 'eu-west' });
    expect(all.find((c) => c.checked_at === '2030-01-01T00:20:00.000Z')).toMatchObject({ source: 'manual', body_complete: false, region: 'local' });
  });

  it('pages every combination of source, success, region, from and to, newest first, as the filters of the full list', async () => {
    expect(combinations).toHaveLength(144);
    for (const query of combinations) {
      const expected = all.filter((check) => keeps(check, query));
      const limit = String(1 + (combinations.indexOf(query) % 3));
      expect({ query, checks: await walk({ ...query, limit }) }).toEqual({ query, checks: expected });
    }
  }, 120_000);

  it('crosses the checks of one instant one per page, and a cursor stays bound to its filters', async () => {
    const instant = { from: INSTANT, to: '2030-01-01T01:30:00.001Z' };
    const pages: Check[][] = [];
    let cursor: string | undefined;
    for (;;) {
      const body = (await get(url, { ...instant, limit: '1', ...(cursor ? { cursor } : {}) })).json();
      pages.push(body.data);
      if (!body.pagination.has_more) break;
      cursor = body.pagination.next_cursor;
    }
    expect(pages.map((page) => page.map((c) => c.id))).toEqual(all.filter((c) => c.checked_at === '2030-01-01T01:30:00.000Z').map((c) => [c.id]));
    // Two per page from the middle of the instant: the cursor of the second check starts the third.
    const first = (await get(url, { ...instant, limit: '2' })).json();
    const second = (await get(url, { ...instant, limit: '2', cursor: first.pagination.next_cursor })).json();
    expect(second.data.map((c: Check) => c.id)).toEqual(pages.slice(2, 4).flat().map((c) => c.id));
    // The same cursor with other filters is refused.
    expect((await get(url, { ...instant, success: 'true', limit: '2', cursor: first.pagination.next_cursor })).statusCode).toBe(400);
  });

  it('gives each check by id through its endpoint only, as the list shows it', async () => {
    for (const check of all) {
      const response = await get(`${url}/${check.id}`);
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toEqual(check);
      expect((await get(`/api/public/v2/endpoints/${sibling}/checks/${check.id}`)).statusCode).toBe(404);
    }
  });

  it('lists the same checks, page for page, after the endpoint moved to another project', async () => {
    const before = await Promise.all(combinations.slice(0, 24).map((query) => walk({ ...query, limit: '2' })));
    const other = await createProject(t, teamId, 'Elsewhere');
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { project_id: other.id })).statusCode).toBe(200);
    const after = await Promise.all(combinations.slice(0, 24).map((query) => walk({ ...query, limit: '2' })));
    expect(after).toEqual(before);
    expect(await walk({ limit: '100' })).toEqual(all);
  }, 60_000);
});
