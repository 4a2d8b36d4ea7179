/**
 * Linked checks of a long outage (issue 12 item 3): the detail carries the newest 100 and
 * `checks_total`; GET /incidents/:id/checks pages through every one.
 *
 * The checks are linked the way the automatic-incident reactor links them (the domain's
 * `link_check` decision appended to the incident stream); everything is read over HTTP.
 */
import { incidentAggregate } from '../../src/incidents/application/lookups.js';
import { incidentStreamId, type IncidentEvent, type LinkedCheck } from '../../src/incidents/domain/events.js';
import { decide, replay } from '../../src/incidents/domain/incident.js';
import { systemContext } from '../../src/platform/es/command-context.js';
import { runStreamCommand } from '../../src/platform/es/stream-command.js';
import type { NewEvent } from '../../src/platform/event-store/event-store.port.js';
import { appWithIncidentTeam, createIncident, INCIDENTS, type TeamFixture } from '../support/incident-fixtures.js';
import type { TestApp } from '../support/test-app.js';
import { failingCheck as linkedFailure } from '../unit/incidents/fixtures.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

/** A failing check as the reactor links it, `second` seconds after T0, probed in eu-west. */
function failingCheck(id: number, endpointId: number, second: number): LinkedCheck {
  return { ...linkedFailure(id, new Date(T0 + second * 1000).toISOString(), endpointId), region: 'eu-west' };
}

/** Links the checks to the incident as the reactor does, then waits until the incidents view has them. */
async function linkChecks(t: TestApp, incidentId: number, checks: LinkedCheck[]): Promise<void> {
  const { append } = await runStreamCommand(t.platform.events, incidentStreamId(incidentId), incidentAggregate, systemContext('alerting'), (state) => {
    const events: IncidentEvent[] = [];
    let current = state;
    for (const check of checks) {
      const decided = decide(current, { kind: 'link_check', check }, { now: new Date().toISOString() });
      current = replay(decided, current);
      events.push(...decided);
    }
    return { events: events as NewEvent[], result: null };
  });
  if (append) await t.platform.freshness.waitFor(append.position, ['incidents']);
}

/** Every page of the route, following next_cursor. */
async function allPages(t: TestApp, token: string, incidentId: number, limit?: number): Promise<{ checks: LinkedCheck[]; pages: number }> {
  const checks: LinkedCheck[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const query = new URLSearchParams();
    if (limit !== undefined) query.set('limit', String(limit));
    if (cursor) query.set('cursor', cursor);
    const response = await t.request('GET', `${INCIDENTS}/${incidentId}/checks?${query}`, { token });
    expect(response.statusCode).toBe(200);
    const { data, pagination } = response.json();
    expect(pagination.has_more).toBe(pagination.next_cursor !== null);
    checks.push(...data);
    cursor = pagination.next_cursor;
    pages++;
  } while (cursor !== null);
  return { checks, pages };
}

const newestFirst = (a: LinkedCheck, b: LinkedCheck) => Date.parse(b.checked_at) - Date.parse(a.checked_at) || b.id - a.id;

describe('linked checks of a long outage', () => {
  const { t, f } = appWithIncidentTeam();

  /** 250 checks on two endpoints, linked out of time order (a merge or a late delivery does that), two of them at the same instant. */
  async function longOutage(fixture: TeamFixture) {
    const incident = await createIncident(t, fixture, { endpoint_ids: [fixture.endpoints[0]] });
    const checks = Array.from({ length: 250 }, (_, i) => failingCheck(10_000 + incident.id * 1000 + i, fixture.endpoints[i % 2], (i * 97) % 250));
    checks.push(failingCheck(10_000 + incident.id * 1000 + 999, fixture.endpoints[0], 249));
    await linkChecks(t, incident.id, checks.slice(0, 120));
    await linkChecks(t, incident.id, checks.slice(120));
    return { incident, checks };
  }

  it('the detail holds the newest 100 checks, oldest first, and checks_total counts all of them', async () => {
    const { incident, checks } = await longOutage(f);
    const response = await t.request('GET', `${INCIDENTS}/${incident.id}`, { token: f.editor });
    expect(response.statusCode).toBe(200);
    const detail = response.json().data;
    expect(detail.checks_total).toBe(251);
    expect(detail.error_count).toBe(251);
    const newest100 = [...checks].sort(newestFirst).slice(0, 100).reverse();
    expect(detail.checks.map((c: LinkedCheck) => c.id)).toEqual(newest100.map((c) => c.id));
    expect(detail.checks[99]).toEqual(newest100[99]);
    expect(detail.endpoint_ids).toEqual(f.endpoints);
  });

  it('GET /incidents/:id/checks pages through every linked check once, newest first', async () => {
    const { incident, checks } = await longOutage(f);
    const byDefault = await allPages(t, f.editor, incident.id);
    expect(byDefault.pages).toBe(6); // 50 a page by default
    expect(byDefault.checks.map((c) => c.id)).toEqual([...checks].sort(newestFirst).map((c) => c.id));
    expect(byDefault.checks[0]).toEqual([...checks].sort(newestFirst)[0]);

    const biggest = await allPages(t, f.editor, incident.id, 100);
    expect(biggest.pages).toBe(3);
    expect(biggest.checks).toEqual(byDefault.checks);
  });

  it('keeps pages stable while more checks are linked (keyset cursor)', async () => {
    const incident = await createIncident(t, f);
    await linkChecks(t, incident.id, [1, 2, 3, 4].map((i) => failingCheck(900_000 + incident.id * 10 + i, f.endpoints[0], i)));
    const first = (await t.request('GET', `${INCIDENTS}/${incident.id}/checks?limit=2`, { token: f.editor })).json();
    expect(first.data.map((c: LinkedCheck) => c.id % 10)).toEqual([4, 3]);
    await linkChecks(t, incident.id, [failingCheck(900_000 + incident.id * 10 + 5, f.endpoints[0], 5)]);
    const second = (await t.request('GET', `${INCIDENTS}/${incident.id}/checks?limit=2&cursor=${first.pagination.next_cursor}`, { token: f.editor })).json();
    expect(second.data.map((c: LinkedCheck) => c.id % 10)).toEqual([2, 1]);
    expect(second.pagination).toEqual({ next_cursor: null, has_more: false });
  });

  it('an incident without linked checks: empty checks, checks_total 0, an empty first page', async () => {
    const incident = await createIncident(t, f);
    expect(incident.checks).toEqual([]);
    expect(incident.checks_total).toBe(0);
    const page = await t.request('GET', `${INCIDENTS}/${incident.id}/checks`, { token: f.editor });
    expect(page.statusCode).toBe(200);
    expect(page.json()).toEqual({ data: [], pagination: { next_cursor: null, has_more: false } });
  });

  it('a merge moves the checks: the target lists both incidents\' checks once, the source none', async () => {
    const target = await createIncident(t, f, { title: 'Target' });
    const source = await createIncident(t, f, { title: 'Source' });
    const shared = failingCheck(800_000 + target.id, f.endpoints[0], 1);
    await linkChecks(t, target.id, [shared, failingCheck(800_100 + target.id, f.endpoints[0], 2)]);
    await linkChecks(t, source.id, [shared, failingCheck(800_200 + target.id, f.endpoints[1], 3)]);
    const merged = await t.request('POST', `${INCIDENTS}/${target.id}/merge`, { token: f.editor, body: { source_incident_ids: [source.id] } });
    expect(merged.statusCode).toBe(200);
    expect(merged.json().data.checks_total).toBe(3);

    const targetChecks = await allPages(t, f.editor, target.id);
    expect(targetChecks.checks.map((c) => c.id)).toEqual([800_200 + target.id, 800_100 + target.id, 800_000 + target.id]);
    expect((await t.request('GET', `${INCIDENTS}/${target.id}`, { token: f.editor })).json().data.checks_total).toBe(3);
    expect((await allPages(t, f.editor, source.id)).checks).toEqual([]);
    expect((await t.request('GET', `${INCIDENTS}/${source.id}`, { token: f.editor })).json().data).toMatchObject({ checks: [], checks_total: 0, merged_into_id: target.id });
  });

  it('answers 404 for a missing, malformed or other team\'s incident, before any 400 for the query', async () => {
    const incident = await createIncident(t, f);
    const other = await t.createTeam('Other team');
    const otherToken = (await t.issueToken(other.id, ['incidents:read'], 'viewer')).token;
    for (const [url, token] of [
      [`${INCIDENTS}/99999999/checks`, f.editor],
      [`${INCIDENTS}/abc/checks`, f.editor],
      [`${INCIDENTS}/0/checks`, f.editor],
      [`${INCIDENTS}/99999999/checks?limit=0`, f.editor],
      [`${INCIDENTS}/${incident.id}/checks?limit=0`, otherToken],
    ]) {
      const response = await t.request('GET', url, { token });
      expect([url, response.statusCode, response.json().code]).toEqual([url, 404, 'not_found']);
    }
    const badLimit = await t.request('GET', `${INCIDENTS}/${incident.id}/checks?limit=101`, { token: f.editor });
    expect([badLimit.statusCode, badLimit.json().errors.map((e: { field: string }) => e.field)]).toEqual([400, ['limit']]);
  });

  it('refuses a cursor issued for another incident or tampered with', async () => {
    const { incident } = await longOutage(f);
    const next = (await t.request('GET', `${INCIDENTS}/${incident.id}/checks`, { token: f.editor })).json().pagination.next_cursor;
    const elsewhere = await createIncident(t, f);
    for (const url of [`${INCIDENTS}/${elsewhere.id}/checks?cursor=${next}`, `${INCIDENTS}/${incident.id}/checks?cursor=${next}x`]) {
      const response = await t.request('GET', url, { token: f.editor });
      expect([url, response.statusCode, response.json().code]).toEqual([url, 400, 'invalid_cursor']);
    }
  });

  it('needs incidents:read', async () => {
    const incident = await createIncident(t, f);
    const url = `${INCIDENTS}/${incident.id}/checks`;
    const monitoringOnly = (await t.issueToken(f.teamId, ['monitoring:read'], 'editor')).token;
    const refused = await t.request('GET', url, { token: monitoringOnly });
    expect([refused.statusCode, refused.json().code]).toEqual([403, 'insufficient_scope']);
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="incidents:read"');
    expect((await t.request('GET', url)).statusCode).toBe(401);
    const viewer = (await t.issueToken(f.teamId, ['incidents:read'], 'viewer')).token;
    expect((await t.request('GET', url, { token: viewer })).statusCode).toBe(200);
  });
});
