/**
 * The SQLite event log writes the appends made in one turn of the event loop in one transaction
 * (a savepoint each). A refused append fails alone; when the transaction as a whole fails, every
 * append in it fails and none of them is kept, so no caller is told of an append a crash or an
 * error could take back.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { WrongExpectedRevisionError, type NewEvent } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { makeTempDir } from '../support/event-store-fixtures.js';

const event = (type: string, n: number): NewEvent => ({ type, data: { n }, metadata: { actor: 'system:test', occurred_at: '2026-11-26T00:00:00.000Z' } });

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
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.append(`stream-${i}`, [event('Happened', i)], { expectedRevision: 'no_stream' })));
    expect(results.map((r) => r.nextExpectedRevision)).toEqual(Array(20).fill(0));
    expect(new Set(results.map((r) => r.position)).size).toBe(20);
    for (let i = 0; i < 20; i++) expect((await store.readStream(`stream-${i}`)).map((e) => e.data)).toEqual([{ n: i }]);
    expect(walFrames()).toBeLessThan(20);
  });

  it('refuses an append with a wrong expected revision alone and commits the others of its turn', async () => {
    const [first, refused, third] = await Promise.allSettled([
      store.append('a', [event('Happened', 1)], { expectedRevision: 'no_stream' }),
      store.append('warm-up', [event('Happened', 2)], { expectedRevision: 5 }),
      store.append('c', [event('Happened', 3), event('Happened', 4)], { expectedRevision: 'no_stream' }),
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
      store.append('d', [event('Happened', 5)], { expectedRevision: 'no_stream' }),
      store.append('d', [event('Happened', 6)], { expectedRevision: 0 }),
    ]);
    expect([x.nextExpectedRevision, y.nextExpectedRevision]).toEqual([0, 1]);
    expect((await store.readStream('d')).map((e) => e.data)).toEqual([{ n: 5 }, { n: 6 }]);
  });

  it('fails every append of a turn whose transaction SQLite rolls back, keeps none of them, and goes on appending', async () => {
    // A trigger that rolls back the whole transaction when an event of type Boom is written.
    other.exec(`CREATE TRIGGER boom BEFORE INSERT ON event_log WHEN NEW.type = (SELECT id FROM event_types WHERE name = 'Boom') BEGIN SELECT RAISE(ROLLBACK, 'boom'); END`);
    const outcomes = await Promise.allSettled([
      store.append('before-boom', [event('Happened', 1)], { expectedRevision: 'no_stream' }),
      store.append('boom', [event('Boom', 2)], { expectedRevision: 'no_stream' }),
      store.append('after-boom', [event('Happened', 3)], { expectedRevision: 'no_stream' }),
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

  it('writes the appends still waiting for their turn when the store closes', async () => {
    const waiting = store.append('late', [event('Happened', 7)], { expectedRevision: 'no_stream' });
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
