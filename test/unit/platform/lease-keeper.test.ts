/**
 * The LeaseKeeper over the real SQLite coordination store, two keepers standing for two processes
 * sharing one file.
 */
import { join } from 'node:path';
import { SqliteCoordinationStore } from '../../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { LeaseKeeper } from '../../../src/platform/coordination/lease-keeper.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';
import { eventually } from '../../support/eventually.js';

const NAMES = Array.from({ length: 20 }, (_, i) => `shard-${i}`);

describe('LeaseKeeper', () => {
  const dir = makeTempDir('lease-keeper-');
  const file = join(dir.path, 'coordination.sqlite');
  let stores: SqliteCoordinationStore[] = [];
  const open = () => {
    const store = new SqliteCoordinationStore(file);
    stores.push(store);
    return store;
  };

  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
    stores = [];
  });
  afterAll(() => dir.remove());

  it('takes every free lease wanted in one turn, and another process gets none of them', async () => {
    const a = new LeaseKeeper(open(), 'a');
    const b = new LeaseKeeper(open(), 'b');
    await a.want(...NAMES);
    await b.want(...NAMES);
    expect(NAMES.filter((n) => a.holds(n))).toEqual(NAMES);
    expect(NAMES.filter((n) => b.holds(n))).toEqual([]);
    await b.renew();
    expect(NAMES.filter((n) => b.holds(n))).toEqual([]);
    await Promise.all([a.close(), b.close()]);
  });

  it('hands the leases over when their holder releases them', async () => {
    const a = new LeaseKeeper(open(), 'a');
    const b = new LeaseKeeper(open(), 'b');
    expect(await a.hold('projection:x')).toBe(true);
    expect(await b.hold('projection:x')).toBe(false);
    await a.release('projection:x');
    expect(a.holds('projection:x')).toBe(false);
    await b.renew();
    expect(b.holds('projection:x')).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it('renews the leases it holds, so they outlive their TTL', async () => {
    // A TTL far above the renewal period, so a loaded machine's timer delays never let it lapse;
    // the wait is relative to it: two and a half TTLs.
    const TTL_MS = 2_000;
    const a = new LeaseKeeper(open(), 'a', { ttlMs: TTL_MS, renewEveryMs: 100 });
    const b = new LeaseKeeper(open(), 'b', { ttlMs: TTL_MS, renewEveryMs: 100 });
    await a.want('kept');
    await b.want('kept');
    await new Promise((resolve) => setTimeout(resolve, 2.5 * TTL_MS));
    expect(a.holds('kept')).toBe(true);
    expect(b.holds('kept')).toBe(false);
    await Promise.all([a.close(), b.close()]);
  });

  it('lets another process take over the leases of one that stopped renewing (a crash)', async () => {
    const crashed = open();
    const a = new LeaseKeeper(crashed, 'a', { ttlMs: 400, renewEveryMs: 100 });
    const b = new LeaseKeeper(open(), 'b', { ttlMs: 400, renewEveryMs: 100 });
    await a.want('orphan');
    await b.want('orphan');
    expect(b.holds('orphan')).toBe(false);
    await crashed.close(); // a's renewals now fail
    await eventually('a to stop claiming the lease', () => !a.holds('orphan'));
    await eventually('b to take the lease over', () => b.holds('orphan'));
    await Promise.all([a.close().catch(() => undefined), b.close()]);
  });
});
