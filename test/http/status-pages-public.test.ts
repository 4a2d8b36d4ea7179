import {
  addCheckpoint,
  createPage,
  INCIDENTS,
  openIncident,
  pagesPath,
  publicBodies,
  recordSignalEvent,
  resolveIncident,
  SECRETS,
  statusTeam,
  triggerSignal,
  type StatusTeam,
} from '../support/status-page-fixtures.js';
import { BUSY_VIEW_LAG_MS } from '../../src/statuspages/application/public-status.js';
import { markVerified } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { settled } from '../support/eventually.js';
import {
  ALERT_MAINTENANCE_FAILURE_ENDED,
  ALERT_MAINTENANCE_FAILURE_STARTED,
  ALERT_SIGNAL_FLAPPING_STARTED,
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  alertsStream,
} from '../../src/alerting/domain/endpoint-alerts.js';

const BASE = 'https://status.example.com';
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Alert states change with every check, so a page read before a signal may be served for up to
 * BUSY_VIEW_LAG_MS more: reads again until `done` holds (at least three times that, and long
 * enough for a loaded machine), then the test's expect shows what was there.
 */
const eventually = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => settled(read, done, { timeoutMs: Math.max(3 * BUSY_VIEW_LAG_MS, 30_000), intervalMs: 100 });

function statuses(summary: any): Record<string, string> {
  return Object.fromEntries(summary.components.map((c: any) => [c.name, c.status]));
}

describe('status pages: public routes', () => {
  const world = startedBeforeAll(async () => ({ t: await startTestApp({ PUBLIC_BASE_URL: BASE }) }), (w) => w.t.close());
  let t: TestApp;
  beforeAll(() => ({ t } = world));

  const summaryOf = async (slug: string) => {
    const response = await t.request('GET', `/status/${slug}/summary.json`);
    expect(response.statusCode).toBe(200);
    return response.json();
  };

  describe('component states and the page indicator', () => {
    let team: StatusTeam;
    beforeAll(async () => {
      team = await statusTeam(t, 4, 'States');
      await createPage(t, team.teamId, {
        slug: 'states',
        title: 'States',
        components: team.endpoints.map((endpoint_id, i) => ({ endpoint_id, name: `C${i + 1}` })),
      });
    });

    test('all operational: indicator none', async () => {
      const summary = await summaryOf('states');
      expect(statuses(summary)).toEqual({ C1: 'operational', C2: 'operational', C3: 'operational', C4: 'operational' });
      expect(summary.status).toEqual({ indicator: 'none', description: 'All Systems Operational' });
    });

    test('an open warning incident degrades its component (published or not): indicator minor', async () => {
      const incident = await openIncident(t, team, { endpoint_ids: [team.endpoints[0]], severity: 'warning', title: 'Slow checkout' });
      let summary = await summaryOf('states');
      expect(statuses(summary).C1).toBe('degraded_performance');
      expect(summary.status.indicator).toBe('minor');
      // Without a checkpoint it is not published.
      expect(summary.incidents).toEqual([]);
      await resolveIncident(t, team, incident.id);
      summary = await summaryOf('states');
      expect(statuses(summary).C1).toBe('operational');
    });

    test('a triggered latency signal degrades; a triggered availability signal is a major outage (within the busy-view lag)', async () => {
      await triggerSignal(t, team, team.endpoints[1], 'latency');
      expect((await eventually(async () => statuses(await summaryOf('states')), (s) => s.C2 !== 'operational')).C2).toBe('degraded_performance');
      await triggerSignal(t, team, team.endpoints[1], 'availability');
      const summary = await eventually(() => summaryOf('states'), (s) => statuses(s).C2 !== 'degraded_performance');
      expect(statuses(summary).C2).toBe('major_outage');
      expect(summary.status).toEqual({ indicator: 'major', description: 'Partial System Outage' });
    });

    test('an open critical incident is a major outage; more than half out is critical', async () => {
      await openIncident(t, team, { endpoint_ids: [team.endpoints[2]], severity: 'critical', title: 'Down' });
      let summary = await summaryOf('states');
      expect(statuses(summary).C3).toBe('major_outage');
      // Two of four out: not more than half.
      expect(summary.status.indicator).toBe('major');
      await openIncident(t, team, { endpoint_ids: [team.endpoints[3]], severity: 'critical', title: 'Down too' });
      summary = await summaryOf('states');
      expect(summary.status).toEqual({ indicator: 'critical', description: 'Major System Outage' });
    });

    test('maintenance wins over everything: under_maintenance, and it does not count against the indicator', async () => {
      const now = Date.now();
      for (const endpoint_id of [team.endpoints[1], team.endpoints[2], team.endpoints[3]]) {
        const response = await t.admin('POST', `/api/v2/teams/${team.teamId}/maintenance-windows`, { endpoint_id, starts_at: iso(now - HOUR), ends_at: iso(now + HOUR), reason: 'Database upgrade' });
        expect(response.statusCode).toBe(201);
      }
      const summary = await summaryOf('states');
      expect(statuses(summary)).toEqual({ C1: 'operational', C2: 'under_maintenance', C3: 'under_maintenance', C4: 'under_maintenance' });
      expect(summary.status.indicator).toBe('none');
      expect(summary.scheduled_maintenances.map((m: any) => [m.name, m.status, m.components.map((c: any) => c.name)])).toEqual([
        ['Database upgrade', 'in_progress', ['C2']],
        ['Database upgrade', 'in_progress', ['C3']],
        ['Database upgrade', 'in_progress', ['C4']],
      ]);
    });
  });

  describe('incidents, checkpoints and feeds', () => {
    let team: StatusTeam;
    let other: StatusTeam;
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      team = await statusTeam(t, 3, 'Incidents');
      other = await statusTeam(t, 1, 'Other team');
      await createPage(t, team.teamId, {
        slug: 'incidents',
        title: 'Incidents',
        components: [{ endpoint_id: team.endpoints[0], name: 'Checkout' }, { endpoint_id: team.endpoints[1], name: 'Search' }],
      });
      // Published, critical, on Checkout, three checkpoints.
      ids.major = (await openIncident(t, team, { endpoint_ids: [team.endpoints[0]], severity: 'critical', title: 'Checkout failing', detection_reason: SECRETS.detection })).id;
      ids.cp1 = (await addCheckpoint(t, team, ids.major, { title: 'Investigating', body: 'We see errors at checkout.', status_label: 'Investigating' })).id;
      ids.cp2 = (await addCheckpoint(t, team, ids.major, { title: 'Cause found', body: '', status_label: 'IDENTIFIED' })).id;
      ids.cp3 = (await addCheckpoint(t, team, ids.major, { title: 'Fix deployed', body: 'Watching <b>closely</b>.', status_label: 'Fix deployed' })).id;
      const comment = await t.request('POST', `${INCIDENTS}/${ids.major}/comments`, { token: team.token, body: { body: SECRETS.comment } });
      expect(comment.statusCode).toBe(201);
      // Published, warning, resolved.
      ids.resolved = (await openIncident(t, team, { endpoint_ids: [team.endpoints[1]], severity: 'warning', title: 'Search slow' })).id;
      await addCheckpoint(t, team, ids.resolved, { title: 'Monitoring', body: 'Recovered, monitoring.', status_label: 'monitoring' });
      await resolveIncident(t, team, ids.resolved);
      // Not on the page: only an endpoint the page does not list; another team's incident.
      ids.offPage = (await openIncident(t, team, { endpoint_ids: [team.endpoints[2]], severity: 'critical', title: SECRETS.offPageTitle })).id;
      await addCheckpoint(t, team, ids.offPage, { title: SECRETS.offPageTitle, body: SECRETS.offPageTitle });
      ids.foreign = (await openIncident(t, other, { endpoint_ids: [other.endpoints[0]], severity: 'critical', title: SECRETS.otherTeamTitle })).id;
      await addCheckpoint(t, other, ids.foreign, { title: SECRETS.otherTeamTitle, body: SECRETS.otherTeamTitle });
    });

    test('summary: unresolved published incidents with every checkpoint, newest first, mapped statuses', async () => {
      const summary = await summaryOf('incidents');
      expect(summary.incidents).toHaveLength(1);
      const incident = summary.incidents[0];
      expect(incident).toMatchObject({
        id: String(ids.major),
        name: 'Checkout failing',
        impact: 'major',
        resolved_at: null,
        shortlink: `${BASE}/status/incidents#incident-${ids.major}`,
      });
      // The latest checkpoint's label "Fix deployed" is none of the three: investigating.
      expect(incident.status).toBe('investigating');
      expect(incident.components.map((c: any) => c.name)).toEqual(['Checkout']);
      expect(incident.incident_updates.map((u: any) => [u.id, u.status, u.title, u.body])).toEqual([
        [String(ids.cp3), 'investigating', 'Fix deployed', 'Watching <b>closely</b>.'],
        [String(ids.cp2), 'identified', 'Cause found', 'Cause found'],
        [String(ids.cp1), 'investigating', 'Investigating', 'We see errors at checkout.'],
      ]);
      expect(statuses(summary)).toEqual({ Checkout: 'major_outage', Search: 'operational' });
    });

    test('the incident status follows the latest checkpoint, matched without regard to case', async () => {
      const incident = await openIncident(t, team, { endpoint_ids: [team.endpoints[1]], severity: 'warning', title: 'Label test' });
      const find = async () => (await summaryOf('incidents')).incidents.find((i: any) => i.id === String(incident.id));
      await addCheckpoint(t, team, incident.id, { title: 'a', status_label: 'MoNiToRiNg' });
      expect((await find()).status).toBe('monitoring');
      await addCheckpoint(t, team, incident.id, { title: 'b', status_label: 'identified' });
      expect((await find()).status).toBe('identified');
      await resolveIncident(t, team, incident.id);
      expect(await find()).toBeUndefined();
      const listed = (await t.request('GET', '/status/incidents/incidents.json')).json().incidents.find((i: any) => i.id === String(incident.id));
      expect(listed.status).toBe('resolved');
      expect(listed.impact).toBe('minor');
      expect(listed.resolved_at).toEqual(expect.any(String));
    });

    test('incidents.json: { page, incidents }, newest first, resolved ones included, nothing off the page', async () => {
      const response = await t.request('GET', '/status/incidents/incidents.json');
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['incidents', 'page']);
      expect(body.page).toEqual((await summaryOf('incidents')).page);
      const listed = body.incidents.map((i: any) => Number(i.id));
      expect(listed).toEqual(expect.arrayContaining([ids.major, ids.resolved]));
      expect(listed).not.toContain(ids.offPage);
      expect(listed).not.toContain(ids.foreign);
      const created = body.incidents.map((i: any) => i.created_at);
      expect(created).toEqual([...created].sort().reverse());
      expect(body.incidents.find((i: any) => i.id === String(ids.resolved)).status).toBe('resolved');
    });

    test('a resolution is an update: incidents.json, the feeds and the page say the incident was resolved', async () => {
      // Without it a feed reader's last word on a resolved incident was its last checkpoint
      // ("Monitoring"), and Statuspage widgets reading incident_updates[0] showed it still open.
      const listed = (await t.request('GET', '/status/incidents/incidents.json')).json().incidents.find((i: any) => i.id === String(ids.resolved));
      const at = listed.resolved_at;
      expect(listed.incident_updates.map((u: any) => [u.id, u.status, u.title])).toEqual([
        [`resolved-${ids.resolved}`, 'resolved', 'Resolved'],
        [expect.any(String), 'monitoring', 'Monitoring'],
      ]);
      expect(listed.incident_updates[0]).toEqual({
        id: `resolved-${ids.resolved}`,
        status: 'resolved',
        title: 'Resolved',
        body: 'This incident has been resolved.',
        created_at: at,
        updated_at: at,
        display_at: at,
      });
      const atom = (await t.request('GET', '/status/incidents/feed.atom')).body;
      expect(atom).toContain(`<id>${BASE}/status/incidents#incident-${ids.resolved}-update-resolved-${ids.resolved}</id>`);
      expect(atom).toContain('Search slow: Resolved');
      const rss = (await t.request('GET', '/status/incidents/feed.rss')).body;
      expect(rss).toContain(`${BASE}/status/incidents#incident-${ids.resolved}-update-resolved-${ids.resolved}</guid>`);
      const html = (await t.request('GET', '/status/incidents')).body;
      expect(html).toMatch(/<strong class="label">Resolved<\/strong>\s*<\/p><p class="body">This incident has been resolved\.<\/p>/);
    });

    test('a merged-away incident appears only through its target', async () => {
      const source = await openIncident(t, team, { endpoint_ids: [team.endpoints[1]], severity: 'warning', title: 'Merged source' });
      await addCheckpoint(t, team, source.id, { title: 'Source update', body: 'from the source' });
      const target = await openIncident(t, team, { endpoint_ids: [team.endpoints[0]], severity: 'warning', title: 'Merge target' });
      const merge = await t.request('POST', `${INCIDENTS}/${target.id}/merge`, { token: team.token, body: { source_incident_ids: [source.id] } });
      expect(merge.statusCode).toBe(200);
      const incidents = (await t.request('GET', '/status/incidents/incidents.json')).json().incidents;
      expect(incidents.map((i: any) => i.id)).not.toContain(String(source.id));
      const shown = incidents.find((i: any) => i.id === String(target.id));
      expect(shown.incident_updates.map((u: any) => u.title)).toContain('Source update');
      expect(shown.components.map((c: any) => c.name).sort()).toEqual(['Checkout', 'Search']);
    });

    test('feeds: one entry per checkpoint, newest first, with their media types', async () => {
      const atom = await t.request('GET', '/status/incidents/feed.atom');
      expect(atom.statusCode).toBe(200);
      expect(atom.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
      const rss = await t.request('GET', '/status/incidents/feed.rss');
      expect(rss.headers['content-type']).toBe('application/rss+xml; charset=utf-8');
      const incidents = (await t.request('GET', '/status/incidents/incidents.json')).json().incidents;
      const checkpoints = incidents.flatMap((i: any) => i.incident_updates.map((u: any) => ({ id: `${i.shortlink}-update-${u.id}`, at: u.created_at })));
      checkpoints.sort((x: any, y: any) => (x.at < y.at ? 1 : -1));
      const atomIds = [...atom.body.matchAll(/<entry>\s*<title[^>]*>.*?<\/title>\s*<id>([^<]+)<\/id>/gs)].map((m) => m[1]);
      expect(atomIds).toEqual(checkpoints.map((c: any) => c.id));
      expect((rss.body.match(/<item>/g) ?? []).length).toBe(checkpoints.length);
      // Checkpoint text is plain text: markup in it is escaped, never interpreted.
      expect(atom.body).toContain('Watching &lt;b&gt;closely&lt;/b&gt;.');
      expect(atom.body).not.toContain('<b>closely</b>');
    });

    test('the HTML page shows states, active incidents with every checkpoint and past incidents', async () => {
      const response = await t.request('GET', '/status/incidents');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      const html = response.body;
      expect(html).toContain('<main id="main">');
      expect(html).toContain('Checkout failing');
      expect(html).toContain('We see errors at checkout.');
      expect(html).toContain('IDENTIFIED');
      expect(html).toContain('Fix deployed');
      expect(html).toContain('Watching &lt;b&gt;closely&lt;/b&gt;.');
      expect(html).toContain(`id="incident-${ids.major}"`);
      expect(html).toMatch(/Past incidents \(last 14 days\)[\s\S]*Search slow/);
      expect(html).toMatch(/Checkout<\/h3><span class="state state-major_outage">Major outage/);
      expect(html).toMatch(/role="img" aria-label="Checkout: [^"]*over the last 90 days/);
    });

    test('the HTML says since when each incident runs, not only when its updates were posted', async () => {
      // A team's first checkpoint may come long after the outage began; the page then dated the
      // incident only by its updates (and the "Outage detected at" notice goes once it is explained).
      const { incidents } = (await t.request('GET', '/status/incidents/incidents.json')).json();
      const html = (await t.request('GET', '/status/incidents')).body;
      for (const id of [ids.major, ids.resolved]) {
        const incident = incidents.find((i: any) => i.id === String(id));
        const started = `Started <time datetime="${incident.created_at}">${incident.created_at.slice(0, 16).replace('T', ' ')} UTC</time>`;
        const article = html.slice(html.indexOf(`id="incident-${id}"`));
        expect(article.slice(0, article.indexOf('</p>'))).toContain(started);
      }
    });

    test('privacy: no comment, hidden value, URL, detection reason or other incident in any body', async () => {
      const bodies = await publicBodies(t, 'incidents');
      for (const [path, body] of Object.entries(bodies)) {
        for (const secret of [...Object.values(SECRETS), 'example.com/health', 'user:pw', 'x-api-key']) {
          if (body.includes(secret)) throw new Error(`${path} shows "${secret}"`);
        }
      }
    });
  });

  describe('maintenance windows on the page', () => {
    test('in progress and starting within 7 days are listed; later, cancelled, ended or off-page ones are not', async () => {
      const team = await statusTeam(t, 2, 'Maintenance');
      await createPage(t, team.teamId, { slug: 'maintenance', title: 'Maintenance', components: [{ endpoint_id: team.endpoints[0], name: 'Web' }] });
      const now = Date.now();
      const schedule = async (body: Record<string, unknown>) => {
        const response = await t.admin('POST', `/api/v2/teams/${team.teamId}/maintenance-windows`, body);
        expect(response.statusCode).toBe(201);
        return response.json().data.id as number;
      };
      const soon = await schedule({ project_id: team.projectId, starts_at: iso(now + 2 * DAY), ends_at: iso(now + 2 * DAY + HOUR), reason: 'Project upgrade' });
      const teamWide = await schedule({ starts_at: iso(now + 6 * DAY), ends_at: iso(now + 6 * DAY + HOUR) });
      await schedule({ endpoint_id: team.endpoints[0], starts_at: iso(now + 8 * DAY), ends_at: iso(now + 8 * DAY + HOUR), reason: 'Too far' });
      await schedule({ endpoint_id: team.endpoints[1], starts_at: iso(now + DAY), ends_at: iso(now + DAY + HOUR), reason: 'Off page' });
      const cancelled = await schedule({ endpoint_id: team.endpoints[0], starts_at: iso(now + DAY), ends_at: iso(now + DAY + HOUR), reason: 'Cancelled' });
      expect((await t.admin('DELETE', `/api/v2/teams/${team.teamId}/maintenance-windows/${cancelled}`)).statusCode).toBe(204);
      const summary = await summaryOf('maintenance');
      expect(summary.scheduled_maintenances).toEqual([
        { id: String(soon), name: 'Project upgrade', status: 'scheduled', scheduled_for: iso(now + 2 * DAY), scheduled_until: iso(now + 2 * DAY + HOUR), components: [summary.components[0]], incident_updates: [] },
        { id: String(teamWide), name: 'Scheduled maintenance', status: 'scheduled', scheduled_for: iso(now + 6 * DAY), scheduled_until: iso(now + 6 * DAY + HOUR), components: [summary.components[0]], incident_updates: [] },
      ]);
      expect(summary.components[0].status).toBe('operational');
      const html = (await t.request('GET', '/status/maintenance')).body;
      expect(html).toContain('Project upgrade');
      expect(html).not.toContain('Too far');
    });

    test('an incident listed as active raises the indicator to its impact though its component is under maintenance; one not listed does not', async () => {
      const team = await statusTeam(t, 2, 'Planned work beside an incident');
      await createPage(t, team.teamId, { slug: 'maintenance-incident', title: 'Gateway', components: [{ endpoint_id: team.endpoints[0], name: 'Gateway' }, { endpoint_id: team.endpoints[1], name: 'Search' }] });
      // Opened before the window began, as an outage that planned work then came to fix.
      const outage = await openIncident(t, team, { endpoint_ids: [team.endpoints[0]], severity: 'critical', title: 'Gateway is unavailable' });
      const slow = await openIncident(t, team, { endpoint_ids: [team.endpoints[1]], severity: 'warning', title: 'Search is slow' });
      const now = Date.now();
      for (const endpoint_id of team.endpoints) {
        expect((await t.admin('POST', `/api/v2/teams/${team.teamId}/maintenance-windows`, { endpoint_id, starts_at: iso(now - HOUR), ends_at: iso(now + HOUR), reason: 'Gateway repair' })).statusCode).toBe(201);
      }
      let summary = await summaryOf('maintenance-incident');
      // Neither incident is published: the page lists none, and all is well by its components.
      expect(statuses(summary)).toEqual({ Gateway: 'under_maintenance', Search: 'under_maintenance' });
      expect(summary.incidents).toEqual([]);
      expect(summary.status).toEqual({ indicator: 'none', description: 'All Systems Operational' });

      await addCheckpoint(t, team, slow.id, { title: 'Looking', body: 'Search answers slowly.', status_label: 'investigating' });
      summary = await summaryOf('maintenance-incident');
      expect(summary.incidents.map((i: any) => [i.name, i.impact])).toEqual([['Search is slow', 'minor']]);
      expect(summary.status).toEqual({ indicator: 'minor', description: 'Degraded Performance' });

      await addCheckpoint(t, team, outage.id, { title: 'Down', body: 'The gateway does not answer.', status_label: 'identified' });
      summary = await summaryOf('maintenance-incident');
      expect(statuses(summary)).toEqual({ Gateway: 'under_maintenance', Search: 'under_maintenance' });
      expect(summary.incidents.map((i: any) => [i.name, i.impact])).toEqual([['Search is slow', 'minor'], ['Gateway is unavailable', 'major']]);
      expect(summary.status).toEqual({ indicator: 'major', description: 'Partial System Outage' });
      const html = (await t.request('GET', '/status/maintenance-incident')).body;
      expect(html).toContain('<p class="overall indicator-major">Partial System Outage</p>');
      expect(html).not.toContain('All Systems Operational');

      await resolveIncident(t, team, outage.id);
      await resolveIncident(t, team, slow.id);
      summary = await summaryOf('maintenance-incident');
      expect(summary.incidents).toEqual([]);
      expect(summary.status.indicator).toBe('none');
    });
  });

  describe('dependencies and planned work', () => {
    /**
     * Failing during maintenance, as alerting records it on the parent's alerts stream when the
     * checks its window hid fail by its rule (driving it through real probes is the e2e test's).
     * Returns once the alerting view has it.
     */
    const maintenanceEvent = async (team: StatusTeam, endpointId: number, type: string, extra: Record<string, unknown> = {}) => {
      const data = { endpoint_id: endpointId, team_id: team.teamId, project_id: team.projectId, check_id: 0, at: new Date().toISOString(), ...extra };
      const append = await t.platform.events.append(alertsStream(endpointId), [{ type, data }], { expectedRevision: 'any' });
      await t.platform.freshness.waitFor(append.position, ['alerting']);
    };
    const suppressedInMaintenance = async (team: StatusTeam, endpointId: number) =>
      (await t.request('GET', `/api/public/v2/endpoints/${endpointId}/alert-status`, { token: team.token })).json().data.suppressed_by_maintenance;

    test('a dependent is under maintenance while planned work on its parent fails, as its alert status says; the parent’s window lists it, also on a page without the parent', async () => {
      const team = await statusTeam(t, 3, 'Planned gateway work');
      const [gateway, api] = team.endpoints;
      // A parent suppresses only while probed (enabled); once a day, so no probe of this test's own lands meanwhile.
      await markVerified(t, team.teamId, gateway);
      expect((await t.admin('PATCH', `/api/v2/teams/${team.teamId}/endpoints/${gateway}`, { enabled: true, interval_seconds: 86_400 })).statusCode).toBe(200);
      expect((await t.admin('PATCH', `/api/v2/teams/${team.teamId}/endpoints/${api}`, { depends_on: [gateway] })).statusCode).toBe(200);
      await createPage(t, team.teamId, { slug: 'planned-all', title: 'All', components: team.endpoints.map((endpoint_id, i) => ({ endpoint_id, name: ['Gateway', 'API', 'Search'][i] })) });
      await createPage(t, team.teamId, { slug: 'planned-api', title: 'API only', components: [{ endpoint_id: api, name: 'API' }] });
      const now = Date.now();
      const window = await t.admin('POST', `/api/v2/teams/${team.teamId}/maintenance-windows`, { endpoint_id: gateway, starts_at: iso(now - HOUR), ends_at: iso(now + HOUR), reason: 'Gateway upgrade' });
      expect(window.statusCode).toBe(201);
      const listed = (summary: any) => summary.scheduled_maintenances.map((m: any) => [m.name, m.status, m.components.map((c: any) => c.name)]);

      // Planned work that does not fail explains nothing: the dependent is its own.
      let all = await summaryOf('planned-all');
      expect(statuses(all)).toEqual({ Gateway: 'under_maintenance', API: 'operational', Search: 'operational' });
      expect(listed(all)).toEqual([['Gateway upgrade', 'in_progress', ['Gateway']]]);
      expect(statuses(await summaryOf('planned-api'))).toEqual({ API: 'operational' });

      await maintenanceEvent(team, gateway, ALERT_MAINTENANCE_FAILURE_STARTED);
      expect(await suppressedInMaintenance(team, api)).toEqual([gateway]);
      all = await eventually(() => summaryOf('planned-all'), (s) => statuses(s).API !== 'operational');
      expect(statuses(all)).toEqual({ Gateway: 'under_maintenance', API: 'under_maintenance', Search: 'operational' });
      expect(listed(all)).toEqual([['Gateway upgrade', 'in_progress', ['Gateway', 'API']]]);
      expect(all.status).toEqual({ indicator: 'none', description: 'All Systems Operational' });
      const alone = await eventually(() => summaryOf('planned-api'), (s) => statuses(s).API !== 'operational');
      expect(statuses(alone)).toEqual({ API: 'under_maintenance' });
      expect(listed(alone)).toEqual([['Gateway upgrade', 'in_progress', ['API']]]);
      const html = await eventually(async () => (await t.request('GET', '/status/planned-api')).body, (body) => body.includes('Gateway upgrade'));
      expect(html).toContain('<h3>API</h3><span class="state state-under_maintenance">Under maintenance</span>');
      expect(html).not.toContain('Gateway</');

      // The planned work stops failing: the dependent is its own again.
      await maintenanceEvent(team, gateway, ALERT_MAINTENANCE_FAILURE_ENDED, { ended_by: 'recovered' });
      expect(await suppressedInMaintenance(team, api)).toEqual([]);
      all = await eventually(() => summaryOf('planned-all'), (s) => statuses(s).API !== 'under_maintenance');
      expect(statuses(all)).toEqual({ Gateway: 'under_maintenance', API: 'operational', Search: 'operational' });
      expect(listed(all)).toEqual([['Gateway upgrade', 'in_progress', ['Gateway']]]);
      const after = await eventually(() => summaryOf('planned-api'), (s) => statuses(s).API !== 'under_maintenance');
      expect(listed(after)).toEqual([]);
    });
  });

  describe('daily uptime from the analytics rollups', () => {
    test('each day of history_days is one labelled cell; days without checks say so', async () => {
      const team = await statusTeam(t, 1, 'Uptime');
      await createPage(t, team.teamId, { slug: 'uptime', title: 'Uptime', history_days: 7, components: [{ endpoint_id: team.endpoints[0], name: 'API' }] });
      const yesterday = new Date(Math.floor(Date.now() / DAY) * DAY - DAY + HOUR);
      const checks = Array.from({ length: 4 }, (_, i) => ({ checked_at: iso(yesterday.getTime() + i * 60_000), success: i !== 0, status_code: i !== 0 ? 200 : 500, latency_ms: 100 }));
      const imported = await t.admin('POST', `/api/v2/teams/${team.teamId}/endpoints/${team.endpoints[0]}/checks/import`, { checks });
      expect(imported.statusCode).toBe(201);
      // The import answers once the views that show its checks have them (the rollups among them).
      await t.platform.freshness.waitFor((await t.platform.events.headPosition())!, ['analytics_rollups']);
      const html = (await t.request('GET', '/status/uptime')).body;
      const cells = [...html.matchAll(/<span class="day (d-[a-z]+)" title="([^"]+)"><\/span>/g)].map((m) => [m[1], m[2]]);
      expect(cells).toHaveLength(7);
      expect(cells[5]).toEqual(['d-bad', `${iso(yesterday.getTime()).slice(0, 10)}: 75 %`]);
      expect(cells.filter((_, i) => i !== 5).every(([cls, label]) => cls === 'd-none' && label.endsWith('no data'))).toBe(true);
      expect(html).toContain('aria-label="API: 75.00 % uptime over the last 7 days; lowest 75 % on');
    });
  });

  describe('caching: ETag, 304 and Cache-Control', () => {
    test('every route answers an ETag and public caching of at most 30 s; If-None-Match gives 304; a change gives a new tag', async () => {
      const team = await statusTeam(t, 1, 'Cache');
      await createPage(t, team.teamId, { slug: 'cache', title: 'Cache', components: [{ endpoint_id: team.endpoints[0] }] });
      for (const path of ['', '/summary.json', '/incidents.json', '/feed.atom', '/feed.rss']) {
        const first = await t.request('GET', `/status/cache${path}`);
        const etag = String(first.headers.etag);
        expect(etag).toMatch(/^"[^"]+"$/);
        const cacheControl = String(first.headers['cache-control']);
        expect(cacheControl).toMatch(/^public, max-age=\d+$/);
        expect(Number(/max-age=(\d+)/.exec(cacheControl)![1])).toBeLessThanOrEqual(30);
        const again = await t.request('GET', `/status/cache${path}`, { headers: { 'if-none-match': etag } });
        expect(again.statusCode).toBe(304);
        expect(again.body).toBe('');
        expect(again.headers.etag).toBe(etag);
        expect((await t.request('GET', `/status/cache${path}`, { headers: { 'if-none-match': `"other", W/${etag}` } })).statusCode).toBe(304);
        expect((await t.request('GET', `/status/cache${path}`, { headers: { 'if-none-match': '"stale"' } })).statusCode).toBe(200);
      }
      const before = (await t.request('GET', '/status/cache/summary.json')).headers.etag;
      const incident = await openIncident(t, team, { endpoint_ids: [team.endpoints[0]], severity: 'warning', title: 'Change' });
      await addCheckpoint(t, team, incident.id, { title: 'Now visible' });
      const after = await t.request('GET', '/status/cache/summary.json', { headers: { 'if-none-match': String(before) } });
      expect(after.statusCode).toBe(200);
      expect(after.headers.etag).not.toBe(before);
      expect(after.json().incidents[0].incident_updates[0].title).toBe('Now visible');
      // A private comment changes nothing the public sees: the tag stays.
      const tag = String(after.headers.etag);
      await t.request('POST', `${INCIDENTS}/${incident.id}/comments`, { token: team.token, body: { body: 'internal' } });
      expect((await t.request('GET', '/status/cache/summary.json', { headers: { 'if-none-match': tag } })).statusCode).toBe(304);
    });

    test('HEAD answers the headers of GET without a body', async () => {
      const team = await statusTeam(t, 0, 'Head');
      await createPage(t, team.teamId, { slug: 'head', title: 'Head', components: [] });
      const get = await t.request('GET', '/status/head');
      const head = await t.request('HEAD', '/status/head');
      expect(head.statusCode).toBe(200);
      expect(head.body).toBe('');
      expect(head.headers.etag).toBe(get.headers.etag);
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
    });

    test('a cached page follows the clock: a maintenance window starting shows without any write', async () => {
      const team = await statusTeam(t, 1, 'Clock');
      await createPage(t, team.teamId, { slug: 'clock', title: 'Clock', components: [{ endpoint_id: team.endpoints[0], name: 'Web' }] });
      // Far enough ahead for the reads before it on a loaded machine; the wait below is on the clock.
      const startsAt = Date.now() + 4000;
      await t.admin('POST', `/api/v2/teams/${team.teamId}/maintenance-windows`, { endpoint_id: team.endpoints[0], starts_at: iso(startsAt), ends_at: iso(startsAt + HOUR) });
      const before = await summaryOf('clock');
      expect(before.components[0].status).toBe('operational');
      expect(before.scheduled_maintenances[0].status).toBe('scheduled');
      expect((await summaryOf('clock')).components[0].status).toBe('operational');
      await new Promise((resolve) => setTimeout(resolve, startsAt + 50 - Date.now()));
      const during = await summaryOf('clock');
      expect(during.components[0].status).toBe('under_maintenance');
      expect(during.scheduled_maintenances[0].status).toBe('in_progress');
    });

    test('a representation rendered while the page model lags an alert state catches up within the lag, not at the next write', async () => {
      const team = await statusTeam(t, 1, 'Layers');
      const web = team.endpoints[0];
      const page = await createPage(t, team.teamId, { slug: 'layers', title: 'Layers', components: [{ endpoint_id: web, name: 'Web' }] });
      // An automatic incident held open by flapping: triggering again changes the alert state only.
      await recordSignalEvent(t, team, web, ALERT_SIGNAL_TRIGGERED, { signal: 'availability' });
      await eventually(async () => (await t.request('GET', `${INCIDENTS}?endpoint_id=${web}`, { token: team.token })).json().data.length, (n) => n === 1);
      await recordSignalEvent(t, team, web, ALERT_SIGNAL_FLAPPING_STARTED, { signal: 'availability', changes: 3, window_seconds: 3600 });
      for (let attempt = 1; ; attempt++) {
        await recordSignalEvent(t, team, web, ALERT_SIGNAL_RECOVERED, { signal: 'availability', flapping: true });
        await eventually(() => summaryOf('layers'), (s) => statuses(s).Web === 'degraded_performance');
        // A write the page reads without lag: every representation and the model load again.
        await t.admin('PATCH', pagesPath(team.teamId, page.id), { title: `Layers ${attempt}` });
        const modelLoaded = Date.now();
        expect((await t.request('GET', '/status/layers/feed.atom')).statusCode).toBe(200);
        await recordSignalEvent(t, team, web, ALERT_SIGNAL_TRIGGERED, { signal: 'availability', flapping: true });
        // summary.json is rendered now, from the model loaded before the trigger (within its lag: allowed)...
        expect((await summaryOf('layers')).page.name).toBe(`Layers ${attempt}`);
        if (Date.now() - modelLoaded < BUSY_VIEW_LAG_MS) break;
        // Too slow a machine to have read the model within its lag: again.
        if (attempt === 5) throw new Error('five attempts, none read summary.json within the lag of its model');
      }
      // ...but once the lag has passed it shows the outage, with no further write.
      const summary = await eventually(() => summaryOf('layers'), (s) => statuses(s).Web === 'major_outage');
      expect(statuses(summary).Web).toBe('major_outage');
    });

    test('a page renamed in the application API shows the new title at once', async () => {
      const team = await statusTeam(t, 1, 'Rename');
      const page = await createPage(t, team.teamId, { slug: 'rename', title: 'Old name', components: [] });
      expect((await summaryOf('rename')).page.name).toBe('Old name');
      await t.admin('PATCH', pagesPath(team.teamId, page.id), { title: 'New name' });
      expect((await summaryOf('rename')).page.name).toBe('New name');
      expect((await t.request('GET', '/status/rename')).body).toContain('<h1>New name</h1>');
    });
  });

  describe('a reopened incident and a flapping endpoint', () => {
    let team: StatusTeam;
    beforeAll(async () => {
      team = await statusTeam(t, 2, 'Lifecycle');
      await createPage(t, team.teamId, { slug: 'lifecycle', title: 'Lifecycle', publish_automatic_incidents: true, components: [{ endpoint_id: team.endpoints[0], name: 'Checkout' }, { endpoint_id: team.endpoints[1], name: 'Search' }] });
      await createPage(t, team.teamId, { slug: 'lifecycle-quiet', title: 'Quiet', components: [{ endpoint_id: team.endpoints[1], name: 'Search' }] });
    });

    test('a reopening is an update with a feed entry of its own, and a resolution after it is a new entry too', async () => {
      const incident = await openIncident(t, team, { endpoint_ids: [team.endpoints[0]], severity: 'critical', title: 'Checkout failing' });
      await addCheckpoint(t, team, incident.id, { title: 'Fixed', body: 'A fix is out.', status_label: 'monitoring' });
      await resolveIncident(t, team, incident.id);
      const reopen = await t.request('PATCH', `${INCIDENTS}/${incident.id}/status`, { token: team.token, body: { resolved: false } });
      expect(reopen.statusCode).toBe(200);
      const reopenedAt = reopen.json().data.updated_at;
      const listed = async () => (await t.request('GET', '/status/lifecycle/incidents.json')).json().incidents.find((i: any) => i.id === String(incident.id));
      let shown = await listed();
      expect(shown.incident_updates.map((u: any) => [u.id, u.status, u.title])).toEqual([
        [`reopened-${incident.id}-1`, 'investigating', 'Reopened'],
        [`resolved-${incident.id}`, 'resolved', 'Resolved'],
        [expect.any(String), 'monitoring', 'Fixed'],
      ]);
      expect(shown.incident_updates[0].created_at).toBe(reopenedAt);
      expect(shown.status).toBe('investigating');
      expect(shown.updated_at).toBe(reopenedAt);
      const summary = await summaryOf('lifecycle');
      expect(summary.incidents.map((i: any) => i.id)).toContain(String(incident.id));
      expect(statuses(summary).Checkout).toBe('major_outage');
      const feedId = (update: string) => `${BASE}/status/lifecycle#incident-${incident.id}-update-${update}`;
      expect((await t.request('GET', '/status/lifecycle/feed.atom')).body).toContain(`<id>${feedId(`reopened-${incident.id}-1`)}</id>`);
      expect((await t.request('GET', '/status/lifecycle')).body).toMatch(/<strong class="label">Reopened<\/strong>\s*<\/p><p class="body">This incident has been reopened\.<\/p>/);

      await resolveIncident(t, team, incident.id);
      shown = await listed();
      expect(shown.incident_updates.map((u: any) => u.id).slice(0, 3)).toEqual([`resolved-${incident.id}-2`, `reopened-${incident.id}-1`, `resolved-${incident.id}`]);
      const rss = (await t.request('GET', '/status/lifecycle/feed.rss')).body;
      for (const update of [`resolved-${incident.id}-2`, `reopened-${incident.id}-1`, `resolved-${incident.id}`]) expect(rss).toContain(`${feedId(update)}</guid>`);
    });

    test('an automatic incident held open only because its endpoint flaps: degraded and "monitoring"; triggered again, a major outage', async () => {
      const search = team.endpoints[1];
      await recordSignalEvent(t, team, search, ALERT_SIGNAL_TRIGGERED, { signal: 'availability' });
      let summary = await eventually(() => summaryOf('lifecycle'), (s) => s.incidents.some((i: any) => i.components.some((c: any) => c.name === 'Search')));
      const incidentId = summary.incidents.find((i: any) => i.components.some((c: any) => c.name === 'Search')).id;
      expect(statuses(summary).Search).toBe('major_outage');
      await recordSignalEvent(t, team, search, ALERT_SIGNAL_FLAPPING_STARTED, { signal: 'availability', changes: 3, window_seconds: 3600 });
      const recoveredAt = await recordSignalEvent(t, team, search, ALERT_SIGNAL_RECOVERED, { signal: 'availability', flapping: true });
      // The incident stays open (the flapping rule): the page says it recovered and is watched.
      summary = await eventually(() => summaryOf('lifecycle'), (s) => statuses(s).Search !== 'major_outage');
      expect(statuses(summary).Search).toBe('degraded_performance');
      expect(summary.status.indicator).toBe('minor');
      const incident = summary.incidents.find((i: any) => i.id === incidentId);
      expect(incident.status).toBe('monitoring');
      expect(incident.incident_updates[0]).toMatchObject({ id: `recovered-${incidentId}-${Date.parse(recoveredAt)}`, status: 'monitoring', title: 'Recovered, monitoring', created_at: recoveredAt });
      expect((await t.request('GET', '/status/lifecycle/feed.atom')).body).toContain(`<id>${BASE}/status/lifecycle#incident-${incidentId}-update-recovered-${incidentId}-${Date.parse(recoveredAt)}</id>`);
      // The HTML also reads the busy alert states (within their lag).
      const html = await eventually(async () => (await t.request('GET', '/status/lifecycle')).body, (body) => body.includes('<h3>Search</h3><span class="state state-degraded_performance">'));
      expect(html).toContain('<h3>Search</h3><span class="state state-degraded_performance">Degraded performance</span>');
      expect(html).toMatch(/<strong class="label">Monitoring<\/strong> <span class="update-title">Recovered, monitoring<\/span><\/p><p class="body">The service has recovered\./);
      // A page that does not publish automatic incidents says so in its notice.
      const quiet = await summaryOf('lifecycle-quiet');
      expect(statuses(quiet).Search).toBe('degraded_performance');
      const quietHtml = await eventually(async () => (await t.request('GET', '/status/lifecycle-quiet')).body, (body) => body.includes('Recovered at'));
      expect(quietHtml).toContain(`Recovered at ${recoveredAt.slice(11, 16)} UTC; monitoring, as it has been unstable.`);
      expect((await t.request('GET', '/status/lifecycle-quiet/feed.atom')).body).toContain('Search: recovered, monitoring');

      await recordSignalEvent(t, team, search, ALERT_SIGNAL_TRIGGERED, { signal: 'availability', flapping: true });
      summary = await eventually(() => summaryOf('lifecycle'), (s) => statuses(s).Search === 'major_outage');
      expect(summary.incidents.find((i: any) => i.id === incidentId).status).toBe('investigating');
    });
  });

  describe('unknown slugs', () => {
    test('the page is an HTML 404; JSON and feeds are problem details', async () => {
      const html = await t.request('GET', '/status/no-such-page');
      expect(html.statusCode).toBe(404);
      expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(html.body).toContain('Status page not found');
      for (const path of ['/summary.json', '/incidents.json', '/feed.atom', '/feed.rss']) {
        for (const slug of ['no-such-page', 'Not-A-Slug']) {
          const response = await t.request('GET', `/status/${slug}${path}`);
          expect(response.statusCode).toBe(404);
          expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
          expect(response.json()).toMatchObject({ status: 404, code: 'not_found', request_id: expect.any(String) });
        }
      }
      expect((await t.request('GET', '/status/no-such-page/other.json')).statusCode).toBe(404);
    });
  });
});

describe('status pages: rate limit per client address', () => {
  const world = startedBeforeAll(async () => ({ t: await startTestApp({ STATUS_PAGE_RATE_LIMIT_PER_MINUTE: '3' }) }), (w) => w.t.close());

  test('past the limit an address gets 429 with Retry-After on every public route; another address is not affected', async () => {
    const { t } = world;
    const team = await statusTeam(t, 0, 'Limited');
    await createPage(t, team.teamId, { slug: 'limited', title: 'Limited', components: [] });
    const from = (address: string, path = '') => t.app.inject({ method: 'GET', url: `/status/limited${path}`, remoteAddress: address });
    for (let i = 0; i < 3; i++) expect((await from('203.0.113.7')).statusCode).toBe(200);
    for (const path of ['', '/summary.json', '/incidents.json', '/feed.atom', '/feed.rss']) {
      const refused = await from('203.0.113.7', path);
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    }
    // Unknown slugs count too (no free probing for pages).
    expect((await t.app.inject({ method: 'GET', url: '/status/no-such/summary.json', remoteAddress: '203.0.113.7' })).statusCode).toBe(429);
    expect((await from('198.51.100.2')).statusCode).toBe(200);
    // The application API is not limited by it.
    for (let i = 0; i < 5; i++) expect((await t.admin('GET', pagesPath(team.teamId))).statusCode).toBe(200);
  });
});
