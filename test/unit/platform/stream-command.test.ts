import { jest } from '@jest/globals';
import { join } from 'node:path';
import { type EventStore, type RecordedEvent, WrongExpectedRevisionError } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { chainedEventStore } from '../../../src/platform/event-store/chained-event-store.js';
import { verifyHistory } from '../../../src/audit/application/verify.js';
import { systemContext } from '../../../src/platform/es/command-context.js';
import { runIdempotent } from '../../../src/platform/es/idempotency-scope.js';
import { appendOnly, runStreamCommand, type Aggregate } from '../../../src/platform/es/stream-command.js';
import { StreamCache } from '../../../src/platform/es/stream-cache.js';
import { makeTempDir, useTempSqliteStore } from '../../support/event-store-fixtures.js';

/** A counter that refuses to go past a limit: decisions depend on every event in the stream. */
const counter: Aggregate<number> = { initial: () => 0, evolve: (total, event: RecordedEvent) => total + (event.data as { n: number }).n };
const addUpTo = (limit: number) => (total: number) => ({ events: total < limit ? [{ type: 'Added', data: { n: 1 } }] : [], result: null });

/**
 * Counts the appends `store` refuses with WrongExpectedRevisionError (a command that raced
 * another); `beforeFirst` runs before the first append goes through.
 */
function countRefusedAppends(store: SqliteEventStore, beforeFirst?: () => Promise<unknown>): () => number {
  let refused = 0;
  let first = true;
  const append = store.append.bind(store);
  store.append = async (...args) => {
    if (first) {
      first = false;
      await beforeFirst?.();
    }
    try {
      return await append(...args);
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) refused++;
      throw error;
    }
  };
  return () => refused;
}

describe('runStreamCommand through a fold', () => {
  const log = useTempSqliteStore();
  let store: SqliteEventStore;
  beforeEach(() => (store = log.store));

  it('decides on what other writers appended since the fold last looked', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    const other = new SqliteEventStore(join(log.path, 'events.sqlite'));
    for (let i = 0; i < 3; i++) await runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(5), { fold });
    await other.append('count', [{ type: 'Added', data: { n: 2 } }], { expectedRevision: 2 });

    const refused = await runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(5), { fold });

    expect(refused.state).toBe(5);
    expect(refused.appended).toEqual([]);
    expect((await store.readStream('count')).length).toBe(4);
    await other.close();
  });

  it('runs concurrent commands of one process on one stream in turn: each decides on the last one\'s result', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    const refused = countRefusedAppends(store);

    const results = await Promise.all(Array.from({ length: 20 }, () => runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(100), { fold, foldOwnAppends: true })));

    expect(results.map((result) => result.state).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect((await store.readStream('count')).length).toBe(20);
    expect(refused()).toBe(0);
  });

  it('waits its turn behind a slow append (150 ms) instead of racing it: none refused', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    // A store answering slowly, not a wait for the assertion.
    const refused = countRefusedAppends(store, () => new Promise((resolve) => setTimeout(resolve, 150)));

    const results = await Promise.all(Array.from({ length: 5 }, () => runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(100), { fold, foldOwnAppends: true })));

    expect(results.map((result) => result.state)).toEqual([0, 1, 2, 3, 4]);
    expect(refused()).toBe(0);
  });

  it('stops waiting behind a turn that never ends (a stuck decide): the next command goes on', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const stuck = runStreamCommand(store, 'count', counter, systemContext('test'), async (total) => {
      order.push(`stuck decides on ${total}`);
      await held;
      return addUpTo(10)(total);
    }, { fold, foldOwnAppends: true });
    const next = runStreamCommand(store, 'count', counter, systemContext('test'), (total) => {
      order.push(`next decides on ${total}`);
      return addUpTo(10)(total);
    }, { fold, foldOwnAppends: true });
    // Resolves only if the next command stops waiting while the stuck one still holds its turn.
    await next;
    order.push('next done');
    release();
    await stuck;
    expect(order).toEqual(['stuck decides on 0', 'next decides on 0', 'next done', 'stuck decides on 1']);
    expect((await store.readStream('count')).length).toBe(2);
  });

  it("keeps the state a decision folded already, without folding its events again", async () => {
    let evolved = 0;
    const counting: Aggregate<number> = { initial: counter.initial, evolve: (total, event) => (evolved++, counter.evolve(total, event)) };
    const fold = new StreamCache<number>(store, counting.initial, counting.evolve);
    const decided = await runStreamCommand(store, 'count', counting, systemContext('test'), (total) => ({ events: [{ type: 'Added', data: { n: 2 } }], result: total + 2, after: total + 2 }), { fold, foldOwnAppends: true });
    expect(decided.result).toBe(2);
    expect(evolved).toBe(0);
    expect(fold.peek('count')).toEqual({ state: 2, revision: 0 });
    // Without `after`, the fold folds the appended events itself.
    await runStreamCommand(store, 'count', counting, systemContext('test'), addUpTo(10), { fold, foldOwnAppends: true });
    expect(evolved).toBe(1);
    expect(fold.peek('count')).toEqual({ state: 3, revision: 1 });
  });

  it('lets the next command go while a refused one pauses before its retry', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    await runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(10), { fold, foldOwnAppends: true });
    const other = new SqliteEventStore(join(log.path, 'events.sqlite'));
    const order: string[] = [];
    const first = runStreamCommand(store, 'count', counter, systemContext('test'), async (total) => {
      order.push(`first decides on ${total}`);
      // Another process appends meanwhile: this append is refused, and the command pauses before its retry.
      if (order.length === 1) await other.append('count', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 0 });
      return addUpTo(10)(total);
    }, { fold, foldOwnAppends: true });
    const second = runStreamCommand(store, 'count', counter, systemContext('test'), (total) => {
      order.push(`second decides on ${total}`);
      return addUpTo(10)(total);
    }, { fold, foldOwnAppends: true });
    await Promise.all([first, second]);
    expect(order).toEqual(['first decides on 1', 'second decides on 2', 'first decides on 3']);
    expect((await store.readStream('count')).length).toBe(4);
    await other.close();
  });

  it('a command that fails leaves its turn: the next one in line goes without waiting for the turn to count as stuck', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    // Timers are fake: a turn left open would hold the next command until a stuck-turn timer that never fires.
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask', 'performance'] });
    try {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const failing = runStreamCommand(store, 'count', counter, systemContext('test'), async () => {
        await gate;
        throw new Error('refused by the domain');
      }, { fold, foldOwnAppends: true });
      const next = runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(10), { fold, foldOwnAppends: true });
      release();
      await expect(failing).rejects.toThrow('refused by the domain');
      expect((await next).state).toBe(0);
      expect((await store.readStream('count')).length).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  it('retries on a concurrent append and still appends exactly once', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    await runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(10), { fold });
    let raced = false;
    const result = await runStreamCommand(store, 'count', counter, systemContext('test'), async (total) => {
      if (!raced) {
        raced = true;
        await store.append('count', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 0 });
      }
      return addUpTo(10)(total);
    }, { fold });

    expect(result.state).toBe(2);
    expect((await store.readStream('count')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }]);
  });

  it('groups an append with its turn\'s others, but writes at once one that a command waits in line behind', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    const grouped: Array<[string, boolean | undefined]> = [];
    const append = store.append.bind(store);
    store.append = (streamId, events, options) => {
      grouped.push([streamId, options.groupCommit]);
      return append(streamId, events, options);
    };
    const add = (stream: string) => runStreamCommand(store, stream, counter, systemContext('test'), addUpTo(100), { fold, foldOwnAppends: true, groupCommit: true });

    // Two streams, one command each: both wait for the turn's shared commit.
    await Promise.all([add('alone-1'), add('alone-2')]);
    // Three commands on one stream: the first two have a follower in line, the last has none.
    await Promise.all([add('hot'), add('hot'), add('hot')]);

    expect(grouped).toEqual([['alone-1', true], ['alone-2', true], ['hot', false], ['hot', false], ['hot', true]]);
    expect((await store.readStream('hot')).length).toBe(3);
  });
});

describe('runStreamCommand inside a keyed request', () => {
  const log = useTempSqliteStore();
  let store: SqliteEventStore;
  beforeEach(() => (store = log.store));

  /** The store, counting the events each read returns. */
  const counting = () => {
    const reads = { events: 0 };
    const wrapped = new Proxy(store, {
      get(target, name) {
        if (name !== 'readStream') return Reflect.get(target, name).bind(target);
        return async (...args: Parameters<SqliteEventStore['readStream']>) => {
          const events = await target.readStream(...args);
          reads.events += events.length;
          return events;
        };
      },
    });
    return { store: wrapped, reads };
  };
  const append = (s: typeof store, n: number) => runStreamCommand(s, 'count', counter, systemContext('test'), () => ({ events: [{ type: 'Added', data: { n } }], result: n }));

  it('a retry of the same key appends nothing and answers what the first attempt decided', async () => {
    for (let i = 0; i < 50; i++) await append(store, 1);
    const first = await runIdempotent('admin:k', async () => [await append(store, 2), await append(store, 3)]);
    await append(store, 1); // another writer after the first attempt

    const retry = await runIdempotent('admin:k', async () => [await append(store, 2), await append(store, 3)]);

    expect(retry.map((r) => [r.result, r.replayed, r.append?.nextExpectedRevision])).toEqual([[2, true, 50], [3, true, 51]]);
    expect(first.map((r) => r.append?.nextExpectedRevision)).toEqual([50, 51]);
    expect((await store.readStream('count')).length).toBe(53);
  });

  it('a keyed command looks its markers up instead of reading the whole stream', async () => {
    for (let i = 0; i < 200; i++) await append(store, 1);
    const { store: watched, reads } = counting();

    await runIdempotent('admin:fresh', () => runStreamCommand(watched, 'count', appendOnly, systemContext('test'), () => ({ events: [{ type: 'Added', data: { n: 1 } }], result: null })));

    expect(reads.events).toBeLessThan(5);
    expect((await store.readStream('count')).length).toBe(201);
  });

  it('two attempts of one key at once append once', async () => {
    await append(store, 1);
    const results = await Promise.all([1, 2, 3].map(() => runIdempotent('admin:race', () => append(store, 5))));

    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect((await store.readStream('count')).map((e) => (e.data as { n: number }).n)).toEqual([1, 5]);
  });
});

describe('runStreamCommand with appendOnly', () => {
  it('appends after a stream whose every event was cut away but whose revision stays (EventStoreDB $tb)', async () => {
    // A stream at revision 4 whose events all sit before its truncate-before mark: reads see none.
    let revision = 4;
    const appended: unknown[] = [];
    const cut = {
      readStream: async () => [],
      append: async (stream: string, events: unknown[], options: { expectedRevision: number | 'no_stream' | 'any' }) => {
        const expected = options.expectedRevision === 'no_stream' ? -1 : options.expectedRevision;
        if (expected !== revision) throw new WrongExpectedRevisionError(stream, options.expectedRevision, revision);
        appended.push(...events);
        revision += events.length;
        return { nextExpectedRevision: revision, position: 100 };
      },
    } as unknown as EventStore;

    const result = await runStreamCommand(cut, 'checks-1', appendOnly, systemContext('test'), () => ({ events: [{ type: 'Added', data: { n: 1 } }], result: null }));

    expect(result.append).toEqual({ nextExpectedRevision: 5, position: 100 });
    expect(appended).toHaveLength(1);
  });
});

describe('the chained store\'s `any` appends go through runStreamCommand', () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(() => temp.remove());

  /** A store that counts the reads made of it. */
  function counted(inner: EventStore): { store: EventStore; reads: () => number } {
    let reads = 0;
    const store = new Proxy(inner, {
      get(target, name, receiver) {
        if (name === 'readStream') return (...args: Parameters<EventStore['readStream']>) => (reads++, target.readStream(...args));
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return { store, reads: () => reads };
  }

  it('reads nothing back for an `any` append after its own last append to the stream', async () => {
    const inner = new SqliteEventStore(join(temp.path, 'events.sqlite'));
    const { store, reads } = counted(inner);
    const chained = chainedEventStore(store);
    await chained.append('markers', [{ type: 'Marked', data: { n: 0 } }], { expectedRevision: 'any' });
    const before = reads();
    for (let n = 1; n <= 5; n++) await chained.append('markers', [{ type: 'Marked', data: { n } }], { expectedRevision: 'any' });

    expect(reads() - before).toBe(0);
    expect((await inner.readStream('markers')).map((e) => e.revision)).toEqual([0, 1, 2, 3, 4, 5]);
    await inner.close();
  });

  it('links every `any` append of two processes racing on one stream to the real previous event', async () => {
    const file = join(temp.path, 'events.sqlite');
    const [first, second] = [new SqliteEventStore(file), new SqliteEventStore(file)];
    const [a, b] = [chainedEventStore(first), chainedEventStore(second)];
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).append('shared', [{ type: 'Turn', data: { i } }], { expectedRevision: 'any' })));

    const events = await first.readStream('shared');
    expect(events).toHaveLength(40);
    expect(await verifyHistory(first, { stream: 'shared' })).toMatchObject({ intact: true, events_checked: 40 });
    await Promise.all([first.close(), second.close()]);
  });
});
