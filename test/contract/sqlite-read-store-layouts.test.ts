/**
 * Several processes share one views file, and each keeps the layout of the collections it read.
 * A collection that appears, or is dropped and created again with another layout, by another
 * connection must read right at once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';

describe('SQLite read store layouts across connections', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-store-layouts-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers reads and writes right while more distinct statements run than its cache holds', async () => {
    const store = new SqliteReadStore(join(dir, 'views.sqlite'));
    await store.ensureCollection({ name: 'many', indexes: [{ fields: ['n'] }] });
    await store.commit(Array.from({ length: 20 }, (_, n) => ({ op: 'put' as const, collection: 'many', doc: { id: String(n), n } })));
    // Each limit is its own statement: 300 of them, beside statements run all along.
    for (let limit = 1; limit <= 300; limit++) {
      const found = await store.find('many', { filter: { n: { gte: 0 } }, sort: [['n', 'asc']], limit });
      expect(found.map((doc) => doc.n)).toEqual(Array.from({ length: Math.min(limit, 20) }, (_, n) => n));
      await store.commit([{ op: 'put', collection: 'many', doc: { id: '0', n: 0, round: limit } }]);
      expect(await store.get('many', '0')).toEqual({ id: '0', n: 0, round: limit });
    }
    await store.close();
  });

  it('reads a collection another connection created after this one found it missing', async () => {
    const reader = new SqliteReadStore(join(dir, 'views.sqlite'));
    const writer = new SqliteReadStore(join(dir, 'views.sqlite'));
    expect(await reader.get('late', '1')).toBeNull();
    await writer.ensureCollection({ name: 'late', indexes: [], columns: { id: 'integer', ok: 'boolean' } });
    await writer.commit([{ op: 'put', collection: 'late', doc: { id: '1', ok: true } }]);
    expect(await reader.get('late', '1')).toStrictEqual({ id: '1', ok: true });
    await Promise.all([reader.close(), writer.close()]);
  });

  it('keeps an id field once, as the row key, and a connection that never ensured the collection reads it the same', async () => {
    const file = join(dir, 'views.sqlite');
    const writer = new SqliteReadStore(file);
    await writer.ensureCollection({ name: 'checks', indexes: [{ fields: ['e', 'at', 'check_id'] }], columns: { id: 'integer', check_id: 'integer', e: 'integer', at: 'timestamp' }, idField: 'check_id' });
    const docs = [
      { id: '10', check_id: 10, e: 1, at: '2026-01-01T00:00:01.000Z' },
      { id: '9', check_id: 9, e: 1, at: '2026-01-01T00:00:01.000Z' },
      { id: '8', check_id: 8, e: 1, at: '2026-01-01T00:00:00.000Z' },
    ];
    await writer.commit(docs.map((doc) => ({ op: 'put' as const, collection: 'checks', doc })));

    // Stored once: the field is a virtual column over the key, and the list's index ends before it.
    const raw = new Database(file, { readonly: true });
    const columns = raw.prepare(`PRAGMA table_xinfo("c_checks")`).all() as Array<{ name: string; hidden: number }>;
    expect(columns.map((c) => [c.name, c.hidden])).toEqual([['id', 0], ['e', 0], ['at', 0], ['$rest', 0], ['check_id', 2]]);
    expect(raw.prepare(`SELECT name FROM pragma_index_info('ix_checks__e__at__check_id')`).pluck().all()).toEqual(['e', 'at']);
    raw.close();

    const reader = new SqliteReadStore(file);
    const sort: Array<[string, 'desc']> = [['at', 'desc'], ['check_id', 'desc']];
    expect(await reader.find('checks', { filter: { e: 1 }, sort })).toStrictEqual(docs);
    expect(await reader.find('checks', { filter: { e: 1 }, sort, after: ['2026-01-01T00:00:01.000Z', 10] })).toStrictEqual(docs.slice(1));
    expect(await reader.get('checks', '9')).toStrictEqual(docs[1]);
    await reader.commit([{ op: 'put', collection: 'checks', doc: { id: '7', check_id: 7, e: 2, at: '2026-01-01T00:00:02.000Z' } }]);
    await expect(reader.commit([{ op: 'put', collection: 'checks', doc: { id: '6', check_id: 5, e: 2, at: '2026-01-01T00:00:02.000Z' } }])).rejects.toThrow(/check_id/);
    expect(await writer.get('checks', '7')).toStrictEqual({ id: '7', check_id: 7, e: 2, at: '2026-01-01T00:00:02.000Z' });
    await Promise.all([reader.close(), writer.close()]);
  });

  it('replaces documents right whether their indexed columns stay or change, through a connection that did or did not ensure the collection', async () => {
    // A replace that leaves the indexed columns as they are updates only the others (WriteSql.updateKept);
    // one that changes them falls back to the whole UPDATE. Either way reads and index lookups agree.
    const file = join(dir, 'views.sqlite');
    const ensured = new SqliteReadStore(file);
    const other = new SqliteReadStore(file);
    await ensured.ensureCollection({
      name: 'heads',
      indexes: [{ fields: ['team', 'status', 'n'] }, { fields: ['team', 'closed_at'] }],
      columns: { id: 'integer', n: 'integer', team: 'integer', status: 'text', closed_at: 'text', note: 'text' },
      idField: 'n',
    });
    const model = new Map<string, Record<string, unknown>>();
    let seed = 11;
    const random = (k: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % k;
    };
    for (let step = 0; step < 200; step++) {
      const n = 1 + random(6);
      const previous = model.get(String(n));
      const changeKeys = previous === undefined || random(4) === 0;
      const doc: Record<string, unknown> & { id: string } = {
        id: String(n),
        n,
        team: changeKeys ? 1 + random(2) : previous!.team,
        status: changeKeys ? [null, 'open', 'resolved'][random(3)] : previous!.status,
        closed_at: changeKeys ? [null, '2026-11-27T22:00:00.000Z'][random(2)] : previous!.closed_at,
        note: [null, `note ${step}`][random(2)],
        state: { step, title: `incident ${n}` },
      };
      if (random(5) === 0) delete doc.note;
      await (random(2) === 0 ? ensured : other).commit([{ op: 'put', collection: 'heads', doc }]);
      model.set(doc.id, doc);
      for (const reader of [ensured, other]) {
        expect(await reader.get('heads', doc.id)).toStrictEqual(doc);
        for (const team of [1, 2]) {
          for (const status of [null, 'open', 'resolved']) {
            const expected = [...model.values()].filter((d) => d.team === team && d.status === status).sort((a, b) => (a.n as number) - (b.n as number));
            expect(await reader.find('heads', { filter: { team, status }, sort: [['n', 'asc']] })).toStrictEqual(expected);
          }
          const closed = [...model.values()].filter((d) => d.team === team && d.closed_at !== null).map((d) => d.id).sort();
          expect((await reader.find('heads', { filter: { team, closed_at: { ne: null } } })).map((d) => d.id).sort()).toEqual(closed);
        }
      }
    }
    await Promise.all([ensured.close(), other.close()]);
  });

  it('leaves documents whose first field is null out of a sparse index, which still serves a filter on that field', async () => {
    const file = join(dir, 'views.sqlite');
    const store = new SqliteReadStore(file);
    await store.ensureCollection({ name: 'rows', indexes: [{ fields: ['team', 'at', 'check_id'], sparse: true }], columns: { id: 'integer', check_id: 'integer', team: 'integer', at: 'integer' }, idField: 'check_id' });
    const docs = [
      { id: '1', check_id: 1, team: null, at: 10 },
      { id: '2', check_id: 2, team: 7, at: 20 },
      { id: '3', check_id: 3, team: 7, at: 30 },
      { id: '4', check_id: 4, team: null, at: 40 },
    ];
    await store.commit(docs.map((doc) => ({ op: 'put' as const, collection: 'rows', doc })));
    expect(await store.find('rows', { filter: { team: 7, at: { gte: 15 } }, sort: [['at', 'desc']] })).toStrictEqual([docs[2], docs[1]]);
    expect(await store.find('rows', { filter: { team: null } })).toStrictEqual([docs[0], docs[3]]);

    const raw = new Database(file, { readonly: true });
    const index = 'ix_rows__team__at__check_id__s';
    expect(raw.prepare(`SELECT sum(ncell) FROM dbstat WHERE name = ? AND pagetype = 'leaf'`).pluck().get(index)).toBe(2);
    const plan = raw.prepare(`EXPLAIN QUERY PLAN SELECT id FROM c_rows WHERE team = ? AND at >= ? ORDER BY at DESC`).all(7, 15) as Array<{ detail: string }>;
    expect(plan.map((step) => step.detail).join('; ')).toMatch(new RegExp(`USING (COVERING )?INDEX ${index} `));
    raw.close();
    await store.close();
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

  it('refuses, writing nothing, a commit to a collection another connection dropped after this one wrote to it', async () => {
    const first = new SqliteReadStore(join(dir, 'views.sqlite'));
    const second = new SqliteReadStore(join(dir, 'views.sqlite'));
    await first.ensureCollection({ name: 'kept', indexes: [] });
    await first.ensureCollection({ name: 'gone', indexes: [] });
    await first.commit([{ op: 'put', collection: 'gone', doc: { id: 'a' } }]);
    const stamps = await first.stamps('kept');

    await second.dropCollection('gone');
    await expect(
      first.commit([
        { op: 'put', collection: 'kept', doc: { id: 'k' } },
        { op: 'put', collection: 'gone', doc: { id: 'b' } },
      ]),
    ).rejects.toThrow(/Unknown read-store collection "gone"/);
    expect(await second.count('kept')).toBe(0);
    expect(await first.get('kept', 'k')).toBeNull();
    expect(await first.stamps('kept')).toEqual(stamps);
    expect(await second.listCollections()).toEqual(['kept']);
    await Promise.all([first.close(), second.close()]);
  });
});
