/**
 * Incident grouping end to end (issue 26 item 2): the built service in a child process, a project
 * with `incident_grouping_seconds: 60` and three endpoints on one local target, and a webhook
 * receiver. When the target goes down, the three endpoints open one automatic incident with three
 * endpoint_ids (the history shows two joins) and the receiver gets exactly one incident.opened;
 * when it comes back, each endpoint's recovery is recorded and the incident resolves once.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { buildService, callService, startService, type ServiceBuild, type ServiceProcess } from '../support/service-process.js';
import { eventually } from '../support/eventually.js';
import { startTarget, type Target } from './support.js';

jest.setTimeout(240_000);

const ADMIN = 'grouping-admin-token-0123456789';
const RULES = { interval_seconds: 1, timeout_seconds: 1, latency_detection_mode: 'off', latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 2 };

describe('incident grouping', () => {
  let build: ServiceBuild;
  let service: ServiceProcess | undefined;
  let target: Target;
  let receiver: Receiver;
  let dataDir: string;

  beforeAll(async () => {
    build = await buildService('incident-grouping');
    target = await startTarget();
    receiver = await startReceiver();
    dataDir = mkdtempSync(join(tmpdir(), 'monitor-grouping-'));
  });
  afterAll(async () => {
    await service?.kill();
    await target?.close();
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('three endpoints of a project failing together open one incident and one incident.opened', async () => {
    service = await startService(build, { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN });
    const call = (method: string, path: string, body?: unknown, token = ADMIN) => callService(service!, method, path, token, body);
    const team = (await call('POST', '/api/v2/teams', { name: 'Grouping' })).body.data;
    const token = (await call('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'r', scopes: ['incidents:read'], role: 'viewer' })).body.data.token;
    expect((await call('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/ops` } })).status).toBe(201);
    const created = await call('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Shop', incident_grouping_seconds: 60 });
    expect(created.status).toBe(201);
    expect(created.body.data.incident_grouping_seconds).toBe(60);
    const project = created.body.data;

    const endpointIds: number[] = [];
    for (const name of ['web', 'api', 'cart']) {
      const response = await call('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name, url: `${target.url}/${name}`, ...RULES });
      expect(response.status).toBe(201);
      const endpoint = response.body.data;
      target.tokens.set(endpoint.id, endpoint.verification_token);
      expect((await call('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`)).status).toBe(200);
      endpointIds.push(endpoint.id);
    }
    for (const id of endpointIds) expect((await call('PATCH', `/api/v2/teams/${team.id}/endpoints/${id}`, { enabled: true })).status).toBe(200);
    await eventually('each endpoint probed', async () => target.hits >= 6);

    target.mode = { status: 503, delayMs: 0 };
    const read = (path: string) => call('GET', path, undefined, token);
    const grouped = await eventually('one incident naming the three endpoints', async () => {
      const listed = (await read(`/api/public/v2/incidents?project_id=${project.id}`)).body.data;
      return listed.length === 1 && listed[0].endpoint_ids.length === 3 ? listed[0] : null;
    }, { timeoutMs: 60_000 });
    expect([...grouped.endpoint_ids].sort()).toEqual([...endpointIds].sort());
    expect(grouped).toMatchObject({ source: 'automatic', type: 'availability', severity: 'critical', resolved_at: null });
    expect(grouped.error_count).toBeGreaterThanOrEqual(6); // the failing checks of each endpoint's run

    await eventually('incident.updated for the two joins', async () => receiver.of('incident.updated').length >= 2);
    const history = (await call('GET', `/api/v2/teams/${team.id}/incidents/${grouped.id}/history`)).body.data.events;
    expect(history.filter((entry: { type: string }) => entry.type === 'IncidentEndpointJoined')).toHaveLength(2);

    target.mode = { status: 200, delayMs: 0 };
    await eventually('the grouped incident to resolve', async () => (await read(`/api/public/v2/incidents/${grouped.id}`)).body.data.resolved_at !== null, { timeoutMs: 60_000 });
    const after = (await call('GET', `/api/v2/teams/${team.id}/incidents/${grouped.id}/history`)).body.data.events;
    const recovered = after.filter((entry: { type: string }) => entry.type === 'IncidentEndpointRecovered');
    expect(recovered).toHaveLength(3);
    const resolvedAt = after.findIndex((entry: { type: string }) => entry.type === 'IncidentResolved');
    expect(resolvedAt).toBeGreaterThan(after.indexOf(recovered[2]));
    await eventually('incident.resolved', async () => receiver.of('incident.resolved').length > 0);

    expect((await read(`/api/public/v2/incidents?project_id=${project.id}`)).body.data).toHaveLength(1);
    expect(receiver.of('incident.opened')).toHaveLength(1);
    expect(receiver.of('incident.resolved')).toHaveLength(1);
    expect(receiver.of('incident.opened')[0].json.data.incident.id).toBe(grouped.id);
  });
});
