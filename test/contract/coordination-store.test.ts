import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { MongoCoordinationStore } from '../../src/platform/coordination/mongodb/mongo-coordination-store.js';
import { newProcessIdentity } from '../../src/platform/coordination/process-identity.js';
import { SqliteCoordinationStore } from '../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { coordinationStoreContract } from './coordination-store.contract.js';

describe('SQLite coordination store', () => {
  const root = mkdtempSync(join(tmpdir(), 'coordination-'));
  let n = 0;
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  coordinationStoreContract('SQLite (two instances on one file)', async () => {
    const file = join(root, `coordination-${++n}.sqlite`);
    return { open: async (options) => new SqliteCoordinationStore(file, options) };
  });

  // One machine shares the file, so a holder's owner lock proves it gone (sqlite/owner-locks.ts).
  describe('owners on the same machine', () => {
    const opened: SqliteCoordinationStore[] = [];
    const open = (file: string) => {
      const store = new SqliteCoordinationStore(file);
      opened.push(store);
      return store;
    };
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    it('keeps a live holder\'s lease from a process with the same hostname and PID (both PID 1 in their containers)', async () => {
      const file = join(root, `coordination-${++n}.sqlite`);
      const first = open(file);
      const second = open(file);
      const [firstId, secondId] = [newProcessIdentity('web', 1), newProcessIdentity('web', 1)];
      expect(firstId).not.toBe(secondId);
      expect(await first.acquireLease('projection:x', firstId, 10_000)).toMatchObject({ epoch: 1 });
      expect(await second.acquireLease('projection:x', secondId, 10_000)).toBeNull();
      // A third process starting now (it frees the leases of owners that are gone) frees nothing.
      const third = open(file);
      expect(await third.listLeases()).toMatchObject([{ name: 'projection:x', owner: firstId, epoch: 1 }]);
    });

    it('takes over at once the leases of a holder whose process is gone, and frees them when a process starts', async () => {
      const file = join(root, `coordination-${++n}.sqlite`);
      const crashed = new SqliteCoordinationStore(file);
      const gone = newProcessIdentity('web', 1);
      await crashed.acquireLeases(['a', 'b'], gone, 60_000);
      const other = open(file);
      const me = newProcessIdentity('web', 1);
      expect(await other.acquireLease('a', me, 60_000)).toBeNull();
      await crashed.close(); // as a SIGKILL would: the leases stay, its owner lock goes
      expect(await other.acquireLease('a', me, 60_000)).toMatchObject({ owner: me, epoch: 2, acquired: true });
      const restarted = open(file);
      expect((await restarted.listLeases()).map((lease) => [lease.name, lease.owner])).toEqual([['a', me]]);
    });

    it('claims again at once an unfinished Idempotency-Key claim whose process is gone, and only then', async () => {
      const file = join(root, `coordination-${++n}.sqlite`);
      const claim = { retentionMs: 86_400_000, staleAfterMs: 60_000 };
      const crashed = new SqliteCoordinationStore(file);
      const gone = newProcessIdentity('web', 1);
      expect(await crashed.claimIdempotency('admin:import', 'fp', { ...claim, owner: gone })).toEqual({ outcome: 'claimed' });
      expect(await crashed.claimIdempotency('admin:other', 'fp', { ...claim, owner: gone })).toEqual({ outcome: 'claimed' });
      const live = open(file);
      const liveId = newProcessIdentity('web', 1);
      expect(await live.claimIdempotency('admin:import', 'fp', { ...claim, owner: liveId })).toEqual({ outcome: 'in_progress' });

      await crashed.close(); // as a SIGKILL would: the claims stay, its owner lock goes

      // A live process retrying the key takes it over at once.
      expect(await live.claimIdempotency('admin:import', 'fp', { ...claim, owner: liveId })).toEqual({ outcome: 'claimed' });
      // A process starting after the crash frees the dead process's other claims when it opens;
      // the claim of a live process stays its own.
      const restarted = open(file);
      const restartedId = newProcessIdentity('web', 1);
      expect(await restarted.claimIdempotency('admin:other', 'fp', { ...claim, owner: restartedId })).toEqual({ outcome: 'claimed' });
      expect(await restarted.claimIdempotency('admin:import', 'fp', { ...claim, owner: restartedId })).toEqual({ outcome: 'in_progress' });
    });
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

  const slots = mkdtempSync(join(tmpdir(), 'coordination-slots-'));
  afterAll(() => rmSync(slots, { recursive: true, force: true }));

  coordinationStoreContract('MongoDB (two clients on one database)', async () => {
    const collectionPrefix = `t${++n}_`;
    // One data dir for the backend's processes: each takes a slot in it (process-slots.ts).
    const slotDir = join(slots, collectionPrefix);
    return { open: (options) => MongoCoordinationStore.connect(mongoUrl!, { dbName, collectionPrefix, slotDir, ...options }) };
  });
});
