/**
 * The SLO burn reactor (src/slos/reactors/burn-alerts.ts) while a view it reads is rebuilt on
 * start: an endpoint's deletion is read through the monitoring and `slos` views once they
 * applied it (`viewsAt`), and the reactor takes the log in order, so a burn alert triggered after
 * the deletion waits for them too. The reactor starts with the service's contexts, before the
 * runner starts the views, so it runs while the monitoring view rebuilds (version one up) and the
 * views after it have not started. The rebuild is held on its first event by a gate (the test
 * app's `projections` seam), so "while it rebuilds" is a state, not a race; it is released only
 * once the reactor has waited for the views longer than its bound (the runner then logged what
 * the reactor does about it).
 *
 * - No error-level line from the reactor meanwhile (it waits; the runner says so at info, with
 *   how far the views got), where it used to fail its batch every ~11 s.
 * - Once the views are current the trigger opens its incident, linked on the SLO's stream.
 *
 * The trigger is appended to the SLO's stream as the reactor's evaluation would append it (no
 * probing: test/e2e/slo-burn-alerts.e2e.test.ts covers the evaluation).
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { MONITORING_VIEW } from '../../src/monitoring/views/monitoring/view.js';
import { SLO_BURN_INCIDENT_LINKED, SLO_ENDPOINT_DELETED, sloStream } from '../../src/slos/domain/events.js';
import { SLO_BURN_REACTOR } from '../../src/slos/reactors/burn-alerts.js';
import { eventually } from '../support/eventually.js';
import { ERROR, viewUpgradedAndHeld, type LogLine } from '../support/held-rebuild.js';
import { createEndpoint, createProject } from '../support/monitoring-fixtures.js';
import { triggerPage } from '../support/slo-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(90_000);

describe('the SLO burn reactor while the monitoring view rebuilds on start', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slo-burn-rebuild-'));
  const upgrade = viewUpgradedAndHeld(MONITORING_VIEW);
  const logs: LogLine[] = [];
  let t: TestApp | undefined;
  afterAll(async () => {
    upgrade.release();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('waits for the views without an error, then opens the incident of a trigger behind an endpoint deletion', async () => {
    const before = await startTestApp({ DATA_DIR: dataDir });
    const team = await before.createTeam('Rebuild');
    const projectId: number = (await createProject(before, team.id)).id;
    const kept = await createEndpoint(before, team.id, projectId, { name: 'Checkout' });
    const deleted = await createEndpoint(before, team.id, projectId, { name: 'Cart' });
    const created = await before.admin('POST', `/api/v2/teams/${team.id}/slos`, { name: 'Shop', endpoint_ids: [kept.id, deleted.id], objective_percent: 99 });
    expect(created.statusCode).toBe(201);
    const sloId: number = created.json().data.id;
    await before.close();

    // A short read-your-writes bound: the deletion's answer cannot wait for a view that rebuilds.
    const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    t = await startTestApp({ DATA_DIR: dataDir, READ_YOUR_WRITES_TIMEOUT_MS: '500' }, { projections: upgrade.projections, untilRunning: false, logger });
    const app = t;
    await upgrade.rebuilding;

    const deletion = await app.admin('DELETE', `/api/v2/teams/${team.id}/endpoints/${deleted.id}`);
    expect(deletion.statusCode).toBe(202);
    expect(deletion.json().code).toBe('views_behind');
    await triggerPage(app, sloId, team.id, kept.id);

    // The reactor has met the views behind for longer than its bound: the runner said what it
    // does about it (before, at error: its batch failed).
    const fromReactor = () => logs.filter((line) => line.projection === SLO_BURN_REACTOR);
    await eventually('a line from the runner about the reactor', async () => fromReactor().length > 0, { timeoutMs: 40_000 });
    expect(fromReactor().filter((line) => line.level >= ERROR)).toEqual([]);
    expect(fromReactor()[0]).toMatchObject({ msg: 'processor waits for views to reach its event' });
    expect(fromReactor()[0].views).toEqual(expect.arrayContaining([expect.objectContaining({ name: MONITORING_VIEW, state: 'rebuilding' })]));
    const sloEvents = async () => (await app.platform.events.readStream(sloStream(sloId))).map((event) => event.type);
    expect(await sloEvents()).not.toContain(SLO_BURN_INCIDENT_LINKED);

    upgrade.release();
    await app.running;
    await eventually('the trigger linked to its incident', async () => (await sloEvents()).includes(SLO_BURN_INCIDENT_LINKED), { timeoutMs: 30_000 });
    const events = await sloEvents();
    // The log's order: the deletion first, then the trigger's incident.
    expect(events.indexOf(SLO_ENDPOINT_DELETED)).toBeGreaterThan(-1);
    expect(events.indexOf(SLO_ENDPOINT_DELETED)).toBeLessThan(events.indexOf(SLO_BURN_INCIDENT_LINKED));
    const slo = (await app.admin('GET', `/api/v2/teams/${team.id}/slos/${sloId}`)).json().data;
    expect(slo).toMatchObject({ endpoint_ids: [kept.id], alerts: [expect.objectContaining({ severity: 'page' })] });
    expect(fromReactor().filter((line) => line.level >= ERROR)).toEqual([]);
  });
});
