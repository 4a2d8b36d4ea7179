import { appWithIncidentTeam, createIncident, INCIDENTS } from '../support/incident-fixtures.js';

describe('incident writes', () => {
  const { t, f } = appWithIncidentTeam();

  const get = async (id: number) => (await t.request('GET', `${INCIDENTS}/${id}`, { token: f.editor })).json().data;

  it('updates details and answers with the new detail, which a GET then shows', async () => {
    const incident = await createIncident(t, f);
    const body = { title: 'Renamed', severity: 'critical', endpoint_ids: [f.endpoints[1]], metadata: { ticket: 'OPS-1' }, type: 'db' };
    const response = await t.request('PATCH', `${INCIDENTS}/${incident.id}`, { token: f.editor, body });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ ...body, endpoint_id: f.endpoints[1] });
    expect(await get(incident.id)).toEqual(response.json().data);
  });

  it('changes status by id or name, resolves keeping the first resolved_at, and reopens', async () => {
    const incident = await createIncident(t, f);
    const statuses = (await t.request('GET', '/api/public/v2/incident-statuses', { token: f.editor })).json().data;
    const url = `${INCIDENTS}/${incident.id}/status`;
    const byId = await t.request('PATCH', url, { token: f.editor, body: { status_id: statuses[2].id } });
    expect(byId.json().data).toMatchObject({ status_id: statuses[2].id, status_name: 'Monitoring' });
    const resolved = (await t.request('PATCH', url, { token: f.editor, body: { status: 'Identified', resolved: true, auto_resolve: true } })).json().data;
    expect(resolved).toMatchObject({ status_name: 'Identified', auto_resolve: true, resolved_at: expect.any(String) });
    const again = (await t.request('PATCH', url, { token: f.editor, body: { resolved: true } })).json().data;
    expect(again.resolved_at).toBe(resolved.resolved_at);
    const reopened = (await t.request('PATCH', url, { token: f.editor, body: { resolved: false } })).json().data;
    expect(reopened.resolved_at).toBeNull();
    expect((await get(incident.id)).resolved_at).toBeNull();
  });

  it('adds, pins, edits and deletes comments', async () => {
    const incident = await createIncident(t, f);
    const url = `${INCIDENTS}/${incident.id}/comments`;
    const added = await t.request('POST', url, { token: f.editor, body: { body: 'Looking into it' } });
    expect(added.statusCode).toBe(201);
    const comment = added.json().data;
    expect(comment).toEqual({ id: expect.any(Number), body: 'Looking into it', pinned: false, created_at: expect.any(String), updated_at: comment.created_at });
    const pinned = await t.request('PATCH', `${url}/${comment.id}`, { token: f.editor, body: { pinned: true, body: 'Edited' } });
    expect(pinned.statusCode).toBe(200);
    expect(pinned.json().data).toMatchObject({ id: comment.id, pinned: true, body: 'Edited' });
    expect((await get(incident.id)).comments).toEqual([pinned.json().data]);
    const deleted = await t.request('DELETE', `${url}/${comment.id}`, { token: f.editor });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await get(incident.id)).comments).toEqual([]);
    expect((await t.request('DELETE', `${url}/${comment.id}`, { token: f.editor })).statusCode).toBe(404);
  });

  it('posts checkpoints labelled with the current status by default, and updates them', async () => {
    const incident = await createIncident(t, f, { status: 'Identified' });
    const url = `${INCIDENTS}/${incident.id}/checkpoints`;
    const added = await t.request('POST', url, { token: f.editor, body: { title: 'Fix deployed', body: 'Watching' } });
    expect(added.statusCode).toBe(201);
    const checkpoint = added.json().data;
    expect(checkpoint).toMatchObject({ title: 'Fix deployed', body: 'Watching', status_label: 'Identified' });
    const updated = await t.request('PATCH', `${url}/${checkpoint.id}`, { token: f.editor, body: { status_label: 'Resolved' } });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data).toMatchObject({ id: checkpoint.id, status_label: 'Resolved', title: 'Fix deployed' });
    expect((await get(incident.id)).checkpoints).toEqual([updated.json().data]);
    expect((await t.request('PATCH', `${url}/999999`, { token: f.editor, body: { title: 'x' } })).statusCode).toBe(404);
  });

  it('answers 404 for an incident of another team, on every route, before validating the body', async () => {
    const incident = await createIncident(t, f);
    const other = await t.createTeam('Other');
    const { token } = await t.issueToken(other.id, ['incidents:read', 'incidents:write'], 'editor');
    const base = `${INCIDENTS}/${incident.id}`;
    const calls: Array<[string, string]> = [
      ['GET', base],
      ['PATCH', base],
      ['PATCH', `${base}/status`],
      ['POST', `${base}/merge`],
      ['POST', `${base}/comments`],
      ['POST', `${base}/checkpoints`],
      ['PATCH', `${base}/comments/1`],
      ['DELETE', `${base}/comments/1`],
      ['PATCH', `${base}/checkpoints/1`],
    ];
    for (const [method, url] of calls) {
      const response = await t.request(method, url, { token, body: method === 'GET' || method === 'DELETE' ? undefined : { bogus: true } });
      expect([method, url, response.statusCode, response.json().code]).toEqual([method, url, 404, 'not_found']);
    }
    expect((await t.request('GET', `${INCIDENTS}/abc`, { token: f.editor })).statusCode).toBe(404);
  });

  it('creates an incident without reading its new stream, and the next GET shows it', async () => {
    const events = t.platform.events;
    const original = events.readStream.bind(events);
    const read: string[] = [];
    events.readStream = ((streamId, options) => {
      read.push(streamId);
      return original(streamId, options);
    }) as typeof events.readStream;
    try {
      for (let round = 0; round < 3; round++) {
        const created = await createIncident(t, f, { title: `Fresh ${round}` });
        expect(read.filter((stream) => stream === `incident-${created.id}`)).toEqual([]);
        expect(await get(created.id)).toEqual(created);
      }
    } finally {
      events.readStream = original;
    }
  });

  it('creates 20 incidents at once with appends that may share a commit, and each GET shows its 201', async () => {
    const events = t.platform.events;
    const original = events.append.bind(events);
    const grouped: Array<boolean | undefined> = [];
    events.append = ((streamId, appended, options) => {
      if (streamId.startsWith('incident-')) grouped.push(options.groupCommit);
      return original(streamId, appended, options);
    }) as typeof events.append;
    try {
      const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => t.request('POST', INCIDENTS, { token: f.editor, body: { project_id: f.projectId, title: `At once ${i}` } })));
      expect(responses.map((r) => r.statusCode)).toEqual(Array(20).fill(201));
      expect(grouped).toEqual(Array(20).fill(true));
      for (const response of responses) expect(await get(response.json().data.id)).toEqual(response.json().data);
    } finally {
      events.append = original;
    }
  });

  it('keeps both of two concurrent PATCHes of different fields', async () => {
    for (let round = 0; round < 5; round++) {
      const incident = await createIncident(t, f);
      const url = `${INCIDENTS}/${incident.id}`;
      const responses = await Promise.all([
        t.request('PATCH', url, { token: f.editor, body: { title: `Title ${round}` } }),
        t.request('PATCH', url, { token: f.editor, body: { severity: 'critical' } }),
        t.request('PATCH', `${url}/status`, { token: f.editor, body: { status: 'Monitoring' } }),
        t.request('POST', `${url}/comments`, { token: f.editor, body: { body: 'c' } }),
      ]);
      expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 201]);
      expect(await get(incident.id)).toMatchObject({ title: `Title ${round}`, severity: 'critical', status_name: 'Monitoring', comments: [expect.objectContaining({ body: 'c' })] });
    }
  });
});

describe('incident scopes and roles', () => {
  const { t, f } = appWithIncidentTeam();

  it('reads need incidents:read; writes need incidents:write and an editor', async () => {
    const incident = await createIncident(t, f);
    const viewer = (await t.issueToken(f.teamId, ['incidents:read', 'incidents:write'], 'viewer')).token;
    const monitoringOnly = (await t.issueToken(f.teamId, ['monitoring:read'], 'editor')).token;
    const readOnly = (await t.issueToken(f.teamId, ['incidents:read'], 'editor')).token;

    for (const url of [INCIDENTS, `${INCIDENTS}/${incident.id}`, '/api/public/v2/incident-statuses']) {
      const refused = await t.request('GET', url, { token: monitoringOnly });
      expect([url, refused.statusCode, refused.json().code]).toEqual([url, 403, 'insufficient_scope']);
      expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="incidents:read"');
      expect((await t.request('GET', url, { token: viewer })).statusCode).toBe(200);
      expect((await t.request('GET', url)).statusCode).toBe(401);
    }
    const writes: Array<[string, string, unknown]> = [
      ['POST', INCIDENTS, { project_id: f.projectId, title: 'x' }],
      ['PATCH', `${INCIDENTS}/${incident.id}`, { title: 'y' }],
      ['PATCH', `${INCIDENTS}/${incident.id}/status`, { resolved: true }],
      ['POST', `${INCIDENTS}/${incident.id}/merge`, { source_incident_ids: [1] }],
      ['POST', `${INCIDENTS}/${incident.id}/comments`, { body: 'x' }],
      ['POST', `${INCIDENTS}/${incident.id}/checkpoints`, { title: 'x' }],
      ['DELETE', `${INCIDENTS}/${incident.id}/comments/1`, undefined],
    ];
    for (const [method, url, body] of writes) {
      expect([url, (await t.request(method, url, { token: readOnly, body })).json().code]).toEqual([url, 'insufficient_scope']);
      const byViewer = await t.request(method, url, { token: viewer, body });
      expect([url, byViewer.statusCode, byViewer.json().code]).toEqual([url, 403, 'editor_required']);
    }
    expect((await t.request('GET', `${INCIDENTS}/${incident.id}`, { token: f.editor })).json().data.title).toBe(incident.title);
  });
});
