/**
 * Probes from three regions with a quorum (issue 25), with real processes: a local nats-server,
 * one process running the API, projector and scheduler (ROLE=all, in a region no endpoint names,
 * so it probes nothing here), and three prober processes in regions a, b and c, all on one
 * DATA_DIR. The target fails requests by X-Probe-Region. Everything is read through the public
 * API.
 * - a failing alone: ten intervals of failing a-checks, no incident; a's own signal shows in
 *   alert status, the quorum result stays ok.
 * - a and b failing: an incident naming both (c up), opened by b's third failing check at the
 *   latest (trigger_count 3 of each region's checks).
 * - all healthy: the incident resolves (auto_resolve).
 */
import { jest } from '@jest/globals';
import { describeWithNats, startNatsServer, type TestNatsServer } from '../support/nats-server.js';
import { callService, type SuiteServices, suiteServices } from '../support/service-process.js';
import { configuration, eventually, startTarget, type Target } from './support.js';

jest.setTimeout(600_000);

const ADMIN = 'probe-regions-admin-token-0123456789';
const INTERVAL_S = 3;
const REGIONS = ['a', 'b', 'c'];

interface Check {
  id: number;
  success: boolean;
  region: string;
  checked_at: string;
}

describeWithNats('probes from regions a, b and c with a quorum of two (real processes)', () => {
  let services: SuiteServices;
  let nats: TestNatsServer | null = null;
  let target: Target;

  beforeAll(async () => {
    services = await suiteServices('probe-regions-');
    nats = await startNatsServer();
    target = await startTarget();
  });
  afterAll(async () => {
    await services?.close();
    await target?.close();
    await nats?.stop();
  });

  const start = (env: Record<string, string>) => services.start({ ADMIN_TOKEN: ADMIN, NATS_URL: nats!.url, ...env });

  it('opens an incident only when two of three regions fail, naming them, and resolves it when all recover', async () => {
    // One after the other: several processes loading at once on a loaded 2-core machine each take longer than startService waits.
    const main = await start({ ROLE: 'all', PROBE_REGION: 'control' });
    for (const region of REGIONS) await start({ ROLE: 'prober', PROBE_REGION: region });

    const admin = (method: string, path: string, body?: unknown) => callService(main, method, path, ADMIN, body);
    const team = (await admin('POST', '/api/v2/teams', { name: 'Regions' })).body.data;
    const project = (await admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Web', description: '' })).body.data;
    const reader = (await admin('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'r', scopes: ['monitoring:read', 'incidents:read'], role: 'viewer' })).body.data.token;
    const created = await admin('POST', `/api/v2/teams/${team.id}/endpoints`, {
      project_id: project.id,
      name: 'Shop',
      ...configuration(`${target.url}/shop`, { interval_seconds: INTERVAL_S, timeout_seconds: 2, latency_detection_mode: 'off' }),
      regions: REGIONS,
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ regions: REGIONS, region_quorum: 2 });
    const endpointId = created.body.data.id;
    target.tokens.set(endpointId, created.body.data.verification_token);
    expect((await admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpointId}/verify-destination`)).status).toBe(200);
    expect((await admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpointId}`, { enabled: true })).status).toBe(200);

    const get = async (path: string) => {
      const response = await callService(main, 'GET', path, reader);
      expect([path, response.status]).toEqual([path, 200]);
      return response.body;
    };
    const checks = async (region: string, from: string): Promise<Check[]> =>
      (await get(`/api/public/v2/endpoints/${endpointId}/checks?source=scheduled&limit=100&region=${region}&from=${encodeURIComponent(from)}`)).data;
    const incidents = async () => (await get(`/api/public/v2/incidents?endpoint_id=${endpointId}`)).data as Array<Record<string, any>>;
    const alertStatus = async () => (await get(`/api/public/v2/endpoints/${endpointId}/alert-status`)).data;

    // Every region probes it, and the probes say where they come from.
    const began = new Date().toISOString();
    for (const region of REGIONS) await eventually(`checks from region ${region}`, async () => (await checks(region, began)).length >= 2, 180_000);
    expect(new Set(target.regions)).toEqual(new Set(REGIONS));
    const regions = (await admin('GET', '/api/v2/regions')).body.data as Array<{ name: string; probers: number; endpoints: number }>;
    for (const region of REGIONS) expect(regions.find((r) => r.name === region)).toMatchObject({ probers: 1, endpoints: 1 });

    // Region a fails alone for ten intervals: its checks fail, its own signal triggers, nothing opens.
    const aFailsFrom = new Date().toISOString();
    target.failingRegions = new Set(['a']);
    await eventually('ten failing checks from region a', async () => (await checks('a', aFailsFrom)).filter((check) => !check.success).length >= 10, 180_000);
    const aChecks = await checks('a', aFailsFrom);
    expect(aChecks.filter((check) => !check.success).length).toBeGreaterThanOrEqual(10);
    expect((await checks('b', aFailsFrom)).every((check) => check.success)).toBe(true);
    const lonely = await alertStatus();
    expect(lonely.signals[0]).toMatchObject({ type: 'availability', state: 'ok', incident_id: null });
    expect(lonely.regions.find((r: { name: string }) => r.name === 'a').signals[0].state).toBe('triggered');
    expect(lonely.quorum.availability).toMatchObject({ failing: ['a'], triggered: false });
    expect(await incidents()).toEqual([]);

    // a and b fail: an incident naming both, c up.
    const bFailsFrom = new Date().toISOString();
    target.failingRegions = new Set(['a', 'b']);
    const [incident] = await eventually('an automatic incident', async () => {
      const list = await incidents();
      return list.length > 0 ? list : null;
    }, 180_000);
    expect(incident).toMatchObject({ source: 'automatic', type: 'availability', auto_resolve: true, resolved_at: null });
    expect(incident.detection_reason).toBe('2 of 3 regions failing: a, b; c up');
    expect(incident.metadata).toEqual({ regions: { failing: ['a', 'b'], up: ['c'], unknown: [] } });
    // The reactor opens the incident, then links the signal to it in a second append: the
    // incidents view may show the incident a moment before the alert status shows the link.
    const down = await eventually('the signal linked to the incident', async () => {
      const status = await alertStatus();
      return status.signals[0].incident_id === incident.id ? status : null;
    }, 60_000);
    expect(down.signals[0]).toMatchObject({ state: 'triggered', incident_id: incident.id });
    // Opened on b's third failing check at the latest: within three intervals of b failing.
    const bFailuresBefore = (await checks('b', bFailsFrom)).filter((check) => !check.success && Date.parse(check.checked_at) <= Date.parse(down.signals[0].since));
    expect(bFailuresBefore.length).toBeGreaterThanOrEqual(1);
    expect(bFailuresBefore.length).toBeLessThanOrEqual(3);

    // Everyone healthy again: the incident resolves by itself.
    target.failingRegions = new Set();
    const resolved = await eventually('the incident resolved', async () => {
      const [latest] = await incidents();
      return latest?.resolved_at ? latest : null;
    }, 180_000);
    expect(resolved.id).toBe(incident.id);
    // Two views, each at its own position: the alert status shows the recovery once it applied it.
    await eventually('the signal ok again', async () => (await alertStatus()).signals[0].state === 'ok', 60_000);
    expect(await incidents()).toHaveLength(1);
  });
});
