import { appWithIncidentTeam, createIncident, INCIDENTS } from '../support/incident-fixtures.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('incident routes', () => {
  const { t, f } = appWithIncidentTeam();

  it('creates a manual incident with the documented defaults and returns the complete detail', async () => {
    const response = await t.request('POST', INCIDENTS, { token: f.editor, body: { endpoint_ids: f.endpoints, title: 'API errors' } });
    expect(response.statusCode).toBe(201);
    const incident = response.json().data;
    expect(incident).toMatchObject({
      team_id: f.teamId,
      project_id: f.projectId,
      endpoint_id: f.endpoints[0],
      endpoint_ids: f.endpoints,
      title: 'API errors',
      type: 'manual',
      source: 'manual',
      severity: 'warning',
      auto_resolve: false,
      detection_reason: '',
      metadata: {},
      status_name: 'Investigating',
      error_count: 0,
      resolved_at: null,
      comments: [],
      checkpoints: [],
      checks: [],
      merged_incidents: [],
    });
    expect(incident.first_error_at).toMatch(TIMESTAMP);
    expect(incident.last_error_at).toBe(incident.first_error_at);
    expect(incident.created_at).toMatch(TIMESTAMP);
  });

  it('shows a created incident at once in the detail and in the list (read-your-writes)', async () => {
    const created = await createIncident(t, f, { title: 'Fresh' });
    const detail = await t.request('GET', `${INCIDENTS}/${created.id}`, { token: f.editor });
    expect(detail.statusCode).toBe(200);
    expect(detail.json().data).toEqual(created);
    const list = await t.request('GET', INCIDENTS, { token: f.editor });
    expect(list.json().data[0].id).toBe(created.id);
    expect(list.json().data[0]).not.toHaveProperty('comments');
  });

  it('lists the team statuses id ascending', async () => {
    const response = await t.request('GET', '/api/public/v2/incident-statuses', { token: f.editor });
    expect(response.statusCode).toBe(200);
    const statuses = response.json().data;
    expect(statuses.map((s: any) => [s.name, s.is_default, s.team_id])).toEqual([
      ['Investigating', true, f.teamId],
      ['Identified', false, f.teamId],
      ['Monitoring', false, f.teamId],
    ]);
    expect(statuses.map((s: any) => s.id)).toEqual([...statuses.map((s: any) => s.id)].sort((a: number, b: number) => a - b));
  });

  it('documents every incident route in the OpenAPI document', async () => {
    const document = (await t.request('GET', '/api/public/v2/openapi.json')).json();
    const paths = Object.fromEntries(Object.entries(document.paths).map(([path, ops]) => [path, Object.keys(ops as object).sort()]));
    expect(paths).toMatchObject({
      '/api/public/v2/incidents': ['get', 'post'],
      '/api/public/v2/incidents/{incidentID}': ['get', 'patch'],
      '/api/public/v2/incident-statuses': ['get'],
      '/api/public/v2/incidents/{incidentID}/status': ['patch'],
      '/api/public/v2/incidents/{incidentID}/merge': ['post'],
      '/api/public/v2/incidents/{incidentID}/comments': ['post'],
      '/api/public/v2/incidents/{incidentID}/comments/{commentID}': ['delete', 'patch'],
      '/api/public/v2/incidents/{incidentID}/checkpoints': ['post'],
      '/api/public/v2/incidents/{incidentID}/checkpoints/{checkpointID}': ['patch'],
    });
  });

  it('answers invalid JSON 400, a non-JSON body 415 and an oversized body 413 on incident writes', async () => {
    const invalid = await t.request('POST', INCIDENTS, { token: f.editor, body: '{"title": ', headers: { 'content-type': 'application/json' } });
    expect([invalid.statusCode, invalid.json().code]).toEqual([400, 'invalid_json']);
    const text = await t.request('POST', INCIDENTS, { token: f.editor, body: 'title=x', headers: { 'content-type': 'text/plain' } });
    expect([text.statusCode, text.json().code]).toEqual([415, 'unsupported_media_type']);
    const big = await t.request('POST', INCIDENTS, { token: f.editor, body: { project_id: f.projectId, title: 'x', detection_reason: 'r'.repeat(1024 * 1024) } });
    expect(big.statusCode).toBe(413);
    expect(invalid.json().request_id).toBe(invalid.headers['x-request-id']);
  });
});
