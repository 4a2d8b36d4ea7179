/**
 * The `reason` a failed merge stores in each IncidentMergeReleased event. Stored events are kept
 * forever and read back by every later version, so these texts are pinned word for word, one
 * per way a merge can fail after marking a source.
 */
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';
import { holdAppend } from '../support/event-store-fixtures.js';
import { appWithIncidentTeam, createIncident, INCIDENTS, mergeDyingAfterMark } from '../support/incident-fixtures.js';

describe('the reason a failed merge stores when it releases its sources', () => {
  const { t, f } = appWithIncidentTeam();

  const merge = (target: number, sources: number[], headers?: Record<string, string>) =>
    t.request('POST', `${INCIDENTS}/${target}/merge`, { token: f.editor, body: { source_incident_ids: sources }, headers });
  const newIncidents = async (count: number): Promise<number[]> => {
    const ids: number[] = [];
    for (let i = 0; i < count; i++) ids.push((await createIncident(t, f)).id);
    return ids;
  };

  /** The reasons stored in the incident's IncidentMergeReleased events, oldest first. */
  async function storedReasons(id: number): Promise<string[]> {
    const events = await t.platform.events.readStream(`incident-${id}`);
    return events.filter((e) => e.type === 'IncidentMergeReleased').map((e) => (e.data as { reason: string }).reason);
  }

  /** Runs `merge` with the first append matching `held` stopped until `meanwhile` is done. */
  async function mergeInterrupted(held: (stream: string, types: string[]) => boolean, run: () => ReturnType<typeof merge>, meanwhile: () => Promise<unknown>) {
    const hold = holdAppend(t.platform.events, held);
    try {
      const pending = run();
      await hold.reached;
      await meanwhile();
      hold.release();
      return await pending;
    } finally {
      hold.restore();
    }
  }

  it('a source whose mark is refused because a concurrent merge took it', async () => {
    const [t1, t2, a, b] = await newIncidents(4);
    const answer = await mergeInterrupted(
      (stream, types) => stream === `incident-${b}` && types.includes('IncidentMergedInto'),
      () => merge(t1, [a, b]),
      async () => expect((await merge(t2, [b])).statusCode).toBe(200),
    );
    expect(answer.statusCode).toBe(400);
    expect(await storedReasons(a)).toEqual([`validation_failed: source_incident_ids[1]: incident ${b} was merged by a concurrent request`]);
  });

  it('a source found merged by a concurrent merge before this merge marks it', async () => {
    const [t1, t2, a, b] = await newIncidents(4);
    const answer = await mergeInterrupted(
      (stream, types) => stream === `incident-${a}` && types.includes('IncidentMergedInto'),
      () => merge(t1, [a, b]),
      async () => expect((await merge(t2, [b])).statusCode).toBe(200),
    );
    expect(answer.statusCode).toBe(400);
    expect(await storedReasons(a)).toEqual([`validation_failed: source_incident_ids[1]: incident ${b} was merged by a concurrent request`]);
  });

  it('a target merged away before it absorbs the sources', async () => {
    const [t1, t2, a] = await newIncidents(3);
    const answer = await mergeInterrupted(
      (stream, types) => stream === `incident-${t1}` && types.includes('IncidentsAbsorbed'),
      () => merge(t1, [a]),
      async () => expect((await merge(t2, [t1])).statusCode).toBe(200),
    );
    expect(answer.statusCode).toBe(409);
    expect(await storedReasons(a)).toEqual([`incident_merged: Incident ${t1} was merged into incident ${t2} and accepts no further changes; write to incident ${t2} instead.`]);
  });

  it('a target that refuses a source it absorbed meanwhile (two merges finishing one abandoned mark)', async () => {
    const [t1, a, c] = await newIncidents(3);
    // A merge of a into t1 dies after marking a: nothing else reaches an incident stream.
    const events = t.platform.events;
    expect((await mergeDyingAfterMark(events, a, () => merge(t1, [a]))).statusCode).toBe(500);
    // Once the mark is abandoned (read back as a minute old), two merges take it over; the one that absorbs second fails.
    const readStream = events.readStream.bind(events);
    events.readStream = (async (stream, options) => {
      const read = await readStream(stream, options);
      if (stream !== `incident-${a}`) return read;
      return read.map((e) => (e.type === 'IncidentMergedInto' ? { ...e, recordedAt: new Date(Date.parse(e.recordedAt) - 61_000).toISOString() } : e));
    }) as EventStore['readStream'];
    try {
      const answer = await mergeInterrupted(
        (stream, types) => stream === `incident-${t1}` && types.includes('IncidentsAbsorbed'),
        () => merge(t1, [a, c]),
        async () => expect((await merge(t1, [a])).statusCode).toBe(200),
      );
      expect(answer.statusCode).toBe(400);
    } finally {
      events.readStream = readStream;
    }
    expect(await storedReasons(c)).toEqual([`validation_failed: source_incident_ids[0]: incident ${a} was already merged into this incident`]);
    expect(await storedReasons(a)).toEqual([]);
  });

  it('a failure that is not the merge rules (the store refusing the absorb)', async () => {
    const [t1, a] = await newIncidents(2);
    const events = t.platform.events;
    const original = events.append.bind(events);
    events.append = (async (stream, batch, options) => {
      if (batch.some((e) => e.type === 'IncidentsAbsorbed')) throw new Error('simulated store failure');
      return original(stream, batch, options);
    }) as EventStore['append'];
    try {
      expect((await merge(t1, [a])).statusCode).toBe(500);
    } finally {
      events.append = original;
    }
    expect(await storedReasons(a)).toEqual(['internal_error: the merge could not be completed']);
  });
});
