import 'reflect-metadata';
/**
 * An upgrade whose projection version changed, as an operator sees it: the process rebuilds the
 * view on start. It used to rebuild before it listened, so for the whole rebuild (minutes on a
 * large log) even /health/live went unanswered and a liveness probe restarted it mid-rebuild.
 * Now it listens first: the log says `service started` before `projection rebuilt and swapped
 * in`, and the rebuilt view serves once ready. The older stored version is set the way the
 * runner itself writes it (a pointer), with the first process stopped.
 */
import { jest } from '@jest/globals';
import { ROLLUPS_PROJECTION } from '../../src/analytics/views/rollups/view.js';
import { projections, upcasters } from '../../src/app/contexts.js';
import { loadConfig } from '../../src/platform/config/config.js';
import { createLogger } from '../../src/platform/logging/logger.js';
import { createPlatform } from '../../src/platform/platform.js';
import { ProjectionRegistry } from '../../src/platform/projections/registry.js';
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
