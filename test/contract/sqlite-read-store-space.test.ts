/**
 * The views file gives space freed by deletions back to the file system (issue 30 item 10):
 * converted to incremental auto-vacuum the first time enough is free, then shrunk in slices.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';

describe('SQLite read store: reclaimSpace', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-store-space-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = () => join(dir, 'views.sqlite');
  const bytes = () => statSync(file()).size;
  const autoVacuum = () => {
    const db = new Database(file(), { readonly: true });
    try {
      return db.pragma('auto_vacuum', { simple: true });
    } finally {
      db.close();
    }
  };
  const filler = 'x'.repeat(1000);

  async function fill(store: SqliteReadStore, from: number, count: number): Promise<void> {
    for (let at = from; at < from + count; at += 500) {
      await store.commit(Array.from({ length: 500 }, (_, i) => ({ op: 'put' as const, collection: 'c', doc: { id: String(at + i), filler } })));
    }
  }
  async function remove(store: SqliteReadStore, from: number, count: number): Promise<void> {
    for (let at = from; at < from + count; at += 500) {
      await store.commit(Array.from({ length: 500 }, (_, i) => ({ op: 'delete' as const, collection: 'c', id: String(at + i) })));
    }
  }

  it('leaves a new file as it is (nothing worth giving back), so an idle service writes nothing for it', async () => {
    const store = new SqliteReadStore(file());
    await store.ensureCollection({ name: 'c', indexes: [] });
    await fill(store, 0, 500);
    await store.reclaimSpace();
    expect(autoVacuum()).toBe(0);
    await store.close();
  });

  it('gives freed pages back: once by converting the file, then in slices', async () => {
    const store = new SqliteReadStore(file());
    await store.ensureCollection({ name: 'c', indexes: [] });
    await fill(store, 0, 20_000);
    await store.reclaimSpace();
    const full = bytes();
    await remove(store, 0, 15_000);
    await store.reclaimSpace();
    expect(autoVacuum()).toBe(2);
    expect(bytes() / full).toBeLessThan(0.4);

    await fill(store, 20_000, 15_000);
    await store.reclaimSpace();
    const refilled = bytes();
    await remove(store, 20_000, 15_000);
    await store.reclaimSpace();
    expect(bytes() / refilled).toBeLessThan(0.4);
    expect(await store.get('c', '19999')).toStrictEqual({ id: '19999', filler });
    await store.close();
  });
});
