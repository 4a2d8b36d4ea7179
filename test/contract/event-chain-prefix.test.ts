/**
 * The chain hash's stored form (docs/decisions.md "The event row's chain hash", docs/audit.md):
 * each event stores the 16-hex prefix of its hash, an anchor (revision 0, every 64th revision, a
 * stored prev_hash) the whole hash.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { makeTempDir } from '../support/event-store-fixtures.js';

describe('the chain hash stored as a prefix, whole at anchors', () => {
  const dir = makeTempDir('chain-prefix-');
  afterAll(() => dir.remove());

  it('keeps a 16-digit prefix in 8 bytes of the SQLite hash column and a whole hash in 32, neither in the metadata', async () => {
    const file = join(dir.path, 'bytes.sqlite');
    const store = new SqliteEventStore(file);
    const whole = 'ab'.repeat(32);
    await store.append(
      's',
      [
        { type: 'Noted', data: { n: 0 }, metadata: { hash: whole }, chainHashed: true },
        { type: 'Noted', data: { n: 1 }, metadata: { hash: whole.slice(0, 16) }, chainHashed: true },
      ],
      { expectedRevision: 'no_stream' },
    );
    expect((await store.readStream('s')).map((e) => e.metadata.hash)).toEqual([whole, whole.slice(0, 16)]);
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      const rows = db.prepare('SELECT length(hash) AS bytes, metadata FROM event_log ORDER BY revision').all() as Array<{ bytes: number; metadata: string | null }>;
      expect(rows.map((r) => r.bytes)).toEqual([32, 8]);
      expect(rows.some((r) => r.metadata?.includes(whole.slice(0, 16)))).toBe(false);
    } finally {
      db.close();
    }
    const reopened = new SqliteEventStore(file);
    expect((await reopened.readStream('s')).map((e) => e.metadata.hash)).toEqual([whole, whole.slice(0, 16)]);
    await reopened.close();
  });
});
