/**
 * The deployment the probe-region end-to-end tests share: a local nats-server, one process
 * running the API, projector and scheduler (ROLE=all, in a region no endpoint names, so it
 * probes nothing here), and a prober process per region, all on one DATA_DIR; a target that
 * fails requests by X-Probe-Region; and endpoints probed from every region, each of a team of
 * its own, read through the public API.
 */
import { startNatsServer, type TestNatsServer } from '../support/nats-server.js';
import { callService, type ServiceProcess, type SuiteServices, suiteServices } from '../support/service-process.js';
import { configuration, eventually, startTarget, type Target } from './support.js';

const ADMIN = 'probe-regions-admin-token-0123456789';

export interface RegionCheck {
  id: number;
  success: boolean;
  region: string;
  checked_at: string;
}

/** One endpoint probed from every region of the deployment, read with a reader token of its team. */
export interface RegionEndpoint {
  id: number;
  teamId: number;
  /** The endpoint as created (POST answer). */
  created: Record<string, any>;
  /** A GET with the reader token; fails the test unless it is a 200. */
  get(path: string): Promise<any>;
  /** Its scheduled checks from `region` at or after `from`, newest first (every page). */
  checks(region: string, from: string): Promise<RegionCheck[]>;
  incidents(): Promise<Array<Record<string, any>>>;
  alertStatus(): Promise<any>;
}

export interface RegionDeployment {
  main: ServiceProcess;
  /** The prober process of each region (the newest one started). */
  probers: Record<string, ServiceProcess>;
  /** Starts a new prober process for `region` (e.g. after one was killed). */
  startProber(region: string): Promise<ServiceProcess>;
  target: Target;
  /** A call with the admin token. */
  admin(method: string, path: string, body?: unknown): ReturnType<typeof callService>;
  /** A new team with an endpoint on the target probed from every region, enabled. */
  addEndpoint(intervalSeconds: number): Promise<RegionEndpoint>;
  close(): Promise<void>;
}

/** Starts the processes one after the other (several loading at once on a loaded 2-core machine each take longer than startService waits). */
export async function startRegionDeployment(prefix: string, regions: string[]): Promise<RegionDeployment> {
  let services: SuiteServices | undefined;
  let nats: TestNatsServer | null = null;
  let target: Target | undefined;
  const close = async () => {
    await services?.close();
    await target?.close();
    await nats?.stop();
  };
  try {
    services = await suiteServices(prefix);
    nats = await startNatsServer();
    target = await startTarget();
    const start = (env: Record<string, string>) => services!.start({ ADMIN_TOKEN: ADMIN, NATS_URL: nats!.url, ...env });
    const main = await start({ ROLE: 'all', PROBE_REGION: 'control' });
    const probers: Record<string, ServiceProcess> = {};
    const startProber = async (region: string) => (probers[region] = await start({ ROLE: 'prober', PROBE_REGION: region }));
    for (const region of regions) await startProber(region);

    const admin = (method: string, path: string, body?: unknown) => callService(main, method, path, ADMIN, body);
    const addEndpoint = async (intervalSeconds: number): Promise<RegionEndpoint> => {
      const team = (await admin('POST', '/api/v2/teams', { name: 'Regions' })).body.data;
      const project = (await admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Web', description: '' })).body.data;
      const reader = (await admin('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'r', scopes: ['monitoring:read', 'incidents:read'], role: 'viewer' })).body.data.token;
      const created = await admin('POST', `/api/v2/teams/${team.id}/endpoints`, {
        project_id: project.id,
        name: 'Shop',
        ...configuration(`${target!.url}/shop`, { interval_seconds: intervalSeconds, timeout_seconds: Math.min(2, intervalSeconds), latency_detection_mode: 'off' }),
        regions,
      });
      if (created.status !== 201) throw new Error(`endpoint not created: ${JSON.stringify(created.body)}`);
      const id: number = created.body.data.id;
      target!.tokens.set(id, created.body.data.verification_token);
      if ((await admin('POST', `/api/v2/teams/${team.id}/endpoints/${id}/verify-destination`)).status !== 200) throw new Error('destination not verified');
      if ((await admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${id}`, { enabled: true })).status !== 200) throw new Error('endpoint not enabled');

      const get = async (path: string) => {
        const response = await callService(main, 'GET', path, reader);
        if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(response.body)}`);
        return response.body;
      };
      const checks = async (region: string, from: string): Promise<RegionCheck[]> => {
        const all: RegionCheck[] = [];
        let cursor: string | null = null;
        do {
          const page: { data: RegionCheck[]; pagination: { next_cursor: string | null } } = await get(
            `/api/public/v2/endpoints/${id}/checks?source=scheduled&limit=100&region=${region}&from=${encodeURIComponent(from)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          );
          all.push(...page.data);
          cursor = page.pagination.next_cursor;
        } while (cursor);
        return all;
      };
      return {
        id,
        teamId: team.id,
        created: created.body.data,
        get,
        checks,
        incidents: async () => (await get(`/api/public/v2/incidents?endpoint_id=${id}`)).data,
        alertStatus: async () => (await get(`/api/public/v2/endpoints/${id}/alert-status`)).data,
      };
    };
    return { main, probers, startProber, target, admin, addEndpoint, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Every region probes the endpoint. */
export async function waitForEveryRegion(endpoint: RegionEndpoint, regions: string[], from: string): Promise<void> {
  for (const region of regions) await eventually(`checks from region ${region}`, async () => (await endpoint.checks(region, from)).length >= 2, 180_000);
}
