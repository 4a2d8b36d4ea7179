/**
 * An automatic incident kept open by `auto_resolve: false` after everything it waited for
 * recovered (docs/decisions.md, "Alerting and automatic incidents"): turning auto_resolve back
 * on resolves it at once, with the resolution a recovery would have given (IncidentResolved by
 * `automatic`, so one incident.resolved notification) and a history entry that says why.
 *
 * Before the fix both incidents below stayed open for good: the ungrouped one did not record
 * its endpoint's recovery while auto_resolve was off, and neither incident looked at its
 * recoveries when auto_resolve came back on. Read through the public API and the incident
 * history route, as a consumer sees it.
 */
import { jest } from '@jest/globals';
import { allEvents, eventually, incidentsAppBeforeAll, incidentsProject, type PublicIncident } from './support.js';

jest.setTimeout(120_000);

const API = '/api/public/v2';
const WHY = 'Resolved (automatic): automatic resolution turned on after every endpoint had recovered';

describe('auto_resolve turned back on after the recoveries', () => {
  const app = incidentsAppBeforeAll();

  async function setUp(groupingSeconds: number) {
    const project = await incidentsProject(app.t, app.targets, groupingSeconds);
    const { token, history } = project;
    const setAutoResolve = async (id: number, on: boolean): Promise<PublicIncident> => {
      const response = await app.t.request('PATCH', `${API}/incidents/${id}/status`, { token, body: { auto_resolve: on } });
      expect(response.statusCode).toBe(200);
      return response.json().data;
    };
    const availability = async (endpointId: number): Promise<string> =>
      (await app.t.request('GET', `${API}/endpoints/${endpointId}/alert-status`, { token })).json().data.signals.find((signal: { type: string }) => signal.type === 'availability').state;
    /** Every endpoint's signal recovered, and the incident reactor handled the recoveries (their history entries), or the wait gave up (before the fix none was recorded). */
    const recovered = async (incidentId: number, endpointIds: number[]): Promise<void> => {
      for (const id of endpointIds) await eventually(`endpoint ${id} to recover`, async () => (await availability(id)) === 'ok');
      const recorded = async () => (await history(incidentId)).filter((event) => event.type === 'IncidentEndpointRecovered').length;
      await eventually('the recoveries in the history', async () => (await recorded()) === endpointIds.length, 20_000).catch(() => undefined);
    };
    const resolutions = async (incidentId: number) =>
      (await allEvents(app.t)).filter((event) => event.type === 'IncidentResolved' && event.data.incident_id === incidentId).map((event) => event.data.by);
    return { ...project, setAutoResolve, recovered, resolutions };
  }

  it('resolves an endpoint’s incident at once, saying why', async () => {
    const { monitor, incidents, setAutoResolve, history, recovered, resolutions } = await setUp(0);
    const endpoint = await monitor();
    endpoint.target.mode = { status: 503, delayMs: 0 };
    const open = await eventually('the endpoint’s incident', async () => (await incidents())[0]);
    expect((await setAutoResolve(open.id, false)).auto_resolve).toBe(false);
    endpoint.target.mode = { status: 200, delayMs: 0 };
    await recovered(open.id, [endpoint.id]);
    expect((await incidents()).find((incident) => incident.id === open.id)?.resolved_at).toBeNull();

    const turnedOn = await setAutoResolve(open.id, true);
    expect(turnedOn).toMatchObject({ auto_resolve: true, resolved_at: expect.any(String) });
    const summaries = (await history(open.id)).map((event) => event.summary);
    expect(summaries.slice(-2)).toEqual(['Automatic resolution turned on', WHY]);
    expect(await resolutions(open.id)).toEqual(['automatic']);
  });

  it('resolves a grouped incident once every member recovered', async () => {
    const { monitor, incidents, setAutoResolve, history, recovered, resolutions } = await setUp(3600);
    const [web, api] = [await monitor(), await monitor()];
    web.target.mode = { status: 503, delayMs: 0 };
    api.target.mode = { status: 503, delayMs: 0 };
    const group = await eventually('one incident for both', async () => (await incidents()).find((found) => found.endpoint_ids.length === 2));
    await setAutoResolve(group.id, false);
    web.target.mode = { status: 200, delayMs: 0 };
    api.target.mode = { status: 200, delayMs: 0 };
    await recovered(group.id, [web.id, api.id]);
    expect((await incidents()).find((incident) => incident.id === group.id)?.resolved_at).toBeNull();

    expect((await setAutoResolve(group.id, true)).resolved_at).not.toBeNull();
    expect((await history(group.id)).map((event) => event.summary).slice(-1)).toEqual([WHY]);
    expect(await resolutions(group.id)).toEqual(['automatic']);
  });
});
