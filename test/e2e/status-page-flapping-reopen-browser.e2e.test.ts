/**
 * What a status page says, read in Chromium (no JavaScript) as a person would, about an outage
 * whose incident stays open only because the endpoint flaps (the component is degraded and the
 * incident says it recovered and is watched), and about an incident that was resolved, then
 * reopened (both stay on the page, newest first).
 */
import { ALERT_SIGNAL_FLAPPING_STARTED, ALERT_SIGNAL_RECOVERED, ALERT_SIGNAL_TRIGGERED } from '../../src/alerting/domain/endpoint-alerts.js';
import { browserTest, type Chromium, CHROMIUM, launchChromium, NO_CHROMIUM } from '../support/chromium.js';
import { addCheckpoint, createPage, INCIDENTS, openIncident, recordSignalEvent, resolveIncident, statusTeam, type StatusTeam } from '../support/status-page-fixtures.js';
import { startListeningTestApp, type TestApp } from '../support/test-app.js';
import { eventually } from './support.js';

describe('a status page about a flapping endpoint and a reopened incident', () => {
  let t: TestApp & { port: number };
  let base: string;
  let chromium: Chromium | null = null;
  let team: StatusTeam;

  /** The page's text as Chromium renders it, read as a new visitor would (no HTTP cache). */
  const read = async (slug: string, elementId: string) => {
    const page = await chromium!.browser.newPage();
    try {
      await page.setJavaScriptEnabled(false);
      await page.setCacheEnabled(false);
      const response = await page.goto(`${base}/status/${slug}`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);
      // Evaluated in the page (strings: the test's TypeScript has no DOM types).
      return (await page.evaluate(`document.getElementById(${JSON.stringify(elementId)}).innerText`)) as string;
    } finally {
      await page.close();
    }
  };
  const linesOf = (text: string) => text.split('\n').map((line) => line.trim()).filter(Boolean);
  /** The HTML also reads the busy alert states (within their lag): waits until it shows `text`. */
  const htmlShows = (slug: string, text: string) => eventually(`/status/${slug} to show ${text}`, async () => (await t.request('GET', `/status/${slug}`)).body.includes(text));

  beforeAll(async () => {
    t = await startListeningTestApp();
    base = `http://127.0.0.1:${t.port}`;
    team = await statusTeam(t, 2, 'Flaky');
    const components = [
      { endpoint_id: team.endpoints[0], name: 'Checkout API' },
      { endpoint_id: team.endpoints[1], name: 'Search' },
    ];
    await createPage(t, team.teamId, { slug: 'quiet', title: 'Quiet Co', components });
    await createPage(t, team.teamId, { slug: 'open', title: 'Open Co', components, publish_automatic_incidents: true });
    chromium = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  browserTest(`held open only by flapping: degraded, "Recovered, monitoring" above the detection; down again: major outage${CHROMIUM ? '' : NO_CHROMIUM}`, async () => {
    const checkout = team.endpoints[0];
    await recordSignalEvent(t, team, checkout, ALERT_SIGNAL_TRIGGERED, { signal: 'availability' });
    await eventually('the automatic incident', async () => (await t.request('GET', '/status/open/summary.json')).json().incidents.length === 1);
    const incidentId = (await t.request('GET', '/status/open/summary.json')).json().incidents[0].id;
    await recordSignalEvent(t, team, checkout, ALERT_SIGNAL_FLAPPING_STARTED, { signal: 'availability', changes: 3, window_seconds: 3600 });
    const recoveredAt = await recordSignalEvent(t, team, checkout, ALERT_SIGNAL_RECOVERED, { signal: 'availability', flapping: true });
    await htmlShows('open', 'Recovered, monitoring');

    const component = linesOf(await read('open', `component-${checkout}`));
    expect(component).toContain('Degraded performance');
    const article = linesOf(await read('open', `incident-${incidentId}`));
    // Each update's head: its label, then its title.
    const recovered = article.indexOf('Monitoring Recovered, monitoring');
    expect(recovered).toBeGreaterThan(-1);
    expect(article.indexOf('Investigating Detected automatically')).toBeGreaterThan(recovered);
    expect(article).toContain('The service has recovered. It has been unstable, so we are monitoring it before we close this incident.');

    // A page that does not publish automatic incidents says it under the component.
    await htmlShows('quiet', 'Recovered at');
    expect(linesOf(await read('quiet', `component-${checkout}`))).toEqual(
      expect.arrayContaining(['Degraded performance', `Recovered at ${recoveredAt.slice(11, 16)} UTC; monitoring, as it has been unstable.`]),
    );

    await recordSignalEvent(t, team, checkout, ALERT_SIGNAL_TRIGGERED, { signal: 'availability', flapping: true });
    await htmlShows('quiet', 'Outage detected at');
    expect(linesOf(await read('quiet', `component-${checkout}`))).toContain('Major outage');
  }, 60_000);

  browserTest(`resolved, then reopened: "Reopened" above "Resolved", both dated${CHROMIUM ? '' : NO_CHROMIUM}`, async () => {
    const incident = await openIncident(t, team, { endpoint_ids: [team.endpoints[1]], severity: 'critical', title: 'Search failing' });
    await addCheckpoint(t, team, incident.id, { title: 'Index rebuilt', body: 'Search answers again.', status_label: 'Monitoring' });
    await resolveIncident(t, team, incident.id);
    const reopen = await t.request('PATCH', `${INCIDENTS}/${incident.id}/status`, { token: team.token, body: { resolved: false } });
    expect(reopen.statusCode).toBe(200);
    const article = linesOf(await read('quiet', `incident-${incident.id}`));
    const order = ['This incident has been reopened.', 'This incident has been resolved.', 'Search answers again.'].map((text) => article.indexOf(text));
    expect(order[0]).toBeGreaterThan(-1);
    expect(order[1]).toBeGreaterThan(order[0]);
    expect(order[2]).toBeGreaterThan(order[1]);
    expect(article[article.indexOf('This incident has been reopened.') - 1]).toBe('Reopened');
    expect(linesOf(await read('quiet', `component-${team.endpoints[1]}`))).toContain('Major outage');
  }, 60_000);
});
