import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { MongoReadStore } from '../../src/platform/read-store/mongodb/mongo-read-store.js';
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
});
