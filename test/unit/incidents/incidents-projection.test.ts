/**
 * The incidents projection in isolation: given events, which documents it writes. An event
 * writes the incident's head and the items it names, never the incident's other items, so the
 * 300th comment or linked check costs what the first did.
 */
import { incidentsProjection } from '../../../src/incidents/views/incidents/projection.js';
import { INCIDENT_CHECKPOINTS, INCIDENT_CHECKS, INCIDENT_COMMENTS, INCIDENTS, MAX_REOPENINGS } from '../../../src/incidents/views/incidents/view.js';
import type { IncidentEvent } from '../../../src/incidents/domain/events.js';
import type { IncidentCommand, IncidentState } from '../../../src/incidents/domain/incident.js';
import type { RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import type { ViewTransaction } from '../../../src/platform/projections/projection.js';
import type { Doc } from '../../../src/platform/read-store/read-store.port.js';
import { MemoryReadStore } from '../analytics/support/memory-store.js';
import { at, createCommand, failingCheck, run } from './fixtures.js';

interface Write {
  op: 'put' | 'delete';
  collection: string;
  id: string;
  bytes: number;
}

/** Applies each event in its own batch over an in-memory store; returns what each event wrote. */
class ProjectionSpec {
  readonly store = new MemoryReadStore();
  private revision = 0;

  async given(events: IncidentEvent[]): Promise<Write[][]> {
    for (const spec of incidentsProjection.collections) await this.store.ensureCollection(spec);
    const written: Write[][] = [];
    for (const event of events) {
      const writes: Write[] = [];
      const pending = new Map<string, Doc | null>();
      const key = (collection: string, id: string) => `${collection}\u0000${id}`;
      const views: ViewTransaction = {
        get: async (collection, id) => (pending.has(key(collection, id)) ? pending.get(key(collection, id))! : this.store.get(collection, id)),
        find: (collection, query) => this.store.find(collection, query),
        put: (collection, doc) => {
          pending.set(key(collection, doc.id), doc);
          writes.push({ op: 'put', collection, id: doc.id, bytes: JSON.stringify(doc).length });
        },
        delete: (collection, id) => {
          pending.set(key(collection, id), null);
          writes.push({ op: 'delete', collection, id, bytes: 0 });
        },
      };
      const recorded = { type: event.type, data: event.data, revision: this.revision++ } as unknown as RecordedEvent;
      await incidentsProjection.handlers[event.type](recorded, views);
      await this.store.commit(writes.map((w) => (w.op === 'put' ? { op: 'put', collection: w.collection, doc: pending.get(key(w.collection, w.id))! } : { op: 'delete', collection: w.collection, id: w.id })));
      written.push(writes);
    }
    return written;
  }

  rows(collection: string): Doc[] {
    return [...(this.store.collections.get(collection)?.values() ?? [])];
  }
}

/** Runs commands through the domain, as handlers do, and returns the events in order. */
function eventsOf(commands: Array<[IncidentCommand, string]>, from: IncidentState = null): { state: IncidentState; events: IncidentEvent[] } {
  let state = from;
  const events: IncidentEvent[] = [];
  for (const [command, now] of commands) {
    const result = run(state, command, now);
    state = result.state;
    events.push(...result.events);
  }
  return { state, events };
}

const shape = (writes: Write[]) => writes.map((w) => `${w.op} ${w.collection}`).sort();

describe('incidents projection', () => {
  it('a comment, an edit and a delete each write the head and that one comment', async () => {
    const spec = new ProjectionSpec();
    const comments = Array.from({ length: 300 }, (_, i): [IncidentCommand, string] => [{ kind: 'add_comment', comment_id: 1000 + i, body: `note ${i}` }, at(i + 1)]);
    const { events } = eventsOf([
      [createCommand(), at(0)],
      ...comments,
      [{ kind: 'update_comment', comment_id: 1000, pinned: true }, at(400)],
      [{ kind: 'delete_comment', comment_id: 1001 }, at(401)],
    ]);
    const written = await spec.given(events);

    const firstComment = written[1];
    const lastComment = written[300];
    expect(shape(firstComment)).toEqual(['put incident_comments', 'put incidents']);
    expect(shape(lastComment)).toEqual(['put incident_comments', 'put incidents']);
    // The head does not grow with the comments.
    const headBytes = (writes: Write[]) => writes.find((w) => w.collection === INCIDENTS)!.bytes;
    expect(headBytes(lastComment)).toBe(headBytes(firstComment));

    expect(written[301].filter((w) => w.collection === INCIDENT_COMMENTS).map((w) => [w.op, w.id])).toEqual([['put', '1000']]);
    expect(written[302].filter((w) => w.collection === INCIDENT_COMMENTS).map((w) => [w.op, w.id])).toEqual([['delete', '1001']]);
    const stored = spec.rows(INCIDENT_COMMENTS);
    expect(stored).toHaveLength(299);
    expect(stored.find((d) => d.id === '1000')!.comment).toMatchObject({ id: 1000, body: 'note 0', pinned: true, updated_at: at(400) });
  });

  it('a linked check writes the head and that check; the head keeps only the count', async () => {
    const spec = new ProjectionSpec();
    const links = Array.from({ length: 300 }, (_, i): [IncidentCommand, string] => [{ kind: 'link_check', check: failingCheck(5000 + i, at(i)) }, at(i)]);
    const { events } = eventsOf([[createCommand(), at(0)], ...links]);
    const written = await spec.given(events);
    expect(shape(written[1])).toEqual(['put incident_checks', 'put incidents']);
    expect(shape(written[300])).toEqual(['put incident_checks', 'put incidents']);
    const head = spec.rows(INCIDENTS)[0];
    expect(head.checks_total).toBe(300);
    expect((head.state as Record<string, unknown>).error_count).toBe(300);
    expect(head.state).not.toHaveProperty('checks');
    expect(spec.rows(INCIDENT_CHECKS)).toHaveLength(300);
  });

  it('a reopening is kept on the head with the resolution it undid; a never-reopened head has no such key', async () => {
    const spec = new ProjectionSpec();
    const cycle = (n: number): Array<[IncidentCommand, string]> => [
      [{ kind: 'update_status', resolved: true }, at(10 * n)],
      [{ kind: 'update_status', resolved: false }, at(10 * n + 5)],
    ];
    const { events } = eventsOf([[createCommand(), at(0)], [{ kind: 'add_comment', comment_id: 1, body: 'x' }, at(1)], ...cycle(1), ...cycle(2), [{ kind: 'add_comment', comment_id: 2, body: 'y' }, at(30)]]);
    await spec.given(events.slice(0, 2));
    expect(spec.rows(INCIDENTS)[0]).not.toHaveProperty('reopenings');
    await spec.given(events.slice(2));
    // Later events (a comment) carry the list over unchanged.
    expect(spec.rows(INCIDENTS)[0].reopenings).toEqual([
      { n: 1, resolved_at: at(10), reopened_at: at(15) },
      { n: 2, resolved_at: at(20), reopened_at: at(25) },
    ]);
  });

  it('only the newest MAX_REOPENINGS are kept, numbered from the first', async () => {
    const spec = new ProjectionSpec();
    const cycles = Array.from({ length: MAX_REOPENINGS + 3 }, (_, i): Array<[IncidentCommand, string]> => [
      [{ kind: 'update_status', resolved: true }, at(10 * (i + 1))],
      [{ kind: 'update_status', resolved: false }, at(10 * (i + 1) + 5)],
    ]).flat();
    await spec.given(eventsOf([[createCommand(), at(0)], ...cycles]).events);
    const reopenings = spec.rows(INCIDENTS)[0].reopenings as Array<{ n: number }>;
    expect(reopenings).toHaveLength(MAX_REOPENINGS);
    expect(reopenings.map((r) => r.n)).toEqual(Array.from({ length: MAX_REOPENINGS }, (_, i) => i + 4));
  });

  it('a check delivered twice is stored and counted once', async () => {
    const spec = new ProjectionSpec();
    const { events } = eventsOf([[createCommand(), at(0)], [{ kind: 'link_check', check: failingCheck(7, at(1)) }, at(1)]]);
    await spec.given([...events, events[1]]);
    expect(spec.rows(INCIDENTS)[0].checks_total).toBe(1);
    expect(spec.rows(INCIDENT_CHECKS)).toHaveLength(1);
  });

  it('a merge moves comments, checkpoints and checks from the source rows to the target rows', async () => {
    const spec = new ProjectionSpec();
    const target = eventsOf([[createCommand({ incident_id: 1 }), at(0)], [{ kind: 'link_check', check: failingCheck(7, at(1)) }, at(1)]]);
    const source = eventsOf([
      [createCommand({ incident_id: 2 }), at(0)],
      [{ kind: 'link_check', check: failingCheck(7, at(1)) }, at(1)],
      [{ kind: 'link_check', check: failingCheck(8, at(2)) }, at(2)],
      [{ kind: 'add_comment', comment_id: 30, body: 'x' }, at(3)],
      [{ kind: 'add_checkpoint', checkpoint_id: 40, title: 'Investigating' }, at(4)],
    ]);
    const marked = eventsOf([[{ kind: 'mark_merged_into', target_id: 1 }, at(5)]], source.state);
    const absorbed = eventsOf([[{ kind: 'absorb_sources', sources: [source.state!] }, at(6)]], target.state);
    await spec.given([...target.events, ...source.events, ...marked.events, ...absorbed.events]);

    const ids = (collection: string) => spec.rows(collection).map((d) => d.id).sort();
    expect(ids(INCIDENT_CHECKS)).toEqual(['1:7', '1:8']);
    // A comment is keyed by its own id: the same row, now the target's.
    expect(spec.rows(INCIDENT_COMMENTS).map((d) => [d.id, d.incident_id])).toEqual([['30', 1]]);
    expect(ids(INCIDENT_CHECKPOINTS)).toEqual(['1:40']);
    const heads = Object.fromEntries(spec.rows(INCIDENTS).map((d) => [d.id, d.checks_total]));
    expect(heads).toEqual({ 1: 2, 2: 0 });
  });

  it('a released merge puts the source\'s items back', async () => {
    const spec = new ProjectionSpec();
    const source = eventsOf([
      [createCommand({ incident_id: 2 }), at(0)],
      [{ kind: 'link_check', check: failingCheck(8, at(2)) }, at(2)],
      [{ kind: 'add_comment', comment_id: 30, body: 'x' }, at(3)],
    ]);
    const marked = eventsOf([[{ kind: 'mark_merged_into', target_id: 1, merge_id: 'm' }, at(5)]], source.state);
    const released = eventsOf([[{ kind: 'release_merge', target_id: 1, merge_id: 'm', reason: 'test', restored: source.state! }, at(6)]], marked.state);
    await spec.given([...source.events, ...marked.events, ...released.events]);
    expect(spec.rows(INCIDENT_CHECKS).map((d) => d.id)).toEqual(['2:8']);
    expect(spec.rows(INCIDENT_COMMENTS).map((d) => [d.id, d.incident_id])).toEqual([['30', 2]]);
    expect(spec.rows(INCIDENTS)[0]).toMatchObject({ checks_total: 1, merged_into_id: null });
  });
});
