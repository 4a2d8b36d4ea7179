/**
 * An SLO created around its endpoint's deletion loses the endpoint whichever way the two land,
 * through the SLO burn reactor (src/slos/reactors/burn-alerts.ts), which finds the SLOs listing a
 * deleted endpoint through the `slos` view and the SLO's endpoints through their streams:
 *
 * - SloCreated before EndpointDeleted in the log, the `slos` view not yet showing the SLO when
 *   the reactor takes the deletion (the view's SloCreated handler held by a gate through the
 *   test app's `projections` seam);
 * - EndpointDeleted before SloCreated in the log: the SLO's command checked its endpoints against
 *   the monitoring view before the deletion reached it, and appended after the reactor took the
 *   deletion (the command held between its check and its append by a gate on its id).
 *
 * No timers: each order is made by gates, and the waits are on deadlines.
 */
import { jest } from '@jest/globals';
import { endpointStream } from '../../src/monitoring/domain/events.js';
import type { Projection } from '../../src/platform/projections/projection.js';
import { SLO_CREATED } from '../../src/slos/domain/events.js';
import { SLO_BURN_REACTOR } from '../../src/slos/reactors/burn-alerts.js';
import { SLOS_PROJECTION } from '../../src/slos/views/slos/view.js';
import { eventually } from '../support/eventually.js';
import { createEndpoint, createProject } from '../support/monitoring-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

/** A gate: `entered` settles when the held code reaches it, which then waits for `release`. */
function gate() {
  let release!: () => void;
  const opened = new Promise<void>((resolve) => (release = resolve));
  let enter!: () => void;
  const entered = new Promise<void>((resolve) => (enter = resolve));
  return { opened, release, entered, enter };
}

/** The `slos` view with its SloCreated handler held at `held` (once). */
function slosViewHeld(held: ReturnType<typeof gate>) {
  let holding = true;
  return (list: Projection[]) =>
    list.map((projection) => {
      if (projection.name !== SLOS_PROJECTION) return projection;
      const apply = projection.handlers[SLO_CREATED]!;
      const handlers = {
        ...projection.handlers,
        [SLO_CREATED]: async (...args: Parameters<typeof apply>) => {
          if (holding) {
            holding = false;
            held.enter();
            await held.opened;
          }
          return apply(...args);
        },
      };
      return { ...projection, handlers };
    });
}

async function teamWithEndpoint(t: TestApp) {
  const team = await t.createTeam('Race');
  const project = await createProject(t, team.id, 'Shop');
  const endpoint = await createEndpoint(t, team.id, project.id, { name: 'Checkout' });
  return { teamId: team.id as number, endpointId: endpoint.id as number };
}

/** Where the endpoint's deletion is in the log. */
async function deletionPosition(t: TestApp, endpointId: number): Promise<number> {
  const events = await t.platform.events.readStream(endpointStream(endpointId));
  const deleted = events.find((event) => event.type === 'EndpointDeleted');
  if (!deleted) throw new Error(`endpoint ${endpointId} has no EndpointDeleted`);
  return deleted.position;
}

/** The create answered 201, and the SLO it created comes to list no endpoint (its only one was deleted). */
async function expectEndpointLeft(t: TestApp, teamId: number, response: { statusCode: number; json(): any }): Promise<void> {
  expect(response.statusCode).toBe(201);
  const sloId: number = response.json().data.id;
  const read = async () => (await t.admin('GET', `/api/v2/teams/${teamId}/slos/${sloId}`)).json().data;
  const after = await eventually('the deleted endpoint out of the SLO', async () => {
    const slo = await read();
    return slo.endpoint_ids.length === 0 ? slo : null;
  }, { timeoutMs: 15_000 });
  expect(after).toMatchObject({ id: sloId, endpoint_ids: [], alerts: [] });
}

describe('an SLO created around its endpoint deletion', () => {
  let t: TestApp | undefined;
  let held = gate();
  beforeEach(() => {
    held = gate();
  });
  afterEach(async () => {
    held.release();
    await t?.close();
    t = undefined;
  });

  it('loses the endpoint when the slos view shows the SLO only after the reactor took the deletion', async () => {
    t = await startTestApp({}, { projections: slosViewHeld(held) });
    const app = t;
    const { teamId, endpointId } = await teamWithEndpoint(app);
    const waits = jest.spyOn(app.platform.freshness, 'waitFor');

    // The SLO is in the log; its view is held on it (the POST waits for the view).
    const created = app.admin('POST', `/api/v2/teams/${teamId}/slos`, { name: 'Checkout', endpoint_ids: [endpointId], objective_percent: 99 });
    await held.entered;
    expect((await app.admin('DELETE', `/api/v2/teams/${teamId}/endpoints/${endpointId}`)).statusCode).toBe(204);
    const deletedAt = await deletionPosition(app, endpointId);

    // The reactor has taken the deletion, or waits for the slos view to reach it: either way the
    // view is released only once the reactor's read of it would come too early.
    await eventually('the reactor past the deletion, or waiting for the slos view to reach it', async () => {
      const applied = app.platform.runner!.appliedPosition(SLO_BURN_REACTOR) ?? -1;
      const waiting = waits.mock.calls.some(([position, names]) => position >= deletedAt && names.includes(SLOS_PROJECTION));
      return applied >= deletedAt || waiting;
    });
    held.release();
    await expectEndpointLeft(app, teamId, await created);
  });

  it('loses the endpoint when the SLO is appended after the deletion its command did not see', async () => {
    t = await startTestApp();
    const app = t;
    const { teamId, endpointId } = await teamWithEndpoint(app);
    // Hold the create between its check of the endpoints (the monitoring view) and its append.
    const next = app.platform.ids.next.bind(app.platform.ids);
    jest.spyOn(app.platform.ids, 'next').mockImplementation(async (...args: Parameters<typeof next>) => {
      if (args[0] === 'slo') {
        held.enter();
        await held.opened;
      }
      return next(...args);
    });

    const created = app.admin('POST', `/api/v2/teams/${teamId}/slos`, { name: 'Checkout', endpoint_ids: [endpointId], objective_percent: 99 });
    await held.entered;
    expect((await app.admin('DELETE', `/api/v2/teams/${teamId}/endpoints/${endpointId}`)).statusCode).toBe(204);
    const deletedAt = await deletionPosition(app, endpointId);
    await eventually('the reactor past the deletion', async () => (app.platform.runner!.appliedPosition(SLO_BURN_REACTOR) ?? -1) >= deletedAt);
    held.release();
    await expectEndpointLeft(app, teamId, await created);
  });
});
