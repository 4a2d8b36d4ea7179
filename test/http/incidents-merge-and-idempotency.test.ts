import { holdAppend } from '../support/event-store-fixtures.js';
import { appWithIncidentTeam, createIncident, fieldsOf, INCIDENTS } from '../support/incident-fixtures.js';

describe('incident merge', () => {
  const { t, f } = appWithIncidentTeam();

  const get = async (id: number) => (await t.request('GET', `${INCIDENTS}/${id}`, { token: f.editor })).json().data;
  const merge = (target: number, body: unknown, headers?: Record<string, string>) =>
    t.request('POST', `${INCIDENTS}/${target}/merge`, { token: f.editor, body, headers });

  it('moves endpoints, comments and checkpoints to the target, spans the error times, and resolves the sources', async () => {
    const target = await createIncident(t, f, { endpoint_ids: [f.endpoints[0]], first_error_at: '2026-01-01T10:00:00Z', last_error_at: '2026-01-01T11:00:00Z' });
    const a = await createIncident(t, f, { endpoint_ids: [f.endpoints[1], f.endpoints[0]], first_error_at: '2026-01-01T09:00:00Z', last_error_at: '2026-01-01T09:30:00Z' });
    const b = await createIncident(t, f, { first_error_at: '2026-01-01T10:30:00Z', last_error_at: '2026-01-01T12:00:00+01:00' });
    const comment = (await t.request('POST', `${INCIDENTS}/${a.id}/comments`, { token: f.editor, body: { body: 'from a' } })).json().data;
    const checkpoint = (await t.request('POST', `${INCIDENTS}/${b.id}/checkpoints`, { token: f.editor, body: { title: 'from b' } })).json().data;

    const response = await merge(target.id, { source_incident_ids: [a.id, b.id] });
    expect(response.statusCode).toBe(200);
    const merged = response.json().data;
    expect(merged).toMatchObject({
      id: target.id,
      endpoint_ids: [f.endpoints[0], f.endpoints[1]],
      error_count: 0,
      first_error_at: '2026-01-01T09:00:00.000Z',
      last_error_at: '2026-01-01T11:00:00.000Z',
      comments: [comment],
      checkpoints: [checkpoint],
      merged_incidents: [
        { id: a.id, title: a.title, merged_at: expect.any(String) },
        { id: b.id, title: b.title, merged_at: expect.any(String) },
      ],
    });
    expect(await get(target.id)).toEqual(merged);
    const source = await get(a.id);
    expect(source).toMatchObject({ merged_into_id: target.id, resolved_at: expect.any(String), comments: [] });
    const list = (await t.request('GET', INCIDENTS, { token: f.editor })).json().data.map((i: any) => i.id);
    expect(list).toEqual(expect.arrayContaining([a.id, b.id, target.id]));
  });

  it('a comment moved by a merge is the target\'s to edit and delete, in the detail the next GET shows', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    const kept = (await t.request('POST', `${INCIDENTS}/${source.id}/comments`, { token: f.editor, body: { body: 'keep' } })).json().data;
    const dropped = (await t.request('POST', `${INCIDENTS}/${source.id}/comments`, { token: f.editor, body: { body: 'drop' } })).json().data;
    expect((await merge(target.id, { source_incident_ids: [source.id] })).statusCode).toBe(200);

    const edited = await t.request('PATCH', `${INCIDENTS}/${target.id}/comments/${kept.id}`, { token: f.editor, body: { pinned: true } });
    expect(edited.statusCode).toBe(200);
    expect((await t.request('DELETE', `${INCIDENTS}/${target.id}/comments/${dropped.id}`, { token: f.editor })).statusCode).toBe(204);
    const detail = await get(target.id);
    expect(detail.comments).toEqual([{ ...kept, pinned: true, updated_at: edited.json().data.updated_at }]);
    expect((await get(source.id)).comments).toEqual([]);
  });

  it('refuses every write to a merged source with 409 incident_merged', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    const comment = (await t.request('POST', `${INCIDENTS}/${source.id}/comments`, { token: f.editor, body: { body: 'x' } })).json().data;
    await merge(target.id, { source_incident_ids: [source.id] });
    const base = `${INCIDENTS}/${source.id}`;
    const writes: Array<[string, string, unknown]> = [
      ['PATCH', base, { title: 'y' }],
      ['PATCH', `${base}/status`, { resolved: false }],
      ['POST', `${base}/comments`, { body: 'x' }],
      ['PATCH', `${base}/comments/${comment.id}`, { pinned: true }],
      ['DELETE', `${base}/comments/${comment.id}`, undefined],
      ['POST', `${base}/checkpoints`, { title: 'x' }],
      ['POST', `${base}/merge`, { source_incident_ids: [target.id] }],
    ];
    for (const [method, url, body] of writes) {
      const response = await t.request(method, url, { token: f.editor, body });
      expect([method, url, response.statusCode, response.json().code]).toEqual([method, url, 409, 'incident_merged']);
    }
  });

  it('refuses empty, duplicated, unknown, already-merged, other-team sources and the target itself', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    const done = await createIncident(t, f);
    await merge((await createIncident(t, f)).id, { source_incident_ids: [done.id] });
    const other = await t.createTeam('Other');
    const { token } = await t.issueToken(other.id, ['incidents:read', 'incidents:write']);
    const foreign = (await t.request('POST', INCIDENTS, { token, body: { endpoint_ids: [], project_id: await otherProject(other.id), title: 'theirs' } })).json().data;

    expect(fieldsOf(await merge(target.id, { source_incident_ids: [] }))).toEqual(['source_incident_ids:too_short']);
    expect(fieldsOf(await merge(target.id, {}))).toEqual(['source_incident_ids:required']);
    const response = await merge(target.id, { source_incident_ids: [source.id, source.id, 99_999_999, done.id, foreign.id, target.id] });
    expect(response.statusCode).toBe(400);
    expect(fieldsOf(response)).toEqual([
      'source_incident_ids[1]:not_unique',
      'source_incident_ids[2]:not_found',
      'source_incident_ids[3]:conflict',
      'source_incident_ids[4]:not_found',
      'source_incident_ids[5]:conflict',
    ]);
    expect((await get(source.id)).merged_into_id).toBeNull();
  });

  async function otherProject(teamId: number): Promise<number> {
    return (await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'P' })).json().data.id;
  }
});

describe('Idempotency-Key on incident routes', () => {
  const { t, f } = appWithIncidentTeam();

  const countIncidents = async () => (await t.request('GET', INCIDENTS, { token: f.editor, query: { limit: '100' } })).json().data.length;

  it('20 concurrent identical creates with one key make exactly one incident, all answering the same body', async () => {
    const before = await countIncidents();
    const body = { project_id: f.projectId, title: 'Once' };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => t.request('POST', INCIDENTS, { token: f.editor, body, headers: { 'idempotency-key': 'create-once' } })),
    );
    const created = responses.filter((r) => r.statusCode === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(responses.every((r) => r.statusCode === 201 || (r.statusCode === 409 && r.json().code === 'idempotency_key_in_progress'))).toBe(true);
    expect(new Set(created.map((r) => r.json().data.id)).size).toBe(1);
    expect(await countIncidents()).toBe(before + 1);
    const replay = await t.request('POST', INCIDENTS, { token: f.editor, body, headers: { 'idempotency-key': 'create-once' } });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(created[0].body);
  });

  it.each([
    ['comment', 'comments', { body: 'once' }],
    ['checkpoint', 'checkpoints', { title: 'once' }],
  ])('20 concurrent identical %s posts with one key add exactly one', async (_what, path, body) => {
    const incident = await createIncident(t, f);
    const url = `${INCIDENTS}/${incident.id}/${path}`;
    const responses = await Promise.all(Array.from({ length: 20 }, () => t.request('POST', url, { token: f.editor, body, headers: { 'idempotency-key': `k-${path}` } })));
    expect(responses.some((r) => r.statusCode === 201)).toBe(true);
    const detail = (await t.request('GET', `${INCIDENTS}/${incident.id}`, { token: f.editor })).json().data;
    expect(detail[path]).toHaveLength(1);
  });

  it('20 concurrent identical merges with one key merge once', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    const url = `${INCIDENTS}/${target.id}/merge`;
    const body = { source_incident_ids: [source.id] };
    const responses = await Promise.all(Array.from({ length: 20 }, () => t.request('POST', url, { token: f.editor, body, headers: { 'idempotency-key': 'merge-once' } })));
    expect(responses.some((r) => r.statusCode === 200)).toBe(true);
    expect(responses.every((r) => r.statusCode === 200 || r.statusCode === 409)).toBe(true);
    const detail = (await t.request('GET', `${INCIDENTS}/${target.id}`, { token: f.editor })).json().data;
    expect(detail.merged_incidents.map((m: any) => m.id)).toEqual([source.id]);
    const events = await t.platform.events.readStream(`incident-${source.id}`);
    expect(events.filter((e) => e.type === 'IncidentMergedInto')).toHaveLength(1);
  });

  it('the same key with another body is 422', async () => {
    const headers = { 'idempotency-key': 'reused' };
    expect((await t.request('POST', INCIDENTS, { token: f.editor, body: { project_id: f.projectId, title: 'A' }, headers })).statusCode).toBe(201);
    const reused = await t.request('POST', INCIDENTS, { token: f.editor, body: { project_id: f.projectId, title: 'B' }, headers });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().code).toBe('idempotency_key_reused');
  });

  it('a second request while the first is still running is 409 with Retry-After', async () => {
    const hold = holdAppend(t.platform.events, (stream) => stream.startsWith('incident-'));
    try {
      const body = { project_id: f.projectId, title: 'Slow' };
      const headers = { 'idempotency-key': 'slow-one' };
      const first = t.request('POST', INCIDENTS, { token: f.editor, body, headers });
      await hold.reached;
      const second = await t.request('POST', INCIDENTS, { token: f.editor, body, headers });
      expect(second.statusCode).toBe(409);
      expect(second.json().code).toBe('idempotency_key_in_progress');
      expect(second.headers['retry-after']).toBe('1');
      hold.release();
      expect((await first).statusCode).toBe(201);
    } finally {
      hold.restore();
    }
  });
});

describe('merge interrupted between the sources and the target', () => {
  const { t, f } = appWithIncidentTeam();

  it('loses no content: a retry of the merge completes the target', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    const comment = (await t.request('POST', `${INCIDENTS}/${source.id}/comments`, { token: f.editor, body: { body: 'keep me' } })).json().data;
    const events = t.platform.events;
    const originalAppend = events.append.bind(events);
    events.append = async (stream, batch, options) => {
      if (stream === `incident-${target.id}`) throw new Error('simulated crash before the target append');
      return originalAppend(stream, batch, options);
    };
    const body = { source_incident_ids: [source.id] };
    const headers = { 'idempotency-key': 'crash-merge' };
    try {
      const failed = await t.request('POST', `${INCIDENTS}/${target.id}/merge`, { token: f.editor, body, headers });
      expect(failed.statusCode).toBe(500);
    } finally {
      events.append = originalAppend;
    }
    const retried = await t.request('POST', `${INCIDENTS}/${target.id}/merge`, { token: f.editor, body, headers });
    expect(retried.statusCode).toBe(200);
    expect(retried.json().data.comments).toEqual([comment]);
    expect(retried.json().data.merged_incidents.map((m: any) => m.id)).toEqual([source.id]);
  });
});
