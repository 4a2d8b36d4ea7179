/**
 * Several processes share one views file, and each keeps the layout of the collections it read.
 * A collection that appears, or is dropped and created again with another layout, by another
 * connection must read right at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';

describe('SQLite read store layouts across connections', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-store-layouts-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a collection another connection created after this one found it missing', async () => {
    const reader = new SqliteReadStore(join(dir, 'views.sqlite'));
    const writer = new SqliteReadStore(join(dir, 'views.sqlite'));
    expect(await reader.get('late', '1')).toBeNull();
    await writer.ensureCollection({ name: 'late', indexes: [], columns: { id: 'integer', ok: 'boolean' } });
    await writer.commit([{ op: 'put', collection: 'late', doc: { id: '1', ok: true } }]);
    expect(await reader.get('late', '1')).toStrictEqual({ id: '1', ok: true });
    await Promise.all([reader.close(), writer.close()]);
  });

  it('follows a collection dropped and created again with another layout by another connection, for reads and writes', async () => {
    const first = new SqliteReadStore(join(dir, 'views.sqlite'));
    const second = new SqliteReadStore(join(dir, 'views.sqlite'));
    await first.ensureCollection({ name: 'c', indexes: [] });
    await first.commit([{ op: 'put', collection: 'c', doc: { id: 'a', at: 'x' } }]);
    expect(await first.find('c', {})).toStrictEqual([{ id: 'a', at: 'x' }]);

    await second.dropCollection('c');
    await second.ensureCollection({ name: 'c', indexes: [{ fields: ['at'] }], columns: { at: 'timestamp', n: 'integer' } });
    await second.commit([{ op: 'put', collection: 'c', doc: { id: 'b', at: '2026-01-01T00:00:00.000Z', n: 1 } }]);

    expect(await first.find('c', { filter: { at: { gte: '2026' } } })).toStrictEqual([{ id: 'b', at: '2026-01-01T00:00:00.000Z', n: 1 }]);
    await first.commit([{ op: 'put', collection: 'c', doc: { id: 'c', at: '2026-01-02T00:00:00.000Z', n: 2 } }]);
    expect(await second.count('c', { n: { gt: 0 } })).toBe(2);
    await Promise.all([first.close(), second.close()]);
  });
});
