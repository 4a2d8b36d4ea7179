import { join } from 'node:path';
import type { RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { systemContext } from '../../../src/platform/es/command-context.js';
import { runStreamCommand, type Aggregate } from '../../../src/platform/es/stream-command.js';
import { StreamCache } from '../../../src/platform/es/stream-cache.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';

/** A counter that refuses to go past a limit: decisions depend on every event in the stream. */
const counter: Aggregate<number> = { initial: () => 0, evolve: (total, event: RecordedEvent) => total + (event.data as { n: number }).n };
const addUpTo = (limit: number) => (total: number) => ({ events: total < limit ? [{ type: 'Added', data: { n: 1 } }] : [], result: null });

describe('runStreamCommand through a fold', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let store: SqliteEventStore;
  beforeEach(() => {
    temp = makeTempDir();
    store = new SqliteEventStore(join(temp.path, 'events.sqlite'));
  });
  afterEach(async () => {
    await store.close();
    temp.remove();
  });

  it('decides on what other writers appended since the fold last looked', async () => {
    const fold = new StreamCache<number>(store, counter.initial, counter.evolve);
    const other = new SqliteEventStore(join(temp.path, 'events.sqlite'));
    for (let i = 0; i < 3; i++) await runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(5), { fold });
    await other.append('count', [{ type: 'Added', data: { n: 2 } }], { expectedRevision: 2 });

    const refused = await runStreamCommand(store, 'count', counter, systemContext('test'), addUpTo(5), { fold });

    expect(refused.state).toBe(5);
    expect(refused.appended).toEqual([]);
    expect((await store.readStream('count')).length).toBe(4);
    await other.close();
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
});
