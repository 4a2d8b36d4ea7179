/**
 * Several processes on one host, as docs/operations.md describes: an `api`, a `projector`, a
 * `scheduler` and a `prober` (the production build, each its own process and port) share one
 * DATA_DIR and a local nats-server. Endpoints checked every second are probed; the only prober
 * is killed while the scheduler keeps publishing; once a new prober is up each endpoint gets at
 * most one check more than its slots (the queue kept the newest job per endpoint, not every
 * missed slot). Counts are read through the public API. The outage is OUTAGE_SLOTS seconds
 * rather than 30: every missed slot beyond WINDOW_S + 2 would already fail the bound.
 */
import { jest } from '@jest/globals';
import { runNode } from '../support/child-process.js';
import { describeWithNats, startNatsServer, type TestNatsServer } from '../support/nats-server.js';
import { callService, type ServiceProcess, type SuiteServices, suiteServices } from '../support/service-process.js';
import { configuration, eventually, startTarget, type Target } from './support.js';

jest.setTimeout(240_000);

const ADMIN = 'shared-dir-admin-token-0123456789';
const ENDPOINTS = 2;
/** Slots the scheduler publishes per endpoint while no prober runs: the old queue probed them all at once. */
const OUTAGE_SLOTS = 12;
/** Seconds after the new prober starts over which checks are counted (one slot a second). */
const WINDOW_S = 6;

/** The value of an unlabelled series in a process's `GET /metrics`. */
async function metric(service: ServiceProcess, name: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in the scrape`);
  return Number(line.split(' ').at(-1));
}

describeWithNats('several processes on one host sharing DATA_DIR and a local NATS', () => {
  let services: SuiteServices;
  let nats: TestNatsServer | null = null;
  let target: Target;

  beforeAll(async () => {
    services = await suiteServices('shared-data-dir-');
    nats = await startNatsServer();
    target = await startTarget();
  });
  afterAll(async () => {
    await services?.close();
    await target?.close();
    await nats?.stop();
  });

  const env = (role: string) => ({ DATA_DIR: services.dataDir, ADMIN_TOKEN: ADMIN, NATS_URL: nats!.url, ROLE: role });
  const start = (role: string) => services.start(env(role));

  it('refuses to start a scheduler without NATS_URL: its jobs would reach no prober', async () => {
    const result = await runNode(services.build.entry, [], { env: { ...env('scheduler'), NATS_URL: undefined, PORT: '0' } });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('ROLE=scheduler needs NATS_URL');
  });

  it('probes through the roles sharing DATA_DIR; after a prober outage each endpoint gets at most one extra check', async () => {
    // One after the other: four processes loading at once on a loaded 2-core machine each take
    // longer than startService waits.
    await start('projector');
    const api = await start('api');
    const scheduler = await start('scheduler');
    const prober = await start('prober');

    const admin = (method: string, path: string, body?: unknown) => callService(api, method, path, ADMIN, body);
    const team = (await admin('POST', '/api/v2/teams', { name: 'One host' })).body.data;
    const project = (await admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Web', description: '' })).body.data;
    const reader = (await admin('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'r', scopes: ['monitoring:read'], role: 'viewer' })).body.data.token;
    const endpointIds: number[] = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      const created = await admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: `Target ${i}`, ...configuration(`${target.url}/ok`, { interval_seconds: 1, timeout_seconds: 1 }) });
      expect(created.status).toBe(201);
      target.tokens.set(created.body.data.id, created.body.data.verification_token);
      expect((await admin('POST', `/api/v2/teams/${team.id}/endpoints/${created.body.data.id}/verify-destination`)).status).toBe(200);
      expect((await admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${created.body.data.id}`, { enabled: true })).status).toBe(200);
      endpointIds.push(created.body.data.id);
    }
    const checks = async (endpointId: number, query = ''): Promise<{ checked_at: string }[]> => {
      const listed = await callService(api, 'GET', `/api/public/v2/endpoints/${endpointId}/checks?source=scheduled&limit=100${query}`, reader);
      expect(listed.status).toBe(200);
      return listed.body.data;
    };

    // The scheduler publishes, the prober probes and records, the projector builds the views the API reads.
    for (const id of endpointIds) await eventually(`scheduled checks of endpoint ${id}`, async () => (await checks(id)).length >= 2, 60_000);

    // Every prober down; the scheduler keeps publishing slot after slot.
    await prober.kill('SIGKILL');
    const published = await metric(scheduler, 'monitor_scheduling_delay_seconds_count');
    await eventually(
      `${OUTAGE_SLOTS} slots per endpoint published with no prober`,
      async () => (await metric(scheduler, 'monitor_scheduling_delay_seconds_count')) >= published + OUTAGE_SLOTS * ENDPOINTS,
      60_000,
    );
    expect(await metric(scheduler, 'monitor_probe_jobs_queued')).toBeLessThanOrEqual(ENDPOINTS);

    const spawnedAt = Date.now();
    await start('prober');
    const since = (id: number) => checks(id, `&from=${new Date(spawnedAt).toISOString()}`);
    const times = (list: { checked_at: string }[]) => list.map((check) => Date.parse(check.checked_at));
    for (const id of endpointIds) {
      // Wait until probing resumed and went on for WINDOW_S seconds, then count from the first check.
      const again = await eventually(`endpoint ${id} probed again`, async () => {
        const listed = await since(id);
        return listed.length > 0 ? listed : null;
      }, 120_000);
      const first = Math.min(...times(again));
      await eventually(`endpoint ${id} probed ${WINDOW_S} s after that`, async () => times(await since(id)).some((at) => at >= first + WINDOW_S * 1000), 60_000);
      const resumed = times(await since(id));
      const firstAt = Math.min(...resumed);
      const inWindow = resumed.filter((at) => at < firstAt + WINDOW_S * 1000);
      // From the first check on, WINDOW_S seconds hold at most WINDOW_S + 1 slots (one a second,
      // counting a slot due just before the first check and probed with it); the one job the
      // queue kept through the outage may add one more. The unbounded queue added every missed
      // slot here (OUTAGE_SLOTS, within a second or two).
      expect(inWindow.length).toBeLessThanOrEqual(WINDOW_S + 2);
    }
  });
});
