import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EndpointConfiguration } from '../../src/monitoring/domain/endpoint-configuration.js';
import { DEFAULT_CONFIGURATION } from '../../src/monitoring/domain/endpoint.js';
import type { RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { NATS_SKIP_REASON, startNatsServer, type TestNatsServer } from '../support/nats-server.js';
import { ADMIN_TOKEN, ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { autoIncidentsReactor } from '../../src/alerting/reactors/auto-incidents.js';
import { loadConfig } from '../../src/platform/config/config.js';
import { silentLogger } from '../../src/platform/logging/logger.js';
import { createPlatform } from '../../src/platform/platform.js';
import { ProjectionRunner } from '../../src/platform/projections/projection-runner.js';
import type { ProbeJob } from '../../src/platform/transport/probe-transport.port.js';

/** A local HTTP target whose answer (status, delay) the test controls. */
export interface Target {
  url: string;
  mode: { status: number; delayMs: number };
  /** Statuses answered by the next probes, in order, before `mode` applies again. */
  script: number[];
  tokens: Map<number, string>;
  hits: number;
  /** X-Probe-Region of every probe request, in arrival order (`(none)` when absent). */
  regions: string[];
  /** Probe requests from these regions (by X-Probe-Region) are answered 503. */
  failingRegions: Set<string>;
  close(): Promise<void>;
}

export async function startTarget(): Promise<Target> {
  const target = { mode: { status: 200, delayMs: 0 }, script: [] as number[], tokens: new Map<number, string>(), hits: 0, regions: [] as string[], failingRegions: new Set<string>() } as Target;
  /** Answers still waiting out their delay; dropped on close so a long hold never outlives the test. */
  const held = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request, response) => {
    const verification = /^\/\.well-known\/monitor-verification\/(\d+)$/.exec(request.url ?? '');
    if (verification) {
      const token = target.tokens.get(Number(verification[1]));
      response.writeHead(token ? 200 : 404).end(token ? `${token}\n` : 'unknown');
      return;
    }
    target.hits++;
    const region = String(request.headers['x-probe-region'] ?? '(none)');
    target.regions.push(region);
    const { delayMs } = target.mode;
    let status = target.script.length > 0 ? target.script.shift()! : target.mode.status;
    if (target.failingRegions.has(region)) status = 503;
    const answer = setTimeout(() => {
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status < 400 ? 'ok' : 'down');
    }, delayMs);
    held.add(answer);
    response.once('close', () => {
      clearTimeout(answer); // the client went away (e.g. a killed prober): nothing to answer
      held.delete(answer);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  target.close = () =>
    new Promise<void>((resolve) => {
      for (const answer of held) clearTimeout(answer);
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return target;
}

export function configuration(url: string, overrides: Partial<EndpointConfiguration> = {}): EndpointConfiguration {
  return {
    ...DEFAULT_CONFIGURATION,
    url,
    interval_seconds: 1,
    timeout_seconds: 1,
    ...overrides,
  };
}

/** Registers an endpoint through the monitoring admin routes (in `projectId`, else a project of its own). */
export async function registerEndpoint(t: TestApp, teamId: number, config: EndpointConfiguration, projectId?: number): Promise<{ id: number; token: string }> {
  if (projectId === undefined) {
    const project = await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'P', description: '' });
    if (project.statusCode !== 201) throw new Error(`create project: ${project.statusCode} ${project.body}`);
    projectId = project.json().data.id as number;
  }
  const created = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: projectId, name: 'Target', ...config });
  if (created.statusCode !== 201) throw new Error(`create endpoint: ${created.statusCode} ${created.body}`);
  const data = created.json().data;
  return { id: data.id, token: data.verification_token };
}

export async function enableEndpoint(t: TestApp, teamId: number, endpointId: number): Promise<void> {
  const response = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { enabled: true });
  if (response.statusCode !== 200) throw new Error(`enable endpoint: ${response.statusCode} ${response.body}`);
}

/**
 * An endpoint probing `target` at `path`: registered (in `projectId`, else a project of its own), its verification
 * token handed to the target, its destination verified, and enabled unless `enabled: false`
 * (suites that hand jobs to a prober themselves and want no scheduled checks).
 */
export async function monitorTarget(
  t: TestApp,
  teamId: number,
  target: Target,
  path: string,
  overrides: Partial<EndpointConfiguration> = {},
  { enabled = true, projectId }: { enabled?: boolean; projectId?: number } = {},
): Promise<{ id: number; token: string }> {
  const endpoint = await registerEndpoint(t, teamId, configuration(`${target.url}/${path}`, overrides), projectId);
  target.tokens.set(endpoint.id, endpoint.token);
  const verified = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}/verify-destination`);
  if (verified.statusCode !== 200) throw new Error(`verify destination: ${verified.statusCode} ${verified.body}`);
  if (enabled) await enableEndpoint(t, teamId, endpoint.id);
  return endpoint;
}

/** A test app started before the enclosing describe's tests, and the targets its endpoints probe; all closed after them. */
export function incidentsAppBeforeAll(): { t: TestApp; targets: Target[] } {
  return startedBeforeAll(
    async () => ({ t: await startTestApp(), targets: [] as Target[] }),
    async ({ t, targets }) => {
      await t.close();
      for (const target of targets) await target.close();
    },
  );
}

/** An automatic incident as the public API shows it (the fields the alerting suites read). */
export interface PublicIncident {
  id: number;
  project_id: number;
  error_count: number;
  metadata: { suppressed_endpoint_ids?: number[] };
  endpoint_ids: number[];
  auto_resolve: boolean;
  resolved_at: string | null;
}

const INCIDENT_RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 1, latency_trigger_window: 1, latency_recovery_count: 1 };

/**
 * A team with one project (`incident_grouping_seconds` as given) whose endpoints each probe a
 * target of their own (closed with `targets`), triggering on one failing check and recovering
 * on one success; and how the alerting suites read its incidents through the public API.
 */
export async function incidentsProject(t: TestApp, targets: Target[], groupingSeconds: number) {
  const team = await t.createTeam('Automatic incidents');
  const { token } = await t.issueToken(team.id, ALL_SCOPES);
  const project = (await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Shop', incident_grouping_seconds: groupingSeconds })).json().data;
  const monitor = async (overrides: Partial<EndpointConfiguration> = {}): Promise<{ id: number; target: Target }> => {
    const target = await startTarget();
    targets.push(target);
    return { id: (await monitorTarget(t, team.id, target, 'health', { ...INCIDENT_RULES, ...overrides }, { projectId: project.id })).id, target };
  };
  const incident = async (id: number): Promise<PublicIncident> => (await t.request('GET', `/api/public/v2/incidents/${id}`, { token })).json().data;
  const incidents = async (): Promise<PublicIncident[]> => (await t.request('GET', `/api/public/v2/incidents?project_id=${project.id}`, { token })).json().data;
  const history = async (id: number): Promise<Array<{ type: string; summary: string }>> =>
    (await t.admin('GET', `/api/v2/teams/${team.id}/incidents/${id}/history`)).json().data.events;
  return { team, project, token, monitor, incident, incidents, history };
}

interface HarnessOptions {
  /** A webhook receiver on a real socket. */
  receiver?: boolean;
  /** A NATS server for the suite's own transports (null when there is none: the suite decides). */
  nats?: boolean;
  /** A NATS server the test app probes over (NATS_URL); its absence fails the start. */
  appOverNats?: boolean;
}

export type Harness<O extends HarnessOptions> = {
  t: TestApp;
  target: Target;
  /** Stops what started, in reverse order. */
  close(): Promise<void>;
} & (O['receiver'] extends true ? { receiver: Receiver } : unknown) &
  (O['nats'] extends true ? { nats: TestNatsServer | null } : O['appOverNats'] extends true ? { nats: TestNatsServer } : unknown);

/**
 * What the suites that run the whole service in this process share: a NATS server when asked,
 * a local target, a webhook receiver when asked, and the test app, started in that order and
 * closed in reverse. A start that fails part way closes what had started before it throws.
 */
export async function startHarness<O extends HarnessOptions>(options: O): Promise<Harness<O>> {
  const stops: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  };
  try {
    const nats = options.nats || options.appOverNats ? await startNatsServer() : null;
    if (nats) stops.push(() => nats.stop());
    const target = await startTarget();
    stops.push(() => target.close());
    if (options.appOverNats && !nats) throw new Error(`describeWithNats ran this suite, yet: ${NATS_SKIP_REASON}`);
    const receiver = options.receiver ? await startReceiver() : undefined;
    if (receiver) stops.push(() => receiver.close());
    const t = await startTestApp(options.appOverNats ? { NATS_URL: nats!.url } : {});
    stops.push(() => t.close());
    return { t, target, receiver, nats, close } as unknown as Harness<O>;
  } catch (error) {
    await close();
    throw error;
  }
}

export async function allEvents(t: TestApp): Promise<RecordedEvent<any>[]> {
  const events: RecordedEvent<any>[] = [];
  let after: number | null = null;
  for (let page = 0; page < 10_000; page++) {
    const batch = await t.platform.events.readAll({ after, maxCount: 1000 });
    events.push(...batch);
    if (batch.length < 1000) break;
    after = batch[batch.length - 1].position;
  }
  return events;
}

/** The one polling helper, re-exported for the end-to-end tests that import it from here. */
export { eventually } from '../support/eventually.js';

/** A probe job for one endpoint, as a manual check would publish it, with a fresh job id. */
export function manualJob(teamId: number, endpointId: number): ProbeJob {
  return { jobId: `${endpointId}:${Date.now()}`, teamId, endpointId, configurationVersion: 1, source: 'manual', scheduledAt: new Date().toISOString() };
}

/**
 * A second process's automatic-incident reactor over `t`'s stores that never asks for the lease:
 * it handles every event the first one handles, as a paused process that lost its lease would.
 * Returns how to stop it.
 */
export async function startRogueIncidentReactor(t: TestApp): Promise<() => Promise<void>> {
  const rogue = await createPlatform(loadConfig({ DATA_DIR: t.dataDir, ADMIN_TOKEN, LOG_LEVEL: 'silent' }), {
    projections: [],
    withRunner: false,
    withTransport: false,
    logger: silentLogger,
  });
  const runner = new ProjectionRunner(rogue.events, rogue.views, [], { owner: 'rogue', logger: silentLogger, coordination: null });
  await runner.run(autoIncidentsReactor(rogue));
  return async () => {
    await runner.stop();
    await rogue.close();
  };
}
