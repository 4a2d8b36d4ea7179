import { createEndpoint, createProject, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

/** depends_on and the flapping settings (issue 26) as a client sets and reads them. */
describe('endpoint dependencies and flapping settings', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  const errorsOf = (response: { json(): any }) => response.json().errors.map((e: any) => ({ field: e.field, code: e.code }));
  const patch = (teamId: number, endpointId: number, body: Record<string, unknown>) => t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, body);

  it('shows the defaults in both APIs: no dependencies, flap_threshold 6 within 3,600 s', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const expected = { depends_on: [], flap_threshold: 6, flap_window_seconds: 3600 };
    expect(endpoint).toMatchObject(expected);
    expect((await patch(teamId, endpoint.id, { name: 'Renamed' })).json().data).toMatchObject(expected);
    expect((await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}`, { token })).json().data).toMatchObject(expected);
  });

  it('stores dependencies on the team’s endpoints and flapping settings, and shows them', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const gateway = await createEndpoint(t, teamId, project.id);
    const database = await createEndpoint(t, teamId, project.id);
    const api = await createEndpoint(t, teamId, project.id, { depends_on: [gateway.id, database.id], flap_threshold: 4, flap_window_seconds: 600 });
    expect(api).toMatchObject({ depends_on: [gateway.id, database.id], flap_threshold: 4, flap_window_seconds: 600 });
    const updated = await patch(teamId, api.id, { depends_on: [database.id] });
    expect(updated.statusCode).toBe(200);
    expect((await t.request('GET', `/api/public/v2/endpoints/${api.id}`, { token })).json().data).toMatchObject({ depends_on: [database.id], flap_threshold: 4 });
  });

  it('refuses another team’s endpoint, an unknown one, itself and a repeat with 400 validation_failed naming depends_on', async () => {
    const { teamId } = await readerTeam(t);
    const other = await readerTeam(t);
    const project = await createProject(t, teamId);
    const foreign = await createEndpoint(t, other.teamId, (await createProject(t, other.teamId)).id);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const sibling = await createEndpoint(t, teamId, project.id);

    const created = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: project.id, name: 'x', url: 'https://example.com/', depends_on: [foreign.id, 99_999_999] });
    expect(created.statusCode).toBe(400);
    expect(created.json()).toMatchObject({ code: 'validation_failed' });
    expect(errorsOf(created)).toEqual([{ field: 'depends_on', code: 'not_found' }]);
    expect(created.json().errors[0].message).toBe(`names endpoints that are not endpoints of this team: ${foreign.id}, 99999999`);

    const self = await patch(teamId, endpoint.id, { depends_on: [endpoint.id] });
    expect(self.statusCode).toBe(400);
    expect(errorsOf(self)).toEqual([{ field: 'depends_on', code: 'invalid_value' }]);

    const twice = await patch(teamId, endpoint.id, { depends_on: [sibling.id, sibling.id] });
    expect(twice.statusCode).toBe(400);
    expect(errorsOf(twice)).toEqual([{ field: 'depends_on', code: 'invalid_value' }]);

    const tooMany = await patch(teamId, endpoint.id, { depends_on: Array.from({ length: 21 }, (_, i) => i + 1) });
    expect(tooMany.statusCode).toBe(400);
    expect(errorsOf(tooMany).map((e: any) => e.field)).toEqual(['depends_on']);
  });

  it('refuses a cycle, direct or through other endpoints, naming its path', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const a = await createEndpoint(t, teamId, project.id);
    const b = await createEndpoint(t, teamId, project.id, { depends_on: [a.id] });
    const c = await createEndpoint(t, teamId, project.id, { depends_on: [b.id] });

    const direct = await patch(teamId, a.id, { depends_on: [b.id] });
    expect(direct.statusCode).toBe(400);
    expect(direct.json().errors).toEqual([expect.objectContaining({ field: 'depends_on', code: 'invalid_value', message: `would form a cycle: ${a.id} -> ${b.id} -> ${a.id}` })]);

    const through = await patch(teamId, a.id, { depends_on: [c.id] });
    expect(through.statusCode).toBe(400);
    expect(through.json().errors[0].message).toBe(`would form a cycle: ${a.id} -> ${c.id} -> ${b.id} -> ${a.id}`);

    // A diamond is not a cycle.
    expect((await patch(teamId, c.id, { depends_on: [b.id, a.id] })).statusCode).toBe(200);
  });

  it('refuses flapping settings out of range', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    for (const body of [{ flap_threshold: 1 }, { flap_threshold: 51 }, { flap_window_seconds: 59 }, { flap_window_seconds: 86_401 }]) {
      const response = await patch(teamId, endpoint.id, body);
      expect(response.statusCode).toBe(400);
      expect(errorsOf(response).map((e: any) => e.field)).toEqual(Object.keys(body));
    }
  });
});
