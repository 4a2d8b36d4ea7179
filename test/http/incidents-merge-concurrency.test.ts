/**
 * Merges racing for overlapping incidents. A merge marks its sources one stream at a time, then
 * the target absorbs them; whatever interleaving happens, afterwards every source marked merged
 * is listed by its target, and every source a failed merge had marked is released (writable
 * again, content back, both events in its history).
 */
import { jest } from '@jest/globals';
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';
import { holdAppend } from '../support/event-store-fixtures.js';
import { appWithIncidentTeam, createIncident, INCIDENTS, mergeDyingAfterMark, teamWithMonitoring, type TeamFixture } from '../support/incident-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

describe('concurrent merges over overlapping incidents', () => {
  const { t, f } = appWithIncidentTeam();

  const detail = async (id: number) => (await t.request('GET', `${INCIDENTS}/${id}`, { token: f.editor })).json().data;
  const merge = (target: number, sources: number[], headers?: Record<string, string>) =>
    t.request('POST', `${INCIDENTS}/${target}/merge`, { token: f.editor, body: { source_incident_ids: sources }, headers });
  const historyTypes = async (id: number): Promise<string[]> =>
    (await t.admin('GET', `/api/v2/teams/${f.teamId}/incidents/${id}/history`)).json().data.events.map((e: { type: string }) => e.type);
  const addComment = (id: number, body = 'still writable') => t.request('POST', `${INCIDENTS}/${id}/comments`, { token: f.editor, body: { body } });

  /** The invariant, over the given incidents: merged sources are listed by their target; the others take writes. */
  async function expectConsistent(ids: number[]): Promise<void> {
    const states = new Map<number, any>();
    for (const id of ids) states.set(id, await detail(id));
    for (const [id, incident] of states) {
      if (incident.merged_into_id !== null) {
        const target = states.get(incident.merged_into_id) ?? (await detail(incident.merged_into_id));
        expect([id, target.merged_incidents.map((m: { id: number }) => m.id)]).toEqual([id, expect.arrayContaining([id])]);
      } else {
        const written = await addComment(id);
        expect([id, written.statusCode]).toEqual([id, 201]);
      }
      for (const listed of incident.merged_incidents as Array<{ id: number }>) {
        // Listed by this target (directly, or carried along from a source it absorbed): merged into it or into that source.
        expect([listed.id, (await detail(listed.id)).merged_into_id]).toEqual([listed.id, expect.any(Number)]);
      }
    }
  }

  it('a merge that loses a source to a concurrent merge fails with 400 and releases the sources it had marked', async () => {
    const [t1, t2, a, b] = [await createIncident(t, f), await createIncident(t, f), await createIncident(t, f), await createIncident(t, f)];
    const comment = (await addComment(a.id, 'on a before the merge')).json().data;
    const hold = holdAppend(t.platform.events, (stream, types) => stream === `incident-${b.id}` && types.includes('IncidentMergedInto'));
    let first;
    try {
      const pending = merge(t1.id, [a.id, b.id]);
      await hold.reached; // a is marked into t1, b not yet
      expect((await detail(a.id)).merged_into_id).toBe(t1.id);
      const second = await merge(t2.id, [b.id]);
      expect(second.statusCode).toBe(200);
      hold.release();
      first = await pending;
    } finally {
      hold.restore();
    }
    expect(first.statusCode).toBe(400);
    expect(first.json().errors).toEqual([{ field: 'source_incident_ids[1]', code: 'conflict', message: `incident ${b.id} was merged by a concurrent request` }]);

    const released = await detail(a.id);
    expect(released).toMatchObject({ merged_into_id: null, resolved_at: null, comments: [comment] });
    expect(await historyTypes(a.id)).toEqual(['IncidentOpened', 'CommentAdded', 'IncidentResolved', 'IncidentMergedInto', 'IncidentMergeReleased']);
    expect((await detail(t1.id)).merged_incidents).toEqual([]);
    expect((await detail(t2.id)).merged_incidents.map((m: any) => m.id)).toEqual([b.id]);
    await expectConsistent([t1.id, t2.id, a.id, b.id]);
  });

  it('a merge whose target is merged away meanwhile fails with 409 incident_merged and releases its sources', async () => {
    const [t1, t2, a] = [await createIncident(t, f), await createIncident(t, f), await createIncident(t, f)];
    await t.request('PATCH', `${INCIDENTS}/${a.id}/status`, { token: f.editor, body: { resolved: true } });
    const resolvedAt = (await detail(a.id)).resolved_at;
    const hold = holdAppend(t.platform.events, (stream, types) => stream === `incident-${t1.id}` && types.includes('IncidentsAbsorbed'));
    let first;
    try {
      const pending = merge(t1.id, [a.id]);
      await hold.reached; // a is marked into t1; t1 has not absorbed it
      expect((await merge(t2.id, [t1.id])).statusCode).toBe(200);
      hold.release();
      first = await pending;
    } finally {
      hold.restore();
    }
    expect(first.statusCode).toBe(409);
    expect(first.json().code).toBe('incident_merged');

    expect(await detail(a.id)).toMatchObject({ merged_into_id: null, resolved_at: resolvedAt });
    const history = (await t.admin('GET', `/api/v2/teams/${f.teamId}/incidents/${a.id}/history`)).json().data.events;
    expect(history.at(-1)).toMatchObject({ type: 'IncidentMergeReleased', actor: expect.stringMatching(/^token:/), changes: { merged_into_id: { from: t1.id, to: null } } });
    expect(history.at(-1).summary).toContain('incident_merged');
    expect(await detail(t1.id)).toMatchObject({ merged_into_id: t2.id, merged_incidents: [] });
    await expectConsistent([t1.id, t2.id, a.id]);
  });

  it('stays consistent over many unsynchronised races of overlapping merges', async () => {
    const shapes: Array<(i: number[]) => Array<[number, number[]]>> = [
      ([t1, t2, a, b, c]) => [[t1, [a, b]], [t2, [b, c]]],
      ([t1, t2, a, b, c]) => [[t1, [a, b, c]], [t2, [c, b, a]]],
      ([t1, t2, a]) => [[t1, [a]], [t2, [t1]]],
      ([t1, t2]) => [[t1, [t2]], [t2, [t1]]],
      ([t1, , a, b, c]) => [[t1, [a, b]], [t1, [b, c]]],
    ];
    const outcomes = new Set<string>();
    for (let round = 0; round < 4; round++) {
      for (const shape of shapes) {
        const ids: number[] = [];
        for (let i = 0; i < 5; i++) ids.push((await createIncident(t, f, { title: `race ${round}.${i}` })).id);
        const requests = shape(ids);
        const answers = await Promise.all(requests.map(([target, sources]) => merge(target, sources)));
        for (const answer of answers) {
          const code = answer.statusCode === 200 ? 'ok' : answer.json().code;
          expect([200, 400, 409]).toContain(answer.statusCode);
          expect(['ok', 'validation_failed', 'incident_merged', 'concurrent_update']).toContain(code);
          outcomes.add(code);
        }
        await expectConsistent(ids);
      }
    }
    expect(outcomes).toContain('ok');
  }, 60_000);
});

describe('a merge that dies after marking its sources', () => {
  let t: TestApp;
  let f: TeamFixture;
  beforeAll(async () => {
    t = await startTestApp();
    f = await teamWithMonitoring(t);
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await t.close();
  });

  const merge = (target: number, sources: number[], headers?: Record<string, string>) =>
    t.request('POST', `${INCIDENTS}/${target}/merge`, { token: f.editor, body: { source_incident_ids: sources }, headers });

  /** The merge dies after marking its source: neither absorb nor release reaches the store. */
  const mergeThatDies = (target: number, source: number, headers?: Record<string, string>) =>
    mergeDyingAfterMark(t.platform.events, source, () => merge(target, [source], headers));

  it('is finished by its retry with the same Idempotency-Key; another request is refused while the mark is fresh', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    const comment = (await t.request('POST', `${INCIDENTS}/${source.id}/comments`, { token: f.editor, body: { body: 'keep' } })).json().data;
    const headers = { 'idempotency-key': 'dies-once' };
    expect((await mergeThatDies(target.id, source.id, headers)).statusCode).toBe(500);
    const stranded = (await t.request('GET', `${INCIDENTS}/${source.id}`, { token: f.editor })).json().data;
    expect(stranded.merged_into_id).toBe(target.id);

    const other = await merge(target.id, [source.id]);
    expect(other.statusCode).toBe(400);
    expect(other.json().errors).toEqual([expect.objectContaining({ field: 'source_incident_ids[0]', code: 'conflict' })]);

    const retried = await merge(target.id, [source.id], headers);
    expect(retried.statusCode).toBe(200);
    expect(retried.json().data).toMatchObject({ comments: [comment], merged_incidents: [{ id: source.id, title: source.title, merged_at: expect.any(String) }] });
  });

  it('once abandoned (a minute old), is finished by any merge of that source into that target', async () => {
    const target = await createIncident(t, f);
    const source = await createIncident(t, f);
    expect((await mergeThatDies(target.id, source.id)).statusCode).toBe(500);
    const realNow = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 61_000);
    const later = await merge(target.id, [source.id]);
    jest.restoreAllMocks();
    expect(later.statusCode).toBe(200);
    expect(later.json().data.merged_incidents.map((m: any) => m.id)).toEqual([source.id]);
  });
});
