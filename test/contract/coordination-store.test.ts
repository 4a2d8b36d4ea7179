import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { MongoCoordinationStore } from '../../src/platform/coordination/mongodb/mongo-coordination-store.js';
import { SqliteCoordinationStore } from '../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { coordinationStoreContract } from './coordination-store.contract.js';

describe('SQLite coordination store', () => {
  const root = mkdtempSync(join(tmpdir(), 'coordination-'));
  let n = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  coordinationStoreContract('SQLite (two instances on one file)', async () => {
    const file = join(root, `coordination-${++n}.sqlite`);
    return { open: async () => new SqliteCoordinationStore(file) };
  });
});

const mongoUrl = process.env.MONGODB_URL;
const describeMongo = mongoUrl ? describe : describe.skip;

describeMongo(mongoUrl ? 'MongoDB coordination store' : 'MongoDB coordination store (skipped: MONGODB_URL not set)', () => {
  const dbName = `coordination_contract_${randomUUID().slice(0, 8)}`;
  let n = 0;
  afterAll(async () => {
    const client = await MongoClient.connect(mongoUrl!);
    await client.db(dbName).dropDatabase();
    await client.close();
  });

  coordinationStoreContract('MongoDB (two clients on one database)', async () => {
    const collectionPrefix = `t${++n}_`;
    return { open: () => MongoCoordinationStore.connect(mongoUrl!, { dbName, collectionPrefix }) };
  });
});
