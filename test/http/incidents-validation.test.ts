import { appWithIncidentTeam, createIncident, createProject, fieldsOf, INCIDENTS } from '../support/incident-fixtures.js';

describe('incident validation: one 400 listing every violated rule', () => {
  const { t, f } = appWithIncidentTeam();

  const post = (body: unknown) => t.request('POST', INCIDENTS, { token: f.editor, body });

  it('create: missing project_id and endpoint_ids, missing title', async () => {
    const response = await post({ endpoint_ids: [] });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('validation_failed');
    expect(fieldsOf(response)).toEqual(['project_id:required', 'title:required']);
  });

  it('create: lengths, ranges, enums, status with status_id, error times out of order, unknown field', async () => {
    const response = await post({
      project_id: f.projectId,
      title: 'x'.repeat(201),
      type: 't'.repeat(81),
      severity: 'fatal',
      detection_reason: 'r'.repeat(10_001),
      metadata: { blob: 'm'.repeat(65_536) },
      status: 'Investigating',
      status_id: 1,
      auto_resolve: 'yes',
      first_error_at: '2026-01-02T00:00:00Z',
      last_error_at: '2026-01-01T00:00:00Z',
      colour: 'red',
    });
    expect(response.statusCode).toBe(400);
    expect(fieldsOf(response)).toEqual(
      expect.arrayContaining([
        'title:too_long',
        'type:too_long',
        'severity:invalid_value',
        'detection_reason:too_long',
        'metadata:too_long',
        'status:conflict',
        'auto_resolve:invalid_type',
        'last_error_at:conflict',
        'colour:unknown_field',
      ]),
    );
  });

  it('create: endpoint ids duplicated, over 500, of another project, unknown; unknown project and status', async () => {
    const tooMany = Array.from({ length: 501 }, (_, i) => i + 1);
    expect(fieldsOf(await post({ project_id: f.projectId, endpoint_ids: tooMany, title: 'x' }))).toContain('endpoint_ids:too_many');
    const response = await post({ project_id: f.projectId, endpoint_ids: [f.endpoints[0], f.endpoints[0], f.otherEndpoint, 99_999_999], title: 'x', status: 'Fixed' });
    expect(fieldsOf(response)).toEqual(['endpoint_ids[1]:not_unique', 'endpoint_ids[2]:conflict', 'endpoint_ids[3]:not_found', 'status:not_found']);
    expect(fieldsOf(await post({ project_id: 99_999_999, title: 'x', status_id: 99_999_999 }))).toEqual(['project_id:not_found', 'status_id:not_found']);
  });

  it('create: a project or endpoint of another team does not exist', async () => {
    const other = await t.createTeam('Other');
    const foreignProject = await createProject(t, other.id);
    expect(fieldsOf(await post({ project_id: foreignProject, title: 'x' }))).toEqual(['project_id:not_found']);
  });

  it('create: accepts the limits exactly at the edge, and a status by exact name', async () => {
    const response = await post({
      project_id: f.projectId,
      title: '😀'.repeat(200),
      type: 't'.repeat(80),
      detection_reason: 'r'.repeat(10_000),
      status: 'Identified',
      severity: 'critical',
    });
    expect(response.statusCode).toBe(201);
    expect(response.json().data).toMatchObject({ status_name: 'Identified', severity: 'critical', type: 't'.repeat(80) });
    expect(fieldsOf(await post({ project_id: f.projectId, title: 'x', status: 'identified' }))).toEqual(['status:not_found']);
  });

  it('update details: empty body, bad values, endpoint of another project', async () => {
    const incident = await createIncident(t, f);
    const patch = (body: unknown) => t.request('PATCH', `${INCIDENTS}/${incident.id}`, { token: f.editor, body });
    expect(fieldsOf(await patch({}))).toEqual(['(body):required']);
    const response = await patch({ title: '', endpoint_ids: [f.otherEndpoint], last_error_at: '2000-01-01T00:00:00Z', status_id: 1 });
    expect(response.statusCode).toBe(400);
    expect(fieldsOf(response)).toEqual(['endpoint_ids[0]:conflict', 'last_error_at:conflict', 'status_id:unknown_field', 'title:too_short']);
  });

  it('update status: empty body, status with status_id, unknown status, wrong types', async () => {
    const incident = await createIncident(t, f);
    const patch = (body: unknown) => t.request('PATCH', `${INCIDENTS}/${incident.id}/status`, { token: f.editor, body });
    expect(fieldsOf(await patch({}))).toEqual(['(body):required']);
    expect(fieldsOf(await patch({ status: 'Monitoring', status_id: 1, resolved: 'true', auto_resolve: 1 }))).toEqual([
      'auto_resolve:invalid_type',
      'resolved:invalid_type',
      'status:conflict',
    ]);
    expect(fieldsOf(await patch({ status: 'Nope' }))).toEqual(['status:not_found']);
  });

  it('comments and checkpoints: lengths and required fields', async () => {
    const incident = await createIncident(t, f);
    const url = `${INCIDENTS}/${incident.id}`;
    expect(fieldsOf(await t.request('POST', `${url}/comments`, { token: f.editor, body: { body: '' } }))).toEqual(['body:too_short']);
    expect(fieldsOf(await t.request('POST', `${url}/comments`, { token: f.editor, body: { body: 'b'.repeat(10_001), pinned: 'no' } }))).toEqual([
      'body:too_long',
      'pinned:invalid_type',
    ]);
    expect(fieldsOf(await t.request('POST', `${url}/checkpoints`, { token: f.editor, body: { body: 'b'.repeat(10_001) } }))).toEqual([
      'body:too_long',
      'title:required',
    ]);
    const checkpoint = (await t.request('POST', `${url}/checkpoints`, { token: f.editor, body: { title: 'Update' } })).json().data;
    expect(fieldsOf(await t.request('PATCH', `${url}/checkpoints/${checkpoint.id}`, { token: f.editor, body: {} }))).toEqual(['(body):required']);
    const comment = (await t.request('POST', `${url}/comments`, { token: f.editor, body: { body: 'note' } })).json().data;
    expect(fieldsOf(await t.request('PATCH', `${url}/comments/${comment.id}`, { token: f.editor, body: {} }))).toEqual(['(body):required']);
  });

  it('list query: bad values are one 400', async () => {
    const response = await t.request('GET', INCIDENTS, { token: f.editor, query: { limit: '0', state: 'closed', from: 'yesterday', project_id: 'abc' } });
    expect(response.statusCode).toBe(400);
    expect(fieldsOf(response)).toEqual(['from:invalid_value', 'limit:out_of_range', 'project_id:invalid_type', 'state:invalid_value']);
    expect((await t.request('GET', INCIDENTS, { token: f.editor, query: { limit: '101' } })).statusCode).toBe(400);
    expect((await t.request('GET', INCIDENTS, { token: f.editor, query: { cursor: 'forged' } })).json().code).toBe('invalid_cursor');
  });

  it('a failed request changes nothing', async () => {
    const incident = await createIncident(t, f, { title: 'Before' });
    await t.request('PATCH', `${INCIDENTS}/${incident.id}`, { token: f.editor, body: { title: 'After', severity: 'fatal' } });
    expect((await t.request('GET', `${INCIDENTS}/${incident.id}`, { token: f.editor })).json().data.title).toBe('Before');
  });
});
