/**
 * WAL files stay bounded: a WAL file used to keep the largest size it ever reached (a 36 KB
 * coordination database sat beside a 19.5 MB WAL). After a large write is checkpointed, the next
 * write truncates the WAL back under the limit.
 *
 * The event log and the views checkpoint on a thread of their own (issue 31: the commit that
 * crossed 1,000 WAL pages copied them into the database file and synced it on the event loop).
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteCoordinationStore } from '../../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { WAL_AUTOCHECKPOINT_PAGES, WAL_SIZE_LIMIT_BYTES, type WalKeeper } from '../../../src/platform/sqlite-wal.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';
import { eventually } from '../../support/eventually.js';

const walSize = (file: string) => statSync(`${file}-wal`).size;
const fileSize = (file: string) => statSync(file).size;
const BIG = 'x'.repeat(12 * 1024 * 1024);

describe('SQLite WAL files stay bounded', () => {
  const dir = makeTempDir('sqlite-wal-');
  afterAll(() => dir.remove());

  it('coordination store: a 12 MB write leaves a WAL under the limit once later writes follow', async () => {
    const file = join(dir.path, 'coordination.sqlite');
    const store = new SqliteCoordinationStore(file);
    await store.claimIdempotency('big', 'f', { retentionMs: 60_000, staleAfterMs: 60_000 });
    await store.completeIdempotency('big', { status: 200, body: BIG });
    expect(walSize(file)).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
    for (let i = 0; i < 3; i++) await store.acquireLease(`lease-${i}`, 'me', 10_000);
    expect(walSize(file)).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    await store.close();
  });

  it('read store: the same after a large view document, checkpointed by its thread', async () => {
    const file = join(dir.path, 'views.sqlite');
    const store = new SqliteReadStore(file);
    await store.ensureCollection({ name: 'docs', indexes: [] });
    await store.commit([{ op: 'put', collection: 'docs', doc: { id: 'big', body: BIG } }]);
    expect(walSize(file)).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
    let i = 0;
    await eventually('the WAL back under the limit after small writes', async () => {
      await store.commit([{ op: 'put', collection: 'docs', doc: { id: `small-${i++}` } }]);
      return walSize(file) <= WAL_SIZE_LIMIT_BYTES;
    });
    expect(await store.find('docs', {})).toHaveLength(i + 1);
    await store.close();
  });

  it('event log: a commit past 1,000 WAL pages leaves the copy to the checkpoint thread, which makes it without further writes', async () => {
    const file = join(dir.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const blob = 'y'.repeat(2 * WAL_AUTOCHECKPOINT_PAGES * 4096);
    await store.append('s-1', [{ type: 'Small', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    const before = fileSize(file);
    await store.append('s-1', [{ type: 'Big', data: { blob } }], { expectedRevision: 0 });
    // The committing thread copied nothing into the database file (an automatic checkpoint would have).
    expect(fileSize(file)).toBe(before);
    expect(walSize(file)).toBeGreaterThan(blob.length);
    await eventually('the checkpoint thread to copy the WAL into the database file', () => fileSize(file) > blob.length, { timeoutMs: 20_000 });
    // Once the thread's round is over, the next commit starts the WAL over and truncates it to the limit.
    let revision = 1;
    await eventually('the WAL back under the limit after small appends', async () => {
      await store.append('s-1', [{ type: 'Small', data: { n: revision } }], { expectedRevision: revision++ });
      return walSize(file) <= WAL_SIZE_LIMIT_BYTES;
    });
    const events = await store.readStream('s-1');
    expect(events.map((e) => e.type)).toEqual(['Small', 'Big', ...Array.from({ length: revision - 1 }, () => 'Small')]);
    expect((events[1].data as { blob: string }).blob).toHaveLength(blob.length);
    await store.close();
  });

  it('event log: a large WAL left by a burst shrinks without any later write', async () => {
    const file = join(dir.path, 'events-idle.sqlite');
    const store = new SqliteEventStore(file);
    const blob = 'z'.repeat(2 * WAL_AUTOCHECKPOINT_PAGES * 4096);
    await store.append('s-1', [{ type: 'Big', data: { blob } }], { expectedRevision: 'no_stream' });
    expect(walSize(file)).toBeGreaterThan(blob.length);
    // No further append: an import or a rebuild that ends leaves the process idle.
    await eventually('the checkpoint thread to truncate the WAL', () => walSize(file) <= WAL_SIZE_LIMIT_BYTES, { timeoutMs: 20_000 });
    expect(((await store.readStream('s-1'))[0].data as { blob: string }).blob).toHaveLength(blob.length);
    await store.close();
  });

  it('read store: reclaimSpace empties the WAL even while the checkpoint thread is copying', async () => {
    const file = join(dir.path, 'views-reclaim.sqlite');
    const store = new SqliteReadStore(file);
    const keeper = (store as unknown as { walKeeper: WalKeeper }).walKeeper;
    await store.ensureCollection({ name: 'docs', indexes: [] });
    await store.commit([{ op: 'put', collection: 'docs', doc: { id: 'small' } }]);
    await keeper.checkpoint();
    await store.commit([{ op: 'put', collection: 'docs', doc: { id: 'big', body: 'w'.repeat(16 * 1024 * 1024) } }]);
    // A round (the timer's) starts; once its pass is copying frames (the wal-index's
    // nBackfillAttempted ahead of nBackfill), it holds the checkpointer lock.
    const round = keeper.checkpoint();
    const shm = openSync(`${file}-shm`, 'r');
    const header = Buffer.alloc(136);
    const deadline = Date.now() + 20_000;
    let copying = false;
    while (!copying && Date.now() < deadline) {
      readSync(shm, header, 0, header.length, 0);
      copying = header.readUInt32LE(128) > header.readUInt32LE(96);
    }
    closeSync(shm);
    expect(copying).toBe(true);
    await store.reclaimSpace();
    expect(walSize(file)).toBe(0);
    await round;
    expect((await store.get('docs', 'big'))?.body).toHaveLength(16 * 1024 * 1024);
    await store.close();
  });

  it('read store: a round on an idle file is one pass once a round has copied every frame, and a commit brings the second pass back', async () => {
    const file = join(dir.path, 'views-idle-rounds.sqlite');
    const store = new SqliteReadStore(file);
    const keeper = (store as unknown as { walKeeper: WalKeeper }).walKeeper;
    await store.ensureCollection({ name: 'docs', indexes: [] });
    await store.commit([{ op: 'put', collection: 'docs', doc: { id: 'first', body: 'f'.repeat(64 * 1024) } }]);
    const copied = await keeper.checkpoint();
    expect(copied).toMatchObject({ passes: 2 });
    expect(copied!.checkpointed).toBe(copied!.log);
    // Nothing committed since: the same frames, all copied, seen by the first pass.
    expect(await keeper.checkpoint()).toMatchObject({ passes: 1, log: copied!.log, checkpointed: copied!.log });
    expect(await keeper.checkpoint()).toMatchObject({ passes: 1, log: copied!.log });
    // A commit starts the WAL over with fewer frames: the round confirms with a second pass again.
    await store.commit([{ op: 'put', collection: 'docs', doc: { id: 'second' } }]);
    const after = await keeper.checkpoint();
    expect(after!.log).toBeLessThan(copied!.log);
    expect(after).toMatchObject({ passes: 2 });
    expect(after!.checkpointed).toBe(after!.log);
    expect((await store.get('docs', 'second'))?.id).toBe('second');
    await store.close();
  });
});
