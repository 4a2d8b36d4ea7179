import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  type EventStore,
  WrongExpectedRevisionError,
} from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { runIdempotent } from '../../src/platform/es/idempotency-scope.js';
import { IdAllocationError, IdAllocator } from '../../src/platform/ids/id-allocator.js';
import { makeTempDir, runNode, transpileForChildProcess } from '../support/event-store-fixtures.js';

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const sorted = (ids: number[]): number[] => [...ids].sort((a, b) => a - b);

describe('IdAllocator over the SQLite event store', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let file: string;
  const stores: EventStore[] = [];
  const open = (): SqliteEventStore => {
    const store = new SqliteEventStore(file);
    stores.push(store);
    return store;
  };

  beforeEach(() => {
    temp = makeTempDir('id-allocator-');
    file = join(temp.path, 'events.sqlite');
  });

  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    temp.remove();
  });

  it('starts every sequence at 1 and counts up', async () => {
    const ids = new IdAllocator(open());
    expect([await ids.next('projects'), await ids.next('projects'), await ids.next('endpoints')]).toEqual([1, 2, 1]);
  });

  it('hands out 200 unique, gap-free ids to two store instances allocating at once', async () => {
    const [a, b] = [new IdAllocator(open()), new IdAllocator(open())];

    const ids = await Promise.all(range(1, 200).map((n) => (n % 2 ? a : b).next('incidents')));

    expect(sorted(ids)).toEqual(range(1, 200));
  });

  it('hands concurrent requests of one process ids in the order asked, sharing the sequence appends', async () => {
    const store = open();
    const ids = new IdAllocator(store);

    const got = await Promise.all(range(1, 50).map(() => ids.next('comments')));

    expect(got).toEqual(range(1, 50));
    // One append per gathered group, not one per id: the log holds fewer reservations than ids.
    const reservations = await store.readStream('sequence-comments');
    expect(reservations.length).toBeLessThan(50);
    expect(reservations.reduce((sum, event) => sum + (event.data as { count: number }).count, 0)).toBe(50);
  });

  it('reserves consecutive ranges for bulk imports that never overlap single ids', async () => {
    const [a, b] = [new IdAllocator(open()), new IdAllocator(open())];

    const [bulk, single, other] = await Promise.all([a.reserve('checks', 50), b.next('checks'), b.reserve('checks', 10)]);

    const all = [...range(bulk.first, bulk.first + 49), single, ...range(other.first, other.first + 9)];
    expect(bulk.count).toBe(50);
    expect(sorted(all)).toEqual(range(1, 61));
  });

  it('continues after the last reservation when a new allocator opens the same log', async () => {
    await new IdAllocator(open()).reserve('teams', 5);
    await expect(new IdAllocator(open()).next('teams')).resolves.toBe(6);
  });

  it('gives a keyed request the same ids and range on its retry, and other requests new ones', async () => {
    const ids = new IdAllocator(open());
    const attempt = (key: string) => runIdempotent(key, async () => [await ids.next('incidents'), await ids.reserve('checks', 500), await ids.next('incidents')]);

    const first = await attempt('admin:import-1');
    const retry = await new IdAllocator(open()).next('incidents').then(() => runIdempotent('admin:import-1', async () => {
      const again = new IdAllocator(open());
      return [await again.next('incidents'), await again.reserve('checks', 500), await again.next('incidents')];
    }));
    const other = await attempt('admin:import-2');

    expect(first).toEqual([1, { first: 1, count: 500 }, 2]);
    expect(retry).toEqual(first);
    expect(other).toEqual([4, { first: 501, count: 500 }, 5]);
  });

  it('shares a sequence with a separate node process without duplicates or gaps', async () => {
    const out = join(temp.path, 'child');
    await transpileForChildProcess(['src/platform/event-store/sqlite/sqlite-event-store.ts', 'src/platform/ids/id-allocator.ts'], out);
    const script = join(out, 'allocate.js');
    writeFileSync(
      script,
      `const { SqliteEventStore } = require('./src/platform/event-store/sqlite/sqlite-event-store.js');
       const { IdAllocator } = require('./src/platform/ids/id-allocator.js');
       (async () => {
         const store = new SqliteEventStore(process.argv[2]);
         const ids = new IdAllocator(store);
         const got = await Promise.all(Array.from({ length: Number(process.argv[3]) }, () => ids.next('tokens')));
         await store.close();
         process.stdout.write(JSON.stringify(got));
       })().catch((e) => { console.error(e); process.exit(1); });`,
    );
    const here = new IdAllocator(open());

    const [childOutput, mine] = await Promise.all([
      runNode(script, [file, '150'], { NODE_PATH: join(process.cwd(), 'node_modules') }),
      Promise.all(range(1, 150).map(() => here.next('tokens'))),
    ]);

    expect(sorted([...(JSON.parse(childOutput) as number[]), ...mine])).toEqual(range(1, 300));
  });
});

describe('IdAllocator under endless contention', () => {
  it('gives up with IdAllocationError after the configured attempts', async () => {
    let appends = 0;
    const alwaysConflicting = {
      readStream: async () => [],
      append: async (streamId: string) => {
        appends += 1;
        throw new WrongExpectedRevisionError(streamId, 'no_stream', 0);
      },
    } as unknown as EventStore;

    await expect(new IdAllocator(alwaysConflicting, { maxAttempts: 4, maxJitterMs: 0 }).next('x')).rejects.toBeInstanceOf(IdAllocationError);
    expect(appends).toBe(4);
  });
});
