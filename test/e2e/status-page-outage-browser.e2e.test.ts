/**
 * A status page never contradicts itself: while a component is down and no incident about it is
 * published, the page says so under the component ("Outage detected at 09:13 UTC;
 * investigating.") in the HTML and the feeds; a page that publishes automatic incidents shows the
 * automatic incident at once with a generated first update. Read in Chromium (no JavaScript), as
 * a person would, and through summary.json and the feeds.
 */
import { browserTest, type Chromium, CHROMIUM, launchChromium, NO_CHROMIUM } from '../support/chromium.js';
import { addCheckpoint, createPage, pagesPath, resolveIncident, statusTeam, triggerSignal, type StatusTeam } from '../support/status-page-fixtures.js';
import { startListeningTestApp, type TestApp } from '../support/test-app.js';
import { eventually } from './support.js';


const DETECTED = /^Outage detected at \d\d:\d\d UTC; investigating\.$/;

describe('a status page during an outage nobody has written about yet', () => {
  let t: TestApp & { port: number };
  let base: string;
  let chromium: Chromium | null = null;
  let team: StatusTeam;

  /** The page's text as Chromium renders it, and the text of one component's card. */
  const read = async (slug: string, componentId: number) => {
    const page = await chromium!.browser.newPage();
    try {
      await page.setJavaScriptEnabled(false);
      const response = await page.goto(`${base}/status/${slug}`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      // Evaluated in the page (strings: the test's TypeScript has no DOM types).
      const text = (await page.evaluate('document.body.innerText')) as string;
      const component = (await page.evaluate(`document.getElementById('component-${componentId}').innerText`)) as string;
      const headings = (await page.evaluate(`[...document.querySelectorAll('h2:not(.skip), h3')].map((h) => h.textContent)`)) as string[];
      return { text, component, headings };
    } finally {
      await page.close();
    }
  };

  beforeAll(async () => {
    t = await startListeningTestApp();
    base = `http://127.0.0.1:${t.port}`;
    team = await statusTeam(t, 2, 'Outage');
    const components = [
      { endpoint_id: team.endpoints[0], name: 'Checkout API' },
      { endpoint_id: team.endpoints[1], name: 'Search' },
    ];
    const quiet = await createPage(t, team.teamId, { slug: 'quiet', title: 'Quiet Co', components });
    expect(quiet.publish_automatic_incidents).toBe(false);
    const open = await createPage(t, team.teamId, { slug: 'open', title: 'Open Co', components, publish_automatic_incidents: true });
    expect(open.publish_automatic_incidents).toBe(true);
    // The availability signal triggers: the service opens an automatic incident, with no checkpoint.
    await triggerSignal(t, team, team.endpoints[0], 'availability');
    await eventually('the automatic incident on the publishing page', async () => (await t.request('GET', '/status/open/summary.json')).json().incidents.length === 1);
    chromium = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  browserTest(`says under the down component that an outage was detected and is being investigated${CHROMIUM ? '' : NO_CHROMIUM}`, async () => {
    const { text, component, headings } = await read('quiet', team.endpoints[0]);
    expect(text).toContain('Partial System Outage');
    expect(component).toContain('Major outage');
    const notice = component.split('\n').find((line) => line.startsWith('Outage detected'));
    expect(notice).toMatch(DETECTED);
    // The operational component says nothing of the kind; no incident is listed (none was published).
    expect((await read('quiet', team.endpoints[1])).component).not.toContain('detected');
    expect(headings).not.toContain('Active incidents');
  }, 60_000);

  it('says it in the feeds too, while summary.json shows the component down and no incident', async () => {
    const summary = (await t.request('GET', '/status/quiet/summary.json')).json();
    expect(summary.status.indicator).toBe('major');
    expect(summary.components.map((c: { status: string }) => c.status)).toEqual(['major_outage', 'operational']);
    expect(summary.incidents).toEqual([]);
    for (const feed of ['feed.atom', 'feed.rss']) {
      const body = (await t.request('GET', `/status/quiet/${feed}`)).body;
      expect(body).toContain('Checkout API: outage detected');
      expect(body).toMatch(/Outage detected at \d\d:\d\d UTC; investigating\./);
    }
  });

  browserTest(`a page publishing automatic incidents shows the incident at once with a generated first update${CHROMIUM ? '' : NO_CHROMIUM}`, async () => {
    const { component, headings, text } = await read('open', team.endpoints[0]);
    expect(headings).toEqual(expect.arrayContaining(['Active incidents', 'Endpoint 1 is unavailable']));
    expect(text).toContain('Detected automatically');
    expect(text).toMatch(/Outage detected at \d\d:\d\d UTC; investigating\./);
    // Explained by the incident: no separate notice under the component.
    expect(component).toContain('Major outage');
    expect(component).not.toContain('Outage detected');
  }, 60_000);

  it('a page publishing automatic incidents lists them in summary.json with the generated update, and the setting can be changed', async () => {
    const summary = (await t.request('GET', '/status/open/summary.json')).json();
    expect(summary.incidents).toHaveLength(1);
    expect(summary.incidents[0]).toMatchObject({ name: 'Endpoint 1 is unavailable', status: 'investigating', impact: 'major' });
    expect(summary.incidents[0].incident_updates).toEqual([
      expect.objectContaining({ status: 'investigating', title: 'Detected automatically', body: expect.stringMatching(DETECTED) }),
    ]);
    const pages = (await t.admin('GET', pagesPath(team.teamId))).json().data as Array<{ id: number; slug: string }>;
    const open = pages.find((p) => p.slug === 'open')!;
    const updated = await t.admin('PATCH', pagesPath(team.teamId, open.id), { publish_automatic_incidents: false });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data.publish_automatic_incidents).toBe(false);
    const after = (await t.request('GET', '/status/open/summary.json')).json();
    expect(after.incidents).toEqual([]);
  });

  browserTest(`once resolved, the incident is history: since when, until when, and its updates newest first${CHROMIUM ? '' : NO_CHROMIUM}`, async () => {
    const incident = (await t.request('GET', '/api/public/v2/incidents', { token: team.token })).json().data[0];
    await addCheckpoint(t, team, incident.id, { title: 'Database failover', body: 'Failing over to the replica.', status_label: 'Identified' });
    await resolveIncident(t, team, incident.id);
    const resolved = (await t.request('GET', `/api/public/v2/incidents/${incident.id}`, { token: team.token })).json().data;
    const page = await chromium!.browser.newPage();
    try {
      await page.setJavaScriptEnabled(false);
      // The first test read this page seconds ago, and its answer may be reused for 10 s
      // (Cache-Control: max-age=10): read it as a new visitor would.
      await page.setCacheEnabled(false);
      await page.goto(`${base}/status/quiet`, { waitUntil: 'load' });
      const headings = (await page.evaluate(`[...document.querySelectorAll('h2:not(.skip)')].map((h) => h.textContent)`)) as string[];
      expect(headings).not.toContain('Active incidents');
      const article = (await page.evaluate(`document.getElementById('incident-${incident.id}').innerText`)) as string;
      const minute = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;
      // The API's times, as the page writes them (UTC, to the minute).
      expect(article).toContain(`Started ${minute(resolved.created_at)}`);
      expect(article).toContain(`Resolved ${minute(resolved.resolved_at)}`);
      const lines = article.split('\n').map((line) => line.trim()).filter(Boolean);
      const order = ['This incident has been resolved.', 'Failing over to the replica.'].map((text) => lines.indexOf(text));
      expect(order[0]).toBeGreaterThan(-1);
      expect(order[1]).toBeGreaterThan(order[0]);
      const pastHeading = headings.find((h) => h.startsWith('Past incidents'));
      expect(pastHeading).toBeDefined();
    } finally {
      await page.close();
    }
  }, 60_000);
});
