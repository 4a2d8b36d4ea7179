import 'reflect-metadata';
/**
 * An upgrade whose projection version changed, as an operator sees it: the process rebuilds the
 * view on start. It used to rebuild before it listened, so for the whole rebuild (minutes on a
 * large log) even /health/live went unanswered and a liveness probe restarted it mid-rebuild.
 * Now it listens first: the log says `service started` before `projection rebuilt and swapped
 * in`, and the rebuilt view serves once ready. The older stored version is set the way the
 * runner itself writes it (a pointer), with the first process stopped. Killed mid-rebuild, the
 * next start goes on from the rebuild's checkpoint.
 */
import { jest } from '@jest/globals';
import { ROLLUPS_PROJECTION } from '../../src/analytics/views/rollups/view.js';
import { projections, upcasters } from '../../src/app/contexts.js';
import { loadConfig } from '../../src/platform/config/config.js';
import { createLogger } from '../../src/platform/logging/logger.js';
import { createPlatform } from '../../src/platform/platform.js';
import { ProjectionRegistry } from '../../src/platform/projections/registry.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { eventually } from '../support/eventually.js';
import { join } from 'node:path';
import { ensureBuilt, startBuiltService } from '../support/built-service.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { callService, type SuiteServices, suiteServices } from '../support/service-process.js';

jest.setTimeout(180_000);

const ADMIN = 'upgrade-rebuild-admin-token-0123456789';

/** Sets a projection's stored version one below the code's, the way the runner writes it (its pointer). */
async function lowerStoredVersion(dataDir: string, name: string): Promise<void> {
  const platform = await createPlatform(loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN }), {
    projections: projections(),
    upcasters: upcasters(),
    withRunner: false,
    withTransport: false,
    logger: createLogger('warn'),
    mintAdminToken: false,
  });
  try {
    const registry = new ProjectionRegistry(platform.views);
    const pointer = await registry.pointer(name);
    expect(pointer).not.toBeNull();
    await platform.views.commit([registry.pointerWrite({ ...pointer!, version: pointer!.version - 1 })]);
  } finally {
    await platform.close();
  }
}

describe('a start after an upgrade that changed a projection version', () => {
  let services: SuiteServices;
  beforeAll(async () => {
    services = await suiteServices('upgrade-rebuild-');
  });
  afterAll(() => services?.close());

  it('listens before the rebuild is done, then serves the rebuilt view', async () => {
    const first = await services.start({ ADMIN_TOKEN: ADMIN });
    const team = await callService(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Before the upgrade' });
    expect(team.status).toBe(201);
    await first.kill('SIGTERM');

    await lowerStoredVersion(services.dataDir, ROLLUPS_PROJECTION);

    const second = await services.start({ ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' });
    await second.ready();
    const messages = second
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    const started = messages.indexOf('service started');
    const swapped = messages.indexOf('projection rebuilt and swapped in');
    expect([started, swapped].every((index) => index >= 0)).toBe(true);
    expect(started).toBeLessThan(swapped);
    const teams = await callService(second, 'GET', '/api/v2/teams', ADMIN);
    expect(teams.body.data.map((item: { name: string }) => item.name)).toContain('Before the upgrade');
  });

  it('exits 0 when stopped during its on-start rebuild, and the next start rebuilds and serves', async () => {
    // Wherever the stop lands (before the rebuild, between two of its batches, after the swap),
    // the process drains and exits 0, and the next start ends ready with the rebuilt view.
    const own = await suiteServices('upgrade-stop-rebuild-');
    try {
      const first = await own.start({ ADMIN_TOKEN: ADMIN });
      expect((await callService(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Kept across the stop' })).status).toBe(201);
      await first.kill('SIGTERM');
      await lowerStoredVersion(own.dataDir, ROLLUPS_PROJECTION);

      const stopped = await startBuiltService({ DATA_DIR: own.dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' });
      expect(await stopped.stop()).toBe(0);

      // Ready means every view runs at this code's version: the rollups' rebuild ended and swapped in.
      const next = await own.start({ ADMIN_TOKEN: ADMIN });
      await next.ready();
      const teams = await callService(next, 'GET', '/api/v2/teams', ADMIN);
      expect(teams.body.data.map((item: { name: string }) => item.name)).toContain('Kept across the stop');
    } finally {
      await own.close();
    }
  });

  it('killed (SIGKILL) during its on-start rebuild, the next start resumes from the checkpoint and the view equals the one before', async () => {
    const own = await suiteServices('upgrade-kill-rebuild-');
    try {
      const first = await own.start({ ADMIN_TOKEN: ADMIN });
      const team = (await callService(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Rebuilt' })).body.data;
      const reader = (await callService(first, 'POST', `/api/v2/teams/${team.id}/tokens`, ADMIN, { name: 'r', scopes: ['analytics:read'], role: 'viewer' })).body.data.token;
      const project = (await callService(first, 'POST', `/api/v2/teams/${team.id}/projects`, ADMIN, { name: 'Web' })).body.data;
      const endpoint = (await callService(first, 'POST', `/api/v2/teams/${team.id}/endpoints`, ADMIN, { project_id: project.id, name: 'Home', url: 'https://example.com/health' })).body.data;
      // Enough checks that the rollups' rebuild spans many batches (500 events each).
      const start = Date.parse('2031-01-01T00:00:00Z');
      for (let part = 0; part < 3; part++) {
        const checks = Array.from({ length: 10_000 }, (_, i) => {
          const n = part * 10_000 + i;
          return { checked_at: new Date(start + n * 30_000).toISOString(), success: n % 11 !== 0, status_code: n % 11 ? 200 : 503, latency_ms: 80 + (n % 50) };
        });
        const imported = await callService(first, 'POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, ADMIN, { checks });
        expect([201, 202]).toContain(imported.status);
      }
      const analytics = `/api/public/v2/endpoints/${endpoint.id}/analytics?from=2031-01-01T00:00:00Z&to=2031-01-12T00:00:00Z`;
      await first.ready();
      const before = await callService(first, 'GET', analytics, reader);
      expect(before.status).toBe(200);
      expect(before.body.data.totals.checks).toBe(30_000);
      await first.kill('SIGTERM');
      await lowerStoredVersion(own.dataDir, ROLLUPS_PROJECTION);

      const views = new SqliteReadStore(join(own.dataDir, 'views.sqlite'));
      let killedAt: number;
      try {
        const registry = new ProjectionRegistry(views);
        const { generation } = (await registry.pointer(ROLLUPS_PROJECTION))!;
        const killed = await own.start({ ADMIN_TOKEN: ADMIN });
        await eventually('a committed batch of the rebuild', async () => ((await registry.checkpoint(ROLLUPS_PROJECTION, generation + 1)).position ?? 0) > 0, { timeoutMs: 120_000, intervalMs: 5 });
        await killed.kill('SIGKILL');
        // Killed part-way: nothing swapped, the new generation checkpointed short of the head.
        const pointer = await registry.pointer(ROLLUPS_PROJECTION);
        expect(pointer).toMatchObject({ generation });
        killedAt = (await registry.checkpoint(ROLLUPS_PROJECTION, generation + 1)).position!;
        expect(killedAt).toBeGreaterThan(0);
      } finally {
        await views.close();
      }

      const next = await own.start({ ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' });
      await next.ready(120_000);
      // Its log names where it went on from: the killed rebuild's checkpoint, short of the head.
      const lines = next
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg: string; projection?: string; position?: number; head?: number; applied?: number });
      const resumed = lines.find((line) => line.msg === 'projection rebuild resumed from its checkpoint' && line.projection === ROLLUPS_PROJECTION);
      expect(resumed).toMatchObject({ position: killedAt });
      expect(killedAt).toBeLessThan(resumed!.head!);
      const swapped = lines.find((line) => line.msg === 'projection rebuilt and swapped in' && line.projection === ROLLUPS_PROJECTION);
      expect(swapped!.applied).toBeLessThanOrEqual(resumed!.head! - killedAt);
      // Nothing applied twice, nothing lost: the same figures as the view had before the upgrade.
      const after = await callService(next, 'GET', analytics, reader);
      expect(after.status).toBe(200);
      expect(after.body.data).toEqual(before.body.data);
    } finally {
      await own.close();
    }
  });

  it('exits 0 when stopped while its runner starts (SIGTERM right after "service started")', async () => {
    // The runner's processors are still between their leases and their live reads then: one
    // that opened its read after the stop had closed the others kept the process from exiting.
    ensureBuilt();
    const dir = makeTempDir('upgrade-stop-during-start-');
    try {
      const service = await startBuiltService({ DATA_DIR: join(dir.path, 'data'), ADMIN_TOKEN: ADMIN });
      expect(await service.stop()).toBe(0);
      expect(service.lines().at(-1)).toMatchObject({ msg: 'stopped' });
    } finally {
      dir.remove();
    }
  }, 60_000);
});
