import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RecordedEvent, StoreUnavailableError } from '../../src/platform/event-store/event-store.port.js';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import { chainedEventStore } from '../../src/platform/event-store/chained-event-store.js';
import { EsdbEventStore } from '../../src/platform/event-store/eventstoredb/esdb-event-store.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { makeTempDir, runNode, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { eventStoreContract } from './event-store.contract.js';

let dir: ReturnType<typeof makeTempDir> | null = null;

eventStoreContract(
  'SQLite',
  async () => {
    dir = makeTempDir();
    return new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 20 });
  },
  async () => {
    dir?.remove();
    dir = null;
  },
  { startsEmpty: true },
);

// What every process uses (createEventStore): the adapter under the hash chain (docs/audit.md).
eventStoreContract(
  'SQLite, hash-chained',
  async () => {
    dir = makeTempDir();
    return chainedEventStore(new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 20 }));
  },
  async () => {
    dir?.remove();
    dir = null;
  },
  { startsEmpty: true, chained: true },
);

const eventStoreUrl = process.env.EVENTSTORE_URL;
if (eventStoreUrl) {
  eventStoreContract('EventStoreDB', async () => new EsdbEventStore(eventStoreUrl), undefined, { startsEmpty: false });
  eventStoreContract('EventStoreDB, hash-chained', async () => chainedEventStore(new EsdbEventStore(eventStoreUrl)), undefined, { startsEmpty: false, chained: true });
} else {
  describe.skip('EventStoreDB adapter (skipped: EVENTSTORE_URL not set)', () => {
    it('runs the event store contract against a real server', () => {});
  });
}

describe('EventStoreDB adapter without a server', () => {
  it('reports an unreachable server as StoreUnavailableError on every kind of call', async () => {
    const store = new EsdbEventStore('esdb://127.0.0.1:1?tls=false', { deadlineMs: 5000 });
    const outcomes = await Promise.allSettled([
      store.ping(),
      store.append('s', [{ type: 'A', data: {} }], { expectedRevision: 'any' }),
      store.readStream('s'),
      store.readAll({ maxCount: 1 }),
      store.headPosition(),
    ]);

    const failures = outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).name : 'resolved'));
    expect(failures).toEqual(Array(5).fill('StoreUnavailableError'));
    await store.close();
  });
});

/** A script that appends one `Hello` event to stream `from-child` of the file given as its argument, from another process. */
async function childAppender(dir: string): Promise<string> {
  const out = join(dir, 'child');
  await transpileForChildProcess(['src/platform/event-store/sqlite/sqlite-event-store.ts'], out);
  const script = join(out, 'append.js');
  writeFileSync(
    script,
    `const { SqliteEventStore } = require('./src/platform/event-store/sqlite/sqlite-event-store.js');
     const store = new SqliteEventStore(process.argv[2]);
     store.append('from-child', [{ type: 'Hello', data: { pid: process.pid } }], { expectedRevision: 'no_stream' })
       .then(() => store.close()).catch((e) => { console.error(e); process.exit(1); });`,
  );
  return script;
}

describe('SQLite event log shared by several store instances', () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(() => temp.remove());

  it('wakes a subscription on one instance when another instance appends to the same file', async () => {
    const file = join(temp.path, 'events.sqlite');
    // A poll far longer than the test timeout: only the in-process append signal can deliver.
    const reader = new SqliteEventStore(file, { pollIntervalMs: 600_000 });
    const writer = new SqliteEventStore(file);
    const subscription = reader.subscribeToAll({ after: null });
    const first = (async () => {
      for await (const event of subscription) return event;
      return null;
    })();

    await writer.append('shared-1', [{ type: 'Hello', data: { from: 'writer' } }], { expectedRevision: 'no_stream' });

    expect(((await first) as RecordedEvent).data).toEqual({ from: 'writer' });
    await Promise.all([reader.close(), writer.close()]);
  });

  it('delivers to a waiting subscription what another process appends to the same file', async () => {
    const file = join(temp.path, 'events.sqlite');
    const script = await childAppender(temp.path);
    const reader = new SqliteEventStore(file, { pollIntervalMs: 20 });
    const subscription = reader.subscribeToAll({ after: null });
    const first = (async () => {
      for await (const event of subscription) return event;
      return null;
    })();

    await runNode(script, [file], { NODE_PATH: join(process.cwd(), 'node_modules') });

    expect((await first)?.streamId).toBe('from-child');
    await reader.close();
  });

  it('reads what another instance appended after this one read to the stream\'s end', async () => {
    const file = join(temp.path, 'events.sqlite');
    const [a, b] = [new SqliteEventStore(file), new SqliteEventStore(file)];
    await a.append('channel', [{ type: 'Created', data: {} }], { expectedRevision: 'no_stream' });
    expect(await a.readStream('channel', { fromRevision: 1 })).toEqual([]);
    expect(await a.readStream('other', { fromRevision: 0 })).toEqual([]);

    await b.append('channel', [{ type: 'Deleted', data: {} }], { expectedRevision: 0 });
    await b.append('other', [{ type: 'Created', data: {} }], { expectedRevision: 'no_stream' });

    expect((await a.readStream('channel', { fromRevision: 1 })).map((e) => e.type)).toEqual(['Deleted']);
    expect((await a.readStream('other', { fromRevision: 0 })).map((e) => e.type)).toEqual(['Created']);
    await Promise.all([a.close(), b.close()]);
  });

  it('reads what another process appended after this one read to the stream\'s end', async () => {
    const file = join(temp.path, 'events.sqlite');
    const script = await childAppender(temp.path);
    const reader = new SqliteEventStore(file);
    expect(await reader.readStream('from-child', { fromRevision: 0 })).toEqual([]);

    await runNode(script, [file], { NODE_PATH: join(process.cwd(), 'node_modules') });

    expect((await reader.readStream('from-child', { fromRevision: 0 })).map((e) => e.type)).toEqual(['Hello']);
    await reader.close();
  });

  it('sees the other instance as a concurrent writer when expected revisions collide', async () => {
    const file = join(temp.path, 'events.sqlite');
    const [a, b] = [new SqliteEventStore(file), new SqliteEventStore(file)];
    await a.append('race', [{ type: 'Start', data: {} }], { expectedRevision: 'no_stream' });

    const outcomes = await Promise.allSettled([
      a.append('race', [{ type: 'FromA', data: {} }], { expectedRevision: 0 }),
      b.append('race', [{ type: 'FromB', data: {} }], { expectedRevision: 0 }),
    ]);

    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await b.readStream('race')).toHaveLength(2);
    await Promise.all([a.close(), b.close()]);
  });
});

describe('SQLite subscriptions sharing the recent events', () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(() => temp.remove());

  async function take(subscription: AsyncIterable<RecordedEvent>, count: number, onEach?: (event: RecordedEvent) => Promise<void>): Promise<RecordedEvent[]> {
    const seen: RecordedEvent[] = [];
    for await (const event of subscription) {
      seen.push(event);
      await onEach?.(event);
      if (seen.length === count) break;
    }
    return seen;
  }

  it('delivers another process\'s append to every waiting subscription, and to one busy with an earlier event when it appends nothing after', async () => {
    const file = join(temp.path, 'events.sqlite');
    const script = await childAppender(temp.path);
    const reader = new SqliteEventStore(file, { pollIntervalMs: 20 });
    await reader.append('local', [{ type: 'Local', data: {} }], { expectedRevision: 'no_stream' });
    const waiting = [take(reader.subscribeToAll({ after: 1 }), 1), take(reader.subscribeToAll({ after: 1 }), 1)];
    // This one holds the local event while the other process appends (several polls happen meanwhile).
    const busy = take(reader.subscribeToAll({ after: null }), 2, async (event) => {
      if (event.type === 'Local') await runNode(script, [file], { NODE_PATH: join(process.cwd(), 'node_modules') });
    });

    expect((await busy).map((e) => e.streamId)).toEqual(['local', 'from-child']);
    for (const seen of await Promise.all(waiting)) expect(seen.map((e) => e.streamId)).toEqual(['from-child']);
    await reader.close();
  });

  it('delivers an append made while the subscriber is still busy with the previous event, without waiting for a poll', async () => {
    const store = new SqliteEventStore(join(temp.path, 'events.sqlite'), { pollIntervalMs: 600_000 });
    await store.append('busy', [{ type: 'First', data: {} }], { expectedRevision: 'no_stream' });

    const seen = await take(store.subscribeToAll({ after: null }), 2, async (event) => {
      if (event.type === 'First') await store.append('busy', [{ type: 'Second', data: {} }], { expectedRevision: 0 });
    });

    expect(seen.map((e) => e.type)).toEqual(['First', 'Second']);
    await store.close();
  });

  it('gives every subscriber every event once, in order, when two connections append in turns', async () => {
    const file = join(temp.path, 'events.sqlite');
    const local = new SqliteEventStore(file, { pollIntervalMs: 20, recentEventsKept: 7, subscriptionPageSize: 5 });
    const other = new SqliteEventStore(file);
    const total = 120;
    const early = take(local.subscribeToAll({ after: null }), total);
    const appends: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      const writer = i % 3 === 0 ? other : local;
      appends.push(writer.append(`turns-${i % 4}`, [{ type: 'Turn', data: { i } }], { expectedRevision: 'any' }));
      if (i === 60) appends.push(take(local.subscribeToAll({ after: 10 }), total - 10).then((late) => expect(late.map((e) => e.position)).toEqual(range(11, total))));
      if (i % 10 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(appends);

    const seen = await early;
    expect(seen.map((e) => e.position)).toEqual(range(1, total));
    expect(seen.map((e) => (e.data as { i: number }).i).sort((a, b) => a - b)).toEqual(range(0, total - 1));
    await Promise.all([local.close(), other.close()]);
  });

  it('does not let one subscriber change the event another subscriber receives', async () => {
    const store = new SqliteEventStore(join(temp.path, 'events.sqlite'), { pollIntervalMs: 20 });
    const first = store.subscribeToAll({ after: null });
    const second = store.subscribeToAll({ after: null });
    const firstSeen = take(first, 2);
    const secondSeen = take(second, 2);
    await store.append('shared', [{ type: 'A', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    await store.append('shared', [{ type: 'B', data: { n: 2 } }], { expectedRevision: 0 });

    const [mine, theirs] = await Promise.all([firstSeen, secondSeen]);
    expect(() => {
      (mine[1].data as { n: number }).n = 99;
    }).toThrow(TypeError);
    expect(theirs.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
    await store.close();
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

describe('createEventStore', () => {
  it('opens a SQLite log at DATA_DIR/events.sqlite, creating the directory', async () => {
    const temp = makeTempDir();
    const dataDir = join(temp.path, 'nested', 'data');
    const store = createEventStore({ dataDir, eventStoreUrl: null });

    await store.append('s', [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' });

    expect(existsSync(join(dataDir, 'events.sqlite'))).toBe(true);
    await store.close();
    temp.remove();
  });
});
