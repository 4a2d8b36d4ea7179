import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserTest, type Chromium, CHROMIUM, launchChromium, NO_CHROMIUM } from '../support/chromium.js';
import { addCheckpoint, createPage, openIncident, statusTeam } from '../support/status-page-fixtures.js';
import { startListeningTestApp, type TestApp } from '../support/test-app.js';

const title = CHROMIUM
  ? 'a person opening the status page in Chromium (no JavaScript) sees the overall state, components, their states, the checkpoints and the uptime bars, light and dark, phone and desktop'
  : `status page in a real browser${NO_CHROMIUM}`;

const HOUR = 3_600_000;

describe('status page in a real browser', () => {
  let t: TestApp & { port: number };
  let base: string;
  let chromium: Chromium | null = null;
  const shots = mkdtempSync(join(tmpdir(), 'status-page-screenshots-'));

  beforeAll(async () => {
    t = await startListeningTestApp();
    base = `http://127.0.0.1:${t.port}`;
    const team = await statusTeam(t, 3, 'Acme');
    await createPage(t, team.teamId, {
      slug: 'acme',
      title: 'Acme Cloud',
      description: 'Live status of the Acme services',
      history_days: 30,
      components: [
        { endpoint_id: team.endpoints[0], name: 'Checkout API' },
        { endpoint_id: team.endpoints[1], name: 'Search' },
        { endpoint_id: team.endpoints[2], name: 'Dashboard' },
      ],
    });
    const incident = await openIncident(t, team, { endpoint_ids: [team.endpoints[0]], severity: 'critical', title: 'Checkout errors' });
    await addCheckpoint(t, team, incident.id, { title: 'Investigating', body: 'Payments fail for some customers.', status_label: 'Investigating' });
    await addCheckpoint(t, team, incident.id, { title: 'Cause identified', body: 'A database failover is in progress.', status_label: 'Identified' });
    const now = Date.now();
    await t.admin('POST', `/api/v2/teams/${team.teamId}/maintenance-windows`, { endpoint_id: team.endpoints[2], starts_at: new Date(now - HOUR).toISOString(), ends_at: new Date(now + HOUR).toISOString(), reason: 'Dashboard upgrade' });
    const day = 86_400_000;
    const checks = [];
    for (let d = 1; d <= 20; d++) {
      for (let i = 0; i < 4; i++) checks.push({ checked_at: new Date(Math.floor(now / day) * day - d * day + i * 60_000).toISOString(), success: !(d === 3 && i < 2), status_code: 200, latency_ms: 90 });
    }
    expect((await t.admin('POST', `/api/v2/teams/${team.teamId}/endpoints/${team.endpoints[1]}/checks/import`, { checks })).statusCode).toBe(201);
    await t.platform.freshness.waitFor((await t.platform.events.headPosition())!, ['analytics_rollups']);
    chromium = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    await t?.close();
  });

  browserTest(
    title,
    async () => {
      const page = await chromium!.browser.newPage();
      await page.setJavaScriptEnabled(false);
      await page.setViewport({ width: 1200, height: 900 });
      const response = await page.goto(`${base}/status/acme`, { waitUntil: 'load' });
      expect(response?.status()).toBe(200);

      // What a person reads, from the accessibility tree (what screen readers announce, too).
      const tree = await page.accessibility.snapshot({ interestingOnly: true });
      const nodes: Array<{ role: string; name: string; level?: number }> = [];
      const walk = (node: any) => {
        if (!node) return;
        nodes.push({ role: node.role, name: node.name ?? '', level: node.level });
        for (const child of node.children ?? []) walk(child);
      };
      walk(tree);
      const headings = nodes.filter((n) => n.role === 'heading').map((n) => n.name);
      expect(headings).toEqual(expect.arrayContaining(['Acme Cloud', 'Active incidents', 'Maintenance', 'Components', 'Checkout errors', 'Checkout API', 'Search', 'Dashboard']));
      expect(nodes.filter((n) => n.role === 'heading' && n.level === 1).map((n) => n.name)).toEqual(['Acme Cloud']);
      expect(nodes.some((n) => n.role === 'main')).toBe(true);
      const text = nodes.map((n) => n.name).join('\n');
      expect(text).toContain('Partial System Outage');
      expect(text).toContain('Major outage');
      expect(text).toContain('Under maintenance');
      expect(text).toContain('Operational');
      expect(text).toContain('A database failover is in progress.');
      expect(text).toContain('Payments fail for some customers.');
      expect(text).toContain('Dashboard upgrade');
      // The bars are images with a text alternative.
      const bars = nodes.filter((n) => n.role === 'image').map((n) => n.name);
      expect(bars).toEqual(expect.arrayContaining([expect.stringMatching(/^Search: 97\.50 % uptime over the last 30 days; lowest 50 % on \d{4}-\d\d-\d\d; 10 days without data$/)]));

      const desktop = join(shots, 'status-page-desktop-light.png');
      await page.screenshot({ path: desktop, fullPage: true });

      // Phone, dark scheme: nothing wider than the screen, a dark background.
      await page.setViewport({ width: 375, height: 812, isMobile: true });
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
      await page.goto(`${base}/status/acme`, { waitUntil: 'load' });
      // Evaluated in the page (a string: the test's TypeScript has no DOM types).
      const metrics = (await page.evaluate(
        '({ scroll: document.documentElement.scrollWidth, width: window.innerWidth, background: getComputedStyle(document.body).backgroundColor })',
      )) as { scroll: number; width: number; background: string };
      expect(metrics.scroll).toBeLessThanOrEqual(metrics.width);
      expect(metrics.background).toBe('rgb(13, 17, 23)');
      const phone = join(shots, 'status-page-phone-dark.png');
      await page.screenshot({ path: phone, fullPage: true });
      expect(statSync(desktop).size).toBeGreaterThan(10_000);
      expect(statSync(phone).size).toBeGreaterThan(10_000);
      process.stdout.write(`status page screenshots: ${desktop} ${phone}\n`);
    },
    60_000,
  );
});
