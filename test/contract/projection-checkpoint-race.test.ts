/**
 * The checkpoint race: two projector processes that both believe they own a projection (one
 * resumed after a pause longer than its lease) apply the same events against the same views,
 * each through its own connections. The batch's view changes commit with its checkpoint only
 * when the stored checkpoint is still the one the batch started from, so every event counts
 * once. Run on every read store: SQLite here, MongoDB (transactions on a replica set) when
 * MONGODB_URL is set (the workflow's topology job runs it against the compose MongoDB).
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { silentLogger } from '../../src/platform/logging/logger.js';
import { defineProjection, type Projection } from '../../src/platform/projections/projection.js';
import { ProjectionRunner } from '../../src/platform/projections/projection-runner.js';
import { ViewReader } from '../../src/platform/projections/views.js';
import type { ReadStore } from '../../src/platform/read-store/read-store.port.js';
import { MongoReadStore } from '../../src/platform/read-store/mongodb/mongo-read-store.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { eventually } from '../support/eventually.js';

const totals: Projection = defineProjection({
  name: 'race_totals',
  version: 1,
  collections: [{ name: 'totals', indexes: [] }],
  handlers: {
    Added: async (event, views) => {
      const doc = (await views.get('totals', event.streamId)) ?? { id: event.streamId, total: 0, events: 0 };
      views.put('totals', { ...doc, total: Number(doc.total) + (event.data as { n: number }).n, events: Number(doc.events) + 1 });
    },
  },
});

interface ReadStores {
  /** A new connection to the same views, as another process would open. */
  open(): Promise<ReadStore>;
  cleanup(): Promise<void>;
}

const mongoUrl = process.env.MONGODB_URL;
const READ_STORES: Array<[string, string | null, (dir: string) => ReadStores]> = [
  ['SQLite', null, (dir) => ({ open: async () => new SqliteReadStore(join(dir, 'views.sqlite')), cleanup: async () => undefined })],
  [
    'MongoDB',
    mongoUrl ? null : 'MONGODB_URL not set',
    () => {
      const dbName = `checkpoint_race_${randomUUID().slice(0, 8)}`;
      return {
        open: () => MongoReadStore.connect(mongoUrl!, { dbName }),
        async cleanup() {
          const client = await MongoClient.connect(mongoUrl!);
          await client.db(dbName).dropDatabase();
          await client.close();
        },
      };
    },
  ],
];

for (const [name, skipReason, readStores] of READ_STORES) {
  const describeIt = skipReason ? describe.skip : describe;
  describeIt(`two projectors racing for one checkpoint, ${name}${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
    const dir = makeTempDir('checkpoint-race-');
    const closers: Array<() => Promise<void>> = [];
    let stores: ReadStores;
    afterAll(async () => {
      for (const close of closers.reverse()) await close();
      await stores?.cleanup();
      dir.remove();
    });

    it('applies every event exactly once, and both end at the head', async () => {
      stores = readStores(dir.path);
      const runners: ProjectionRunner[] = [];
      for (const owner of ['projector-1', 'projector-2']) {
        const events = new SqliteEventStore(join(dir.path, 'events.sqlite'));
        const views = await stores.open();
        const runner = new ProjectionRunner(events, views, [totals], { owner, logger: silentLogger, pointerCheckMs: 50, dropDelayMs: 0 });
        closers.push(() => events.close(), () => views.close(), () => runner.stop());
        runners.push(runner);
      }
      const writer = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      closers.push(() => writer.close());
      await runners[0].start();
      await runners[1].start();

      const streams = ['a', 'b', 'c'];
      for (let round = 0; round < 60; round++) {
        await Promise.all(streams.map((stream) => writer.append(stream, [{ type: 'Added', data: { n: round + 1 } }], { expectedRevision: 'any' })));
      }
      const head = (await writer.headPosition())!;
      await eventually('both projectors at the head', async () => {
        const positions = await Promise.all(runners.map(async (runner) => (await runner.status())[0].position));
        return positions.every((position) => position === head);
      }, 120_000);

      const readerStore = await stores.open();
      closers.push(() => readerStore.close());
      const reader = new ViewReader(readerStore, 0);
      const docs = await Promise.all(streams.map((stream) => reader.get('race_totals', 'totals', stream)));
      // 60 events per stream, n = 1..60: each applied once.
      expect(docs.map((doc) => [doc?.events, doc?.total])).toEqual(streams.map(() => [60, 1830]));
    }, 180_000);
  });
}
