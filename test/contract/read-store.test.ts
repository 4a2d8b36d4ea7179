import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { idFieldIndexName, MongoReadStore } from '../../src/platform/read-store/mongodb/mongo-read-store.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { readStoreContract } from './read-store.contract.js';
import { MemoryReadStore } from '../unit/analytics/support/memory-store.js';

describe('SQLite read store', () => {
  const root = mkdtempSync(join(tmpdir(), 'read-store-'));
  let n = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  readStoreContract('SQLite', async () => new SqliteReadStore(join(root, `views-${++n}.sqlite`)));
});

// The same store with its reads on a worker thread's connection (what analytics read through).
describe('SQLite read store, reads off the event loop', () => {
  const root = mkdtempSync(join(tmpdir(), 'read-store-off-thread-'));
  let n = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  readStoreContract('SQLite off-thread', async () => {
    const store = new SqliteReadStore(join(root, `views-${++n}.sqlite`)).offThread();
    // The contract must run against the worker's connection, not fall back to the store itself.
    expect(store).not.toBeInstanceOf(SqliteReadStore);
    return store;
  });
});

// The in-memory store that unit tests of projections and queries run on must keep the same rules.
describe('in-memory read store (tests)', () => {
  readStoreContract('memory', async () => new MemoryReadStore());
});

const mongoUrl = process.env.MONGODB_URL;
const describeMongo = mongoUrl ? describe : describe.skip;

describeMongo(mongoUrl ? 'MongoDB read store' : 'MongoDB read store (skipped: MONGODB_URL not set)', () => {
  const dbName = `read_store_contract_${randomUUID().slice(0, 8)}`;
  let n = 0;
  afterAll(async () => {
    const client = await MongoClient.connect(mongoUrl!);
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  readStoreContract('MongoDB', () =>
    MongoReadStore.connect(mongoUrl!, { dbName, collectionPrefix: `t${++n}_` }),
  );

  it('indexes an id-field collection\'s id field, so its key ranges are index ranges, not a scan', async () => {
    const store = await MongoReadStore.connect(mongoUrl!, { dbName, collectionPrefix: 'idx_' });
    const client = await MongoClient.connect(mongoUrl!);
    try {
      await store.ensureCollection({ name: 'checks', idField: 'check_id', columns: { id: 'integer', check_id: 'integer' }, indexes: [{ fields: ['endpoint_id', 'checked_at_ms'] }] });
      const indexes = await client.db(dbName).collection('idx_checks').indexes();
      expect(indexes.find((index) => index.name === idFieldIndexName('check_id'))?.key).toEqual({ check_id: 1 });
      const plan = await client.db(dbName).collection('idx_checks').find({ check_id: { $gte: 10, $lte: 20 } }).explain();
      expect(JSON.stringify(plan.queryPlanner.winningPlan)).toContain('IXSCAN');
    } finally {
      await client.close();
      await store.close();
    }
  });
});
