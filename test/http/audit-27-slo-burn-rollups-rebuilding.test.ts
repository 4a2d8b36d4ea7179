/**
 * The SLO burn reactor decides an alert from the rollups' counts (src/slos/reactors/burn-alerts.ts,
 * `onCheck`). The rollups are another processor, and while they rebuild on start (an upgrade
 * that bumps their version; minutes on a large log) they show nothing recorded since the last
 * stop. The reactor used to wait 2 s for them and then count anyway: an active page alert over an
 * endpoint that kept failing read a 5-minute window without checks, "recovered", and its incident
 * was resolved, to be opened again after the swap.
 *
 * Here the page alert is active (appended to the SLO's stream as the reactor's evaluation would
 * append it) after one good check (probed every 20 s), the rollups are one version up and held
 * on their first event, and the endpoint fails at every check after the restart. The reactor must wait for the rollups (the runner says so at info), not decide
 * on counts that miss the checks; once they are rebuilt the alert is still active and its
 * incident open.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { ROLLUPS_PROJECTION } from '../../src/analytics/views/rollups/view.js';
import { SLO_BURN_ALERT_RECOVERED, SLO_BURN_INCIDENT_LINKED, sloStream } from '../../src/slos/domain/events.js';
import { SLO_BURN_REACTOR } from '../../src/slos/reactors/burn-alerts.js';
import { monitorTarget, startTarget, type Target } from '../e2e/support.js';
import { eventually } from '../support/eventually.js';
import { ERROR, viewUpgradedAndHeld, type LogLine } from '../support/held-rebuild.js';
import { createProject } from '../support/monitoring-fixtures.js';
import { triggerPage } from '../support/slo-fixtures.js';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(120_000);

describe('the SLO burn reactor while the rollups rebuild on start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slo-burn-rollups-rebuild-'));
  const upgrade = viewUpgradedAndHeld(ROLLUPS_PROJECTION);
  const logs: LogLine[] = [];
  let t: TestApp | undefined;
  let target: Target | undefined;
  afterAll(async () => {
    upgrade.release();
    await t?.close();
    await target?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('waits for the rollups to count the failing checks instead of recovering an active alert on a window without them', async () => {
    target = await startTarget();
    const before = await startTestApp({ DATA_DIR: dataDir });
    const team = await before.createTeam('Burning');
    const { token } = await before.issueToken(team.id, ALL_SCOPES);
    const projectId: number = (await createProject(before, team.id)).id;
    // Probed every 20 s: one good check before the stop, so the alert below is not evaluated again before it.
    const endpoint = await monitorTarget(before, team.id, target, 'checkout', { interval_seconds: 20, timeout_seconds: 5 }, { projectId });
    await eventually('a first check', async () => (await before.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks`, { token })).json().data.length > 0, { timeoutMs: 30_000 });
    const caughtUp = async (app: TestApp) => {
      const head = (await app.platform.events.headPosition()) ?? 0;
      await eventually('the reactor at the head of the log', async () => ((await app.platform.reader.position(SLO_BURN_REACTOR)) ?? 0) >= head, { timeoutMs: 60_000 });
    };
    const created = await before.admin('POST', `/api/v2/teams/${team.id}/slos`, { name: 'Checkout', endpoint_ids: [endpoint.id], objective_percent: 99 });
    expect(created.statusCode).toBe(201);
    const sloId: number = created.json().data.id;
    await caughtUp(before); // the good check evaluated before the alert exists
    await triggerPage(before, sloId, team.id, endpoint.id);
    const sloEvents = async (app: TestApp) => (await app.platform.events.readStream(sloStream(sloId))).map((event) => event);
    await eventually('the page alert linked to its incident', async () => (await sloEvents(before)).some((e) => e.type === SLO_BURN_INCIDENT_LINKED), { timeoutMs: 30_000 });
    const incidentId = ((await sloEvents(before)).find((e) => e.type === SLO_BURN_INCIDENT_LINKED)!.data as { incident_id: number }).incident_id;
    expect((await sloEvents(before)).map((e) => e.type)).not.toContain(SLO_BURN_ALERT_RECOVERED);
    await before.close();

    const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    t = await startTestApp({ DATA_DIR: dataDir, READ_YOUR_WRITES_TIMEOUT_MS: '500' }, { projections: upgrade.projections, untilRunning: false, logger });
    const app = t;
    await upgrade.rebuilding;
    // From now on every check fails; the rollups (held) show only the good one before the stop.
    target.mode.status = 503;

    const waitsForRollups = () =>
      logs.some((line) => line.projection === SLO_BURN_REACTOR && line.msg === 'processor waits for views to reach its event' && (line.views ?? []).some((v) => v.name === ROLLUPS_PROJECTION));
    const recovered = async () => (await sloEvents(app)).some((e) => e.type === SLO_BURN_ALERT_RECOVERED);
    await eventually('the reactor waiting for the rollups, or deciding without them', async () => waitsForRollups() || (await recovered()), { timeoutMs: 60_000 });
    expect(await recovered()).toBe(false);
    expect(logs.filter((line) => line.projection === SLO_BURN_REACTOR && line.level >= ERROR)).toEqual([]);

    upgrade.release();
    await app.running;
    // The reactor goes on once the rollups count the failing checks: past the log's head of
    // now, the alert is still active and its incident open.
    await caughtUp(app);
    expect(await recovered()).toBe(false);
    const slo = (await app.admin('GET', `/api/v2/teams/${team.id}/slos/${sloId}`)).json().data;
    expect(slo.alerts).toEqual(expect.arrayContaining([expect.objectContaining({ severity: 'page' })]));
    const incident = (await app.request('GET', `/api/public/v2/incidents/${incidentId}`, { token })).json().data;
    expect(incident.resolved_at).toBeNull();
  });
});
