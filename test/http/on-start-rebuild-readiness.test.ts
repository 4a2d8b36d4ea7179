/**
 * A start that rebuilds a projection (its version changed) as an operator's probes see it, in
 * the start order of src/main.ts (the test app starts through the same `startService`): the
 * process answers first, /health/live 200 throughout, /health/ready 503 naming the projection
 * while it rebuilds, reads served from the generation the pointer still names, and ready 200
 * once the rebuild has swapped in, and the rebuild's progress in /metrics while it runs. The rebuild is held on its first event by a gate in the
 * projection's handlers (the test app's `projections` seam), so "while it rebuilds" is a state,
 * not a race.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TENANCY_VIEW } from '../../src/tenancy/views/tenancy/view.js';
import { eventually } from '../support/eventually.js';
import { viewUpgradedAndHeld } from '../support/held-rebuild.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

/** `monitor_projection_rebuild_remaining_events` of a scrape, by projection. */
function rebuildRemaining(scrape: { statusCode: number; body: string }): Map<string, number> {
  expect(scrape.statusCode).toBe(200);
  const samples = scrape.body.matchAll(/^monitor_projection_rebuild_remaining_events\{projection="([^"]+)"[^}]*\} (\d+)$/gm);
  return new Map([...samples].map(([, projection, value]) => [projection, Number(value)]));
}

describe('a start that rebuilds a projection', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'on-start-rebuild-'));
  const upgrade = viewUpgradedAndHeld(TENANCY_VIEW);
  let t: TestApp | undefined;
  afterAll(async () => {
    upgrade.release();
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers live, names the projection in ready until the swap, and serves reads from the old generation', async () => {
    const before = await startTestApp({ DATA_DIR: dataDir });
    await before.createTeam('Before the upgrade');
    await before.close();

    t = await startTestApp({ DATA_DIR: dataDir }, { projections: upgrade.projections, untilRunning: false });
    await upgrade.rebuilding;
    const status = await t.platform.runner!.status();
    expect(status.find((s) => s.name === TENANCY_VIEW)).toMatchObject({ state: 'rebuilding', activeVersion: 1, version: 2 });

    expect((await t.request('GET', '/health/live')).statusCode).toBe(200);
    const notReady = await t.request('GET', '/health/ready');
    expect(notReady.statusCode).toBe(503);
    // Only the projection that rebuilds is named as rebuilding; the runner starts the others
    // after it, and the answer says so instead of reading as if every one were rebuilding.
    const why = notReady.json().checks.projections as string;
    expect(why).toMatch(new RegExp(`^unavailable: (.*; )?rebuilding: ${TENANCY_VIEW}(;|$)`));
    expect(why).toMatch(/; not started yet: \w/);
    // docs/operations.md "Upgrades": the API answers from the generation the pointer names.
    const teams = await t.admin('GET', '/api/v2/teams');
    expect(teams.statusCode).toBe(200);
    expect(teams.json().data.map((team: { name: string }) => team.name)).toEqual(['Before the upgrade']);

    // Its progress as a gauge: the rebuild is held on its first event, so all of the log is left.
    expect(rebuildRemaining(await t.request('GET', '/metrics'))).toEqual(new Map([[TENANCY_VIEW, await t.platform.events.headPosition()]]));

    upgrade.release();
    await t.running;
    expect(rebuildRemaining(await t.request('GET', '/metrics'))).toEqual(new Map());
    const ready = await eventually('ready 200 after the swap', async () => {
      const response = await t!.request('GET', '/health/ready');
      return response.statusCode === 200 && response;
    });
    expect(ready.json().checks.projections).toBe('ok');
    expect((await t.platform.runner!.status()).find((s) => s.name === TENANCY_VIEW)).toMatchObject({ state: 'running', activeVersion: 2 });
    expect((await t.admin('GET', '/api/v2/teams')).json().data.map((team: { name: string }) => team.name)).toEqual(['Before the upgrade']);
  });
});
