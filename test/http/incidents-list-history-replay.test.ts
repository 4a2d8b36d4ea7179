import { createIncident, INCIDENTS, teamWithMonitoring, type TeamFixture } from '../support/incident-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

describe('incident list filters, history and replay', () => {
  let t: TestApp;
  let f: TeamFixture;
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    t = await startTestApp();
    f = await teamWithMonitoring(t);
    ids.a = (await createIncident(t, f, { endpoint_ids: [f.endpoints[0]], severity: 'critical', type: 'db', last_error_at: '2030-01-01T10:00:00Z', first_error_at: '2026-01-01T00:00:00Z' })).id;
    ids.b = (await createIncident(t, f, { project_id: f.otherProjectId, endpoint_ids: [f.otherEndpoint], status: 'Monitoring', first_error_at: '2026-01-01T00:00:00Z', last_error_at: '2026-01-01T05:00:00Z' })).id;
    ids.c = (await createIncident(t, f, { endpoint_ids: [f.endpoints[1], f.endpoints[0]], first_error_at: '2026-01-01T00:00:00Z', last_error_at: '2026-01-01T06:00:00Z' })).id;
    await t.request('PATCH', `${INCIDENTS}/${ids.c}/status`, { token: f.editor, body: { resolved: true } });
    const other = await t.createTeam('Other team');
    ids.foreignTeam = other.id;
  });
  afterAll(async () => {
    await t.close();
  });

  const list = async (query: Record<string, string> = {}) => {
    const response = await t.request('GET', INCIDENTS, { token: f.editor, query });
    expect(response.statusCode).toBe(200);
    return response.json().data.map((i: { id: number }) => i.id);
  };

  it('lists id descending and filters by every documented parameter', async () => {
    const statuses = (await t.request('GET', '/api/public/v2/incident-statuses', { token: f.editor })).json().data;
    expect(await list()).toEqual([ids.c, ids.b, ids.a]);
    expect(await list({ project_id: String(f.projectId) })).toEqual([ids.c, ids.a]);
    expect(await list({ endpoint_id: String(f.endpoints[0]) })).toEqual([ids.c, ids.a]);
    expect(await list({ endpoint_id: String(f.otherEndpoint) })).toEqual([ids.b]);
    expect(await list({ status_id: String(statuses[2].id) })).toEqual([ids.b]);
    expect(await list({ state: 'resolved' })).toEqual([ids.c]);
    expect(await list({ state: 'open' })).toEqual([ids.b, ids.a]);
    expect(await list({ severity: 'critical' })).toEqual([ids.a]);
    expect(await list({ type: 'db' })).toEqual([ids.a]);
    expect(await list({ type: 'manual', source: 'manual' })).toEqual([ids.c, ids.b]);
    expect(await list({ source: 'automatic' })).toEqual([]);
    expect(await list({ from: '2026-01-01T06:00:00Z' })).toEqual([ids.c, ids.a]);
    expect(await list({ to: '2026-01-01T06:00:00Z' })).toEqual([ids.b]);
    expect(await list({ from: '2026-01-01T07:00:00+02:00', to: '2026-01-01T06:00:00.001Z' })).toEqual([ids.c, ids.b]);
  });

  it('pages with a cursor bound to its filters', async () => {
    const first = (await t.request('GET', INCIDENTS, { token: f.editor, query: { limit: '2' } })).json();
    expect(first.data.map((i: any) => i.id)).toEqual([ids.c, ids.b]);
    expect(first.pagination).toEqual({ next_cursor: expect.any(String), has_more: true });
    const second = (await t.request('GET', INCIDENTS, { token: f.editor, query: { limit: '2', cursor: first.pagination.next_cursor } })).json();
    expect(second.data.map((i: any) => i.id)).toEqual([ids.a]);
    expect(second.pagination).toEqual({ next_cursor: null, has_more: false });
    const rebound = await t.request('GET', INCIDENTS, { token: f.editor, query: { limit: '2', severity: 'warning', cursor: first.pagination.next_cursor } });
    expect(rebound.json().code).toBe('invalid_cursor');
  });

  it('never lists another team’s incidents', async () => {
    const { token } = await t.issueToken(ids.foreignTeam, ['incidents:read']);
    expect((await t.request('GET', INCIDENTS, { token })).json().data).toEqual([]);
  });

  it('gives auditors every event with actor, request id and changes, and the state at a past time', async () => {
    const incident = await createIncident(t, f, { title: 'Audited' });
    const afterCreate = new Date().toISOString();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await t.request('PATCH', `${INCIDENTS}/${incident.id}`, { token: f.editor, body: { title: 'Audited twice' }, headers: { 'x-request-id': 'audit-req-1' } });
    const url = `/api/v2/teams/${f.teamId}/incidents/${incident.id}/history`;
    const response = await t.admin('GET', url);
    expect(response.statusCode).toBe(200);
    const history = response.json().data;
    expect(history.incident_id).toBe(incident.id);
    expect(history.events.map((e: any) => e.type)).toEqual(['IncidentOpened', 'IncidentDetailsUpdated']);
    expect(history.events[1]).toMatchObject({ actor: expect.stringMatching(/^token:\d+$/), request_id: 'audit-req-1', changes: { title: { from: 'Audited', to: 'Audited twice' } } });
    expect(history.state.title).toBe('Audited twice');
    const past = (await t.admin('GET', `${url}?at=${encodeURIComponent(afterCreate)}`)).json().data;
    expect(past.state.title).toBe('Audited');
    expect(past.events).toHaveLength(1);
    expect((await t.request('GET', url, { token: f.editor })).statusCode).toBe(401);
    expect((await t.admin('GET', `/api/v2/teams/${ids.foreignTeam}/incidents/${incident.id}/history`)).statusCode).toBe(404);
  });

  it('keeps a merged source’s history complete', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    await t.request('POST', `${INCIDENTS}/${source.id}/comments`, { token: f.editor, body: { body: 'kept' } });
    await t.request('POST', `${INCIDENTS}/${target.id}/merge`, { token: f.editor, body: { source_incident_ids: [source.id] } });
    const history = (await t.admin('GET', `/api/v2/teams/${f.teamId}/incidents/${source.id}/history`)).json().data;
    expect(history.events.map((e: any) => e.type)).toEqual(['IncidentOpened', 'CommentAdded', 'IncidentResolved', 'IncidentMergedInto']);
    expect(history.state.merged_into_id).toBe(target.id);
  });

  it('rebuilding the incidents view from the log gives the same details', async () => {
    const target = await createIncident(t, f);
    await t.request('POST', `${INCIDENTS}/${target.id}/checkpoints`, { token: f.editor, body: { title: 'cp' } });
    await t.request('POST', `${INCIDENTS}/${target.id}/merge`, { token: f.editor, body: { source_incident_ids: [ids.b] } });
    const allIds: number[] = (await t.request('GET', INCIDENTS, { token: f.editor, query: { limit: '100' } })).json().data.map((i: any) => i.id);
    const details = async () => Promise.all(allIds.map(async (id) => (await t.request('GET', `${INCIDENTS}/${id}`, { token: f.editor })).json().data));
    const before = await details();
    await t.platform.runner!.rebuild('incidents');
    expect(await details()).toEqual(before);
    expect(await list()).toEqual(allIds);
  });
});
