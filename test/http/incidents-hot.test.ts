/**
 * A hot incident stays cheap (issue 11 item 8): a command reads the incident stream once, and
 * only the events it has not folded yet, so its cost does not grow with the incident.
 */
import { jest } from '@jest/globals';
import { type ReadStreamOptions, WrongExpectedRevisionError } from '../../src/platform/event-store/event-store.port.js';
import { appWithIncidentTeam, createIncident, INCIDENTS } from '../support/incident-fixtures.js';

describe('commands on a long incident', () => {
  const { t, f } = appWithIncidentTeam();

  /** The incident-stream reads made while `send` runs. */
  async function incidentReads(incidentId: number, send: () => Promise<unknown>): Promise<Array<ReadStreamOptions | undefined>> {
    const reads: Array<ReadStreamOptions | undefined> = [];
    const original = t.platform.events.readStream.bind(t.platform.events);
    const spy = jest.spyOn(t.platform.events, 'readStream').mockImplementation((streamId, options) => {
      if (streamId === `incident-${incidentId}`) reads.push(options);
      return original(streamId, options);
    });
    try {
      await send();
    } finally {
      spy.mockRestore();
    }
    return reads;
  }

  it('a comment reads the incident stream once, from where this process left off', async () => {
    const incident = await createIncident(t, f);
    for (let i = 0; i < 30; i++) {
      expect((await t.request('POST', `${INCIDENTS}/${incident.id}/comments`, { token: f.editor, body: { body: `note ${i}` } })).statusCode).toBe(201);
    }
    let response: { statusCode: number; json(): any } | undefined;
    const reads = await incidentReads(incident.id, async () => {
      response = await t.request('POST', `${INCIDENTS}/${incident.id}/comments`, { token: f.editor, body: { body: 'the 31st' } });
    });
    expect(response!.statusCode).toBe(201);
    expect(response!.json().data).toMatchObject({ body: 'the 31st', pinned: false });
    // One read, of the tail after the 31 events already folded (opened + 30 comments).
    expect(reads).toEqual([{ fromRevision: 31 }]);
  });

  it('a comment edit, a checkpoint and a status change each read the stream once', async () => {
    const incident = await createIncident(t, f);
    const comment = (await t.request('POST', `${INCIDENTS}/${incident.id}/comments`, { token: f.editor, body: { body: 'x' } })).json().data;
    const sends: Array<[string, string, unknown]> = [
      ['PATCH', `${INCIDENTS}/${incident.id}/comments/${comment.id}`, { pinned: true }],
      ['POST', `${INCIDENTS}/${incident.id}/checkpoints`, { title: 'Investigating' }],
      ['PATCH', `${INCIDENTS}/${incident.id}/status`, { resolved: true }],
      ['PATCH', `${INCIDENTS}/${incident.id}`, { title: 'Renamed' }],
    ];
    for (const [method, url, body] of sends) {
      let status = 0;
      const reads = await incidentReads(incident.id, async () => {
        status = (await t.request(method, url, { token: f.editor, body })).statusCode;
      });
      expect([url, status < 300, reads.length]).toEqual([url, true, 1]);
    }
    const detail = (await t.request('GET', `${INCIDENTS}/${incident.id}`, { token: f.editor })).json().data;
    expect(detail).toMatchObject({ title: 'Renamed', comments: [{ id: comment.id, pinned: true }], checkpoints: [{ title: 'Investigating' }] });
    expect(detail.resolved_at).not.toBeNull();
  });

  it('a write by another process is seen: the fold reads what was appended since', async () => {
    const incident = await createIncident(t, f);
    await t.request('POST', `${INCIDENTS}/${incident.id}/comments`, { token: f.editor, body: { body: 'first' } });
    // Another writer (as another API process would) appends a comment straight to the log.
    const [opened] = await t.platform.events.readStream(`incident-${incident.id}`, { maxCount: 1 });
    await t.platform.events.append(
      `incident-${incident.id}`,
      [{ type: 'CommentAdded', data: { incident_id: incident.id, comment_id: 987_654, body: 'from elsewhere', pinned: false, created_at: (opened.data as { opened_at: string }).opened_at }, metadata: { actor: 'token:other', request_id: null } }],
      { expectedRevision: 1 },
    );
    const edited = await t.request('PATCH', `${INCIDENTS}/${incident.id}/comments/987654`, { token: f.editor, body: { pinned: true } });
    expect(edited.statusCode).toBe(200);
    expect(edited.json().data).toMatchObject({ id: 987_654, body: 'from elsewhere', pinned: true });
  });
});

describe('concurrent commands on one incident in one process', () => {
  const { t, f } = appWithIncidentTeam();

  it('20 comments at once each land once, none refused by a stale revision, and the next read shows them all', async () => {
    const incident = await createIncident(t, f);
    for (let i = 0; i < 5; i++) await t.request('POST', `${INCIDENTS}/${incident.id}/comments`, { token: f.editor, body: { body: `earlier ${i}` } });
    let refused = 0;
    const original = t.platform.events.append.bind(t.platform.events);
    const spy = jest.spyOn(t.platform.events, 'append').mockImplementation(async (streamId, events, options) => {
      try {
        return await original(streamId, events, options);
      } catch (error) {
        if (streamId === `incident-${incident.id}` && error instanceof WrongExpectedRevisionError) refused++;
        throw error;
      }
    });
    let answers;
    try {
      answers = await Promise.all(Array.from({ length: 20 }, (_, i) => t.request('POST', `${INCIDENTS}/${incident.id}/comments`, { token: f.editor, body: { body: `at once ${i}` } })));
    } finally {
      spy.mockRestore();
    }
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(20).fill(201));
    const ids = answers.map((answer) => answer.json().data.id as number);
    expect(new Set(ids).size).toBe(20);
    expect(refused).toBe(0);
    const detail = (await t.request('GET', `${INCIDENTS}/${incident.id}`, { token: f.editor })).json().data;
    const bodies = (detail.comments as Array<{ id: number; body: string }>).map((comment) => comment.body);
    expect(bodies.filter((body) => body.startsWith('at once')).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `at once ${i}`).sort());
    expect(bodies.length).toBe(25);
  });
});
