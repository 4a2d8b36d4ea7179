/**
 * WAL files stay bounded: a WAL file used to keep the largest size it ever reached (a 36 KB
 * coordination database sat beside a 19.5 MB WAL). After a large write is checkpointed, the next
 * write truncates the WAL back under the limit.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteCoordinationStore } from '../../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { WAL_SIZE_LIMIT_BYTES } from '../../../src/platform/sqlite-wal.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';

const walSize = (file: string) => statSync(`${file}-wal`).size;
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

  it('read store: the same after a large view document', async () => {
    const file = join(dir.path, 'views.sqlite');
    const store = new SqliteReadStore(file);
    await store.ensureCollection({ name: 'docs', indexes: [] });
    await store.commit([{ op: 'put', collection: 'docs', doc: { id: 'big', body: BIG } }]);
    expect(walSize(file)).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
    for (let i = 0; i < 3; i++) await store.commit([{ op: 'put', collection: 'docs', doc: { id: `small-${i}` } }]);
    expect(walSize(file)).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    await store.close();
  });
});
