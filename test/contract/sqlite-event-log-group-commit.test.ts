/**
 * The SQLite event log writes the appends that may wait for a group commit (`groupCommit`, a
 * probed check's) made in one turn of the event loop in one transaction; any other append is
 * written at once, with the grouped ones still waiting. A refused append fails alone, and so does
 * one whose write fails part-way; when the transaction as a whole fails, every append in it
 * fails and none of them is kept, so no caller is told of an append a crash or an error could
 * take back.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WrongExpectedRevisionError, type ExpectedRevision, type NewEvent } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { chainedEventStore } from '../../src/platform/event-store/chained-event-store.js';
import { runStreamCommand } from '../../src/platform/es/stream-command.js';
import { makeTempDir } from '../support/event-store-fixtures.js';

const event = (type: string, n: number): NewEvent => ({ type, data: { n }, metadata: { actor: 'system:test', occurred_at: '2026-11-26T00:00:00.000Z' } });

const grouped = (expectedRevision: ExpectedRevision) => ({ expectedRevision, groupCommit: true });

describe('SQLite event log: appends of one turn share one commit', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let store: SqliteEventStore;
  let other: Database.Database;

  beforeEach(async () => {
    dir = makeTempDir('group-commit-');
    const file = join(dir.path, 'events.sqlite');
    store = new SqliteEventStore(file);
    await store.append('warm-up', [event('Warmed', 0)], { expectedRevision: 'no_stream' });
    // Another connection to the same file, as another process would have.
    other = new Database(file);
    other.pragma('busy_timeout = 5000');
  });

  afterEach(async () => {
    other.close();
    await store.close();
    dir.remove();
  });

  /** Frames in the WAL since it was last emptied: every commit writes at least one. */
  const walFrames = (): number => (other.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0].log;

  it('writes twenty appends made at once in fewer WAL frames than one commit each would take', async () => {
    other.pragma('wal_checkpoint(TRUNCATE)');
    expect(walFrames()).toBe(0);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(`stream-${i}`, [event('Happened', i)], grouped('no_stream'))));
    expect(results.map((r) => r.nextExpectedRevision)).toEqual(Array(20).fill(0));
    expect(new Set(results.map((r) => r.position)).size).toBe(20);
    for (let i = 0; i < 20; i++) expect((await store.readStream(`stream-${i}`)).map((e) => e.data)).toEqual([{ n: i }]);
    expect(walFrames()).toBeLessThan(20);
  });

  it('refuses an append with a wrong expected revision alone and commits the others of its turn', async () => {
    const [first, refused, third] = await Promise.allSettled([
      store.append('a', [event('Happened', 1)], grouped('no_stream')),
      store.append('warm-up', [event('Happened', 2)], grouped(5)),
      store.append('c', [event('Happened', 3), event('Happened', 4)], grouped('no_stream')),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(refused.status).toBe('rejected');
    expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
    expect(third).toMatchObject({ status: 'fulfilled', value: { nextExpectedRevision: 1 } });
    expect((await store.readStream('a')).map((e) => e.data)).toEqual([{ n: 1 }]);
    expect((await store.readStream('warm-up')).map((e) => e.type)).toEqual(['Warmed']);
    expect((await store.readStream('c')).map((e) => e.data)).toEqual([{ n: 3 }, { n: 4 }]);
    // Two appends to one stream in one turn: the second, expecting the first's revision, follows it.
    const [x, y] = await Promise.all([
      store.append('d', [event('Happened', 5)], grouped('no_stream')),
      store.append('d', [event('Happened', 6)], grouped(0)),
    ]);
    expect([x.nextExpectedRevision, y.nextExpectedRevision]).toEqual([0, 1]);
    expect((await store.readStream('d')).map((e) => e.data)).toEqual([{ n: 5 }, { n: 6 }]);
  });

  it('fails every append of a turn whose transaction SQLite rolls back, keeps none of them, and goes on appending', async () => {
    // A trigger that rolls back the whole transaction when an event of type Boom is written.
    other.exec(`CREATE TRIGGER boom BEFORE INSERT ON event_log WHEN NEW.type = (SELECT id FROM event_types WHERE name = 'Boom') BEGIN SELECT RAISE(ROLLBACK, 'boom'); END`);
    const outcomes = await Promise.allSettled([
      store.append('before-boom', [event('Happened', 1)], grouped('no_stream')),
      store.append('boom', [event('Boom', 2)], grouped('no_stream')),
      store.append('after-boom', [event('Happened', 3)], grouped('no_stream')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await store.readStream('before-boom')).toEqual([]);
    expect(await store.readStream('after-boom')).toEqual([]);
    const all = await store.readAll({ after: null, maxCount: 100 });
    expect(all.map((e) => e.streamId)).toEqual(['warm-up']);
    other.exec('DROP TRIGGER boom');
    const again = await store.append('before-boom', [event('Happened', 4)], { expectedRevision: 'no_stream' });
    expect(again.nextExpectedRevision).toBe(0);
    expect((await store.readStream('before-boom')).map((e) => e.data)).toEqual([{ n: 4 }]);
  });

  it('fails an append whose write SQLite refuses part-way alone: none of its events or its new stream kept, the others of its turn commit', async () => {
    // Refuses the statement (not the transaction) when an event of type Refused is written: the
    // append's first event is already written by then.
    other.exec(`CREATE TRIGGER refuse BEFORE INSERT ON event_log WHEN NEW.type = (SELECT id FROM event_types WHERE name = 'Refused') BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    const outcomes = await Promise.allSettled([
      store.append('kept-1', [event('Happened', 1)], grouped('no_stream')),
      store.append('partly', [event('Happened', 2), event('Refused', 3)], grouped('no_stream')),
      store.append('warm-up', [event('Happened', 4)], grouped(0)),
      store.append('kept-2', [event('Happened', 5), event('Happened', 6)], grouped('no_stream')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).not.toBeInstanceOf(WrongExpectedRevisionError);
    other.exec('DROP TRIGGER refuse');
    expect(await store.readStream('partly')).toEqual([]);
    expect(other.prepare(`SELECT count(*) FROM event_streams WHERE name = 'partly'`).pluck().get()).toBe(0);
    expect((await store.readStream('kept-1')).map((e) => e.data)).toEqual([{ n: 1 }]);
    expect((await store.readStream('warm-up')).map((e) => e.data)).toEqual([{ n: 0 }, { n: 4 }]);
    expect((await store.readStream('kept-2')).map((e) => e.data)).toEqual([{ n: 5 }, { n: 6 }]);
    const all = await store.readAll({ after: null, maxCount: 100 });
    expect(all.map((e) => [e.streamId, e.revision])).toEqual([['warm-up', 0], ['kept-1', 0], ['warm-up', 1], ['kept-2', 0], ['kept-2', 1]]);
    // The stream it would have started is still new.
    expect((await store.append('partly', [event('Happened', 7)], { expectedRevision: 'no_stream' })).nextExpectedRevision).toBe(0);
  });

  it('refuses an append expecting a revision of a stream that does not exist without leaving the stream behind', async () => {
    const [refused, kept] = await Promise.allSettled([
      store.append('never', [event('Happened', 1)], grouped(3)),
      store.append('kept', [event('Happened', 2)], grouped('no_stream')),
    ]);
    expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(WrongExpectedRevisionError);
    expect(kept.status).toBe('fulfilled');
    expect(other.prepare(`SELECT count(*) FROM event_streams WHERE name = 'never'`).pluck().get()).toBe(0);
  });

  it('commits an append to a known stream in two pages of the WAL and a new stream\'s in four: no sequence row, no commit row of its own', async () => {
    // The pages an append changes are what its commit writes: the event's row, its stream and
    // revision's index entry, and for a new stream the stream's row and its name's index entry.
    const framesPerAppend = async (append: (n: number) => Promise<unknown>): Promise<number> => {
      other.pragma('wal_checkpoint(TRUNCATE)');
      for (let n = 0; n < 100; n++) await append(n);
      return walFrames() / 100;
    };
    for (let n = 0; n < 20; n++) await store.append(`known-${n}`, [event('Happened', n)], { expectedRevision: 'no_stream' });
    const known = await framesPerAppend((n) => store.append(`known-${n % 20}`, [event('Happened', n)], { expectedRevision: Math.floor(n / 20) }));
    const fresh = await framesPerAppend((n) => store.append(`new-${n}`, [event('Happened', n)], { expectedRevision: 'no_stream' }));
    // A page split now and then adds a page to a commit.
    expect(known).toBeLessThanOrEqual(2.1);
    expect(fresh).toBeLessThanOrEqual(4.2);
  });

  it('lets the appends of one turn share the commit an earlier append of that turn started, each reading back as it was appended', async () => {
    const byA = (n: number): NewEvent => ({ type: 'Happened', data: { n }, metadata: { actor: 'a', request_id: 'r' } });
    const subscription = store.subscribeToAll({ after: null });
    const live: unknown[] = [];
    const seen = (async () => {
      for await (const e of subscription) if (live.push(JSON.stringify(e)) === 6) return;
    })();
    await Promise.all([
      // Several events whose metadata the last commit does not have: a commit of its own.
      store.append('shared-1', [byA(1), byA(2)], grouped('no_stream')),
      // One event: joins it, keeping its own metadata.
      store.append('shared-2', [event('Happened', 3)], grouped('no_stream')),
      // The same metadata as that commit: joins it too.
      store.append('shared-3', [byA(4), byA(5)], grouped('no_stream')),
    ]);
    await seen;
    await subscription.close();
    expect(other.prepare('SELECT count(*) FROM event_commits').pluck().get()).toBe(2);
    const read = (await store.readAll({ after: null, maxCount: 10 })).map((e) => JSON.stringify(e));
    expect(read).toEqual(live);
    const reopened = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    expect((await reopened.readAll({ after: null, maxCount: 10 })).map((e) => JSON.stringify(e))).toEqual(live);
    await reopened.close();
  });

  it('writes an append not marked for grouping at once: dependent appends to one stream take no turn of the event loop each', async () => {
    // A hot stream's commands append one after another, each expecting the previous revision.
    let turns = 0;
    let counting = true;
    const tick = (): void => {
      if (!counting) return;
      turns += 1;
      setImmediate(tick);
    };
    setImmediate(tick);
    let revision: ExpectedRevision = 'no_stream';
    for (let n = 0; n < 50; n++) revision = (await store.append('hot', [event('Commented', n)], { expectedRevision: revision })).nextExpectedRevision;
    counting = false;
    expect(revision).toBe(49);
    // Each append was committed before its promise settled, so the loop never turned.
    expect(turns).toBe(0);
    expect(other.prepare(`SELECT count(*) FROM event_log WHERE stream = (SELECT id FROM event_streams WHERE name = 'hot')`).pluck().get()).toBe(50);
  });

  it('writes the grouped appends still waiting, in the order they were made, with an append written at once', async () => {
    const first = store.append('mixed', [event('Happened', 1)], grouped('no_stream'));
    const other1 = store.append('mixed-other', [event('Happened', 2)], grouped('no_stream'));
    // Expects the waiting append's revision: it is written after it, in the same transaction.
    const now = store.append('mixed', [event('Happened', 3)], { expectedRevision: 0 });
    expect(other.prepare(`SELECT count(*) FROM event_log WHERE stream IN (SELECT id FROM event_streams WHERE name LIKE 'mixed%')`).pluck().get()).toBe(3);
    const [a, b, c] = await Promise.all([first, other1, now]);
    expect([a.nextExpectedRevision, b.nextExpectedRevision, c.nextExpectedRevision]).toEqual([0, 0, 1]);
    expect(a.position).toBeLessThan(b.position);
    expect(b.position).toBeLessThan(c.position);
    expect((await store.readStream('mixed')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it('groups the commands that ask for it through the hash chain, and writes the others one commit each', async () => {
    const chained = chainedEventStore(store);
    const aggregate = { initial: () => 0, evolve: (n: number) => n + 1 };
    const twenty = (prefix: string, groupCommit: boolean) =>
      Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          runStreamCommand(chained, `${prefix}-${i}`, aggregate, null, () => ({ events: [event('Checked', i)], result: null }), { groupCommit }),
        ),
      );
    other.pragma('wal_checkpoint(TRUNCATE)');
    await twenty('checks', true);
    const groupedFrames = walFrames();
    expect(groupedFrames).toBeLessThan(20);
    other.pragma('wal_checkpoint(TRUNCATE)');
    await twenty('commands', false);
    expect(walFrames()).toBeGreaterThanOrEqual(20);
    const chain = await chained.readStream('checks-3');
    expect(chain.map((e) => e.data)).toEqual([{ n: 3 }]);
    expect(chain[0].metadata.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('writes the appends still waiting for their turn when the store closes', async () => {
    const waiting = store.append('late', [event('Happened', 7)], grouped('no_stream'));
    await store.close();
    await expect(waiting).resolves.toMatchObject({ nextExpectedRevision: 0 });
    const reopened = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    try {
      expect((await reopened.readStream('late')).map((e) => e.data)).toEqual([{ n: 7 }]);
    } finally {
      await reopened.close();
    }
  });
});
