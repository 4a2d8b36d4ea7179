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
import { eventually } from '../support/eventually.js';
import { callService, type SuiteServices, suiteServices } from '../support/service-process.js';

jest.setTimeout(180_000);

const ADMIN = 'upgrade-rebuild-admin-token-0123456789';
/** Import requests of 10,000 checks each before the version bump. */
const HISTORY_REQUESTS = 10;

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
    await eventually('the service to answer /health/ready with 200', async () => (await fetch(`${second.url}/health/ready`)).status === 200).catch((error: Error) => {
      throw new Error(`${error.message}\n${second.output()}`);
    });
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
  it('answers live and not ready while it rebuilds; a SIGTERM then stops it, the next start finishes', async () => {
    const first = await services.start({ ADMIN_TOKEN: ADMIN });
    const team = (await callService(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Long history' })).body.data;
    const project = (await callService(first, 'POST', `/api/v2/teams/${team.id}/projects`, ADMIN, { name: 'Web' })).body.data;
    const endpoint = (await callService(first, 'POST', `/api/v2/teams/${team.id}/endpoints`, ADMIN, { project_id: project.id, name: 'Home', url: 'https://example.com/health' })).body.data;
    // Enough history that the rollups rebuild is still running when the probes below look.
    const start = Date.parse('2031-01-01T00:00:00Z');
    for (let request = 0; request < HISTORY_REQUESTS; request++) {
      const checks = Array.from({ length: 10_000 }, (_, i) => ({ checked_at: new Date(start + (request * 10_000 + i) * 30_000).toISOString(), success: i % 7 !== 0, status_code: i % 7 ? 200 : 503, latency_ms: 80 + (i % 50) }));
      const imported = await callService(first, 'POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, ADMIN, { checks });
      expect([201, 202]).toContain(imported.status);
    }
    await eventually('the first process ready', async () => (await fetch(`${first.url}/health/ready`)).status === 200);
    await first.kill('SIGTERM');
    await lowerStoredVersion(services.dataDir, ROLLUPS_PROJECTION);

    const rebuilding = await services.start({ ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' });
    const ready = await fetch(`${rebuilding.url}/health/ready`);
    expect(rebuilding.output()).not.toContain('projection rebuilt and swapped in');
    expect(ready.status).toBe(503);
    expect(JSON.stringify(await ready.json())).toContain(ROLLUPS_PROJECTION);
    expect((await fetch(`${rebuilding.url}/health/live`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => rebuilding.child.once('exit', (code) => resolve(code)));
    rebuilding.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(rebuilding.output()).not.toContain('projection rebuilt and swapped in');

    const next = await services.start({ ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info' });
    await eventually('the next start to finish the rebuild', async () => (await fetch(`${next.url}/health/ready`)).status === 200, { timeoutMs: 120_000 });
    expect(next.output()).toContain('projection rebuilt and swapped in');
    const teams = await callService(next, 'GET', '/api/v2/teams', ADMIN);
    expect(teams.body.data.map((item: { name: string }) => item.name)).toContain('Long history');
  });
});
