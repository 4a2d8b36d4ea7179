/**
 * An endpoint deleted while its automatic incident waits for its recovery
 * (docs/provisioning.md, "Deleting"): no recovery can come any more, so the incident stops
 * waiting for it. The deletion is in the incident's history; with auto_resolve on, an
 * incident left waiting for no endpoint resolves (one incident.resolved), and a grouped one
 * resolves when its other endpoints have recovered.
 *
 * Before the fix both incidents below stayed open for good: the deleted endpoint's own one,
 * and the group, which kept waiting for the deleted member after the other had recovered.
 * Read through the public API and the incident history route, as a consumer sees it.
 */
import { jest } from '@jest/globals';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { eventually, monitorTarget, startTarget, type Target } from './support.js';

jest.setTimeout(120_000);

const API = '/api/public/v2';
const RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 1, latency_trigger_window: 1, latency_recovery_count: 1 };

interface Incident {
  id: number;
  endpoint_ids: number[];
  resolved_at: string | null;
}

describe('an endpoint deleted while its automatic incident is open', () => {
  let t: TestApp;
  const targets: Target[] = [];
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    for (const target of targets) await target.close();
  });

  async function setUp(groupingSeconds: number) {
    const team = await t.createTeam('Deleted endpoints');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const project = (await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Shop', incident_grouping_seconds: groupingSeconds })).json().data;
    const monitor = async (): Promise<{ id: number; target: Target }> => {
      const target = await startTarget();
      targets.push(target);
      return { id: (await monitorTarget(t, team.id, target, 'health', RULES, { projectId: project.id })).id, target };
    };
    const incident = async (id: number): Promise<Incident> => (await t.request('GET', `${API}/incidents/${id}`, { token })).json().data;
    const incidents = async (): Promise<Incident[]> => (await t.request('GET', `${API}/incidents?project_id=${project.id}`, { token })).json().data;
    const history = async (id: number): Promise<Array<{ type: string; summary: string }>> =>
      (await t.admin('GET', `/api/v2/teams/${team.id}/incidents/${id}/history`)).json().data.events;
    const remove = async (endpointId: number) => expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/endpoints/${endpointId}`)).statusCode).toBe(204);
    return { monitor, incident, incidents, history, remove };
  }

  it('its own incident resolves, and the history says the endpoint was deleted', async () => {
    const { monitor, incidents, incident, history, remove } = await setUp(0);
    const endpoint = await monitor();
    endpoint.target.mode = { status: 503, delayMs: 0 };
    const open = await eventually('the endpoint’s incident', async () => (await incidents())[0]);
    await remove(endpoint.id);

    const resolved = await eventually('the incident to resolve', async () => ((await incident(open.id)).resolved_at !== null ? incident(open.id) : null));
    expect(resolved.endpoint_ids).toEqual([endpoint.id]);
    const events = await history(open.id);
    expect(events.filter((event) => event.type === 'IncidentEndpointRecovered').map((event) => event.summary)).toEqual([`Endpoint ${endpoint.id} deleted: no longer awaited`]);
    expect(events.filter((event) => event.type === 'IncidentResolved')).toHaveLength(1);
  });

  it('a grouped incident stops waiting for a deleted member and resolves when the others recover', async () => {
    const { monitor, incidents, incident, history, remove } = await setUp(3600);
    const [web, api] = [await monitor(), await monitor()];
    web.target.mode = { status: 503, delayMs: 0 };
    api.target.mode = { status: 503, delayMs: 0 };
    const group = await eventually('one incident for both', async () => (await incidents()).find((found) => found.endpoint_ids.length === 2));
    await remove(api.id);
    web.target.mode = { status: 200, delayMs: 0 };

    await eventually('the group to resolve', async () => (await incident(group.id)).resolved_at);
    const recorded = (await history(group.id)).filter((event) => event.type === 'IncidentEndpointRecovered').map((event) => event.summary);
    expect(recorded).toEqual([`Endpoint ${api.id} deleted: no longer awaited`, `Endpoint ${web.id} recovered`]);
  });
});
