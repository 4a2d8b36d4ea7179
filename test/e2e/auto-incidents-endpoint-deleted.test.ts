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
import { eventually, incidentsAppBeforeAll, incidentsProject } from './support.js';

jest.setTimeout(120_000);

describe('an endpoint deleted while its automatic incident is open', () => {
  const app = incidentsAppBeforeAll();

  async function setUp(groupingSeconds: number) {
    const project = await incidentsProject(app.t, app.targets, groupingSeconds);
    const remove = async (endpointId: number) => expect((await app.t.admin('DELETE', `/api/v2/teams/${project.team.id}/endpoints/${endpointId}`)).statusCode).toBe(204);
    return { ...project, remove };
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
