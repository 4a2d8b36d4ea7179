import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Doc, ReadStore } from '../../src/platform/read-store/read-store.port.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';

/**
 * `ReadStore.stamps` (optional in the port; the SQLite adapter has it): what a cache validates
 * against. Two stores on one file stand for two processes sharing it.
 */
describe('SQLite read store stamps', () => {
  const root = mkdtempSync(join(tmpdir(), 'read-store-stamps-'));
  let n = 0;
  let a: SqliteReadStore;
  let b: SqliteReadStore;
  let file: string;
  beforeEach(async () => {
    file = join(root, `views-${++n}.sqlite`);
    a = new SqliteReadStore(file);
    b = new SqliteReadStore(file);
    await a.ensureCollection({ name: 'docs', indexes: [{ fields: ['n'] }] });
    await a.ensureCollection({ name: 'other', indexes: [] });
  });
  afterEach(async () => {
    await a.close();
    await b.close();
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const put = (store: ReadStore, ...docs: Doc[]) => store.commit(docs.map((doc) => ({ op: 'put' as const, collection: 'docs', doc })));
  const remove = (store: ReadStore, id: string) => store.commit([{ op: 'delete', collection: 'docs', id }]);

  it('moves `changed` with every write, and `rewritten` only when a document is replaced or deleted', async () => {
    const initial = await a.stamps('docs');
    await put(a, { id: '1', n: 1 });
    const afterInsert = await a.stamps('docs');
    expect(afterInsert.changed).not.toBe(initial.changed);
    expect(afterInsert.rewritten).toBe(initial.rewritten);

    await put(a, { id: '1', n: 2 });
    const afterReplace = await a.stamps('docs');
    expect(afterReplace.changed).not.toBe(afterInsert.changed);
    expect(afterReplace.rewritten).not.toBe(afterInsert.rewritten);
    expect(await a.get('docs', '1')).toEqual({ id: '1', n: 2 });

    await remove(a, 'missing');
    const afterNoopDelete = await a.stamps('docs');
    expect(afterNoopDelete.changed).not.toBe(afterReplace.changed);
    expect(afterNoopDelete.rewritten).toBe(afterReplace.rewritten);

    await remove(a, '1');
    expect((await a.stamps('docs')).rewritten).not.toBe(afterReplace.rewritten);
  });

  it('shows a write made through another connection on the very next read', async () => {
    await put(a, { id: '1', n: 1 });
    const before = await a.stamps('docs');
    await put(b, { id: '2', n: 2 });
    const afterInsert = await a.stamps('docs');
    expect(afterInsert.changed).not.toBe(before.changed);
    expect(afterInsert.rewritten).toBe(before.rewritten);
    await put(b, { id: '1', n: 3 });
    expect((await a.stamps('docs')).rewritten).not.toBe(before.rewritten);
    await remove(b, '2');
    const afterDelete = await a.stamps('docs');
    await put(a, { id: '3', n: 3 });
    expect((await b.stamps('docs')).changed).not.toBe(afterDelete.changed);
  });

  it('leaves the stamps of untouched collections alone', async () => {
    const other = await a.stamps('other');
    await put(b, { id: '1', n: 1 });
    await put(a, { id: '1', n: 2 });
    expect(await a.stamps('other')).toEqual(other);
    expect(await b.stamps('other')).toEqual(other);
  });

  it('never gives a collection that was dropped and created again a stamp it had before', async () => {
    await put(a, { id: '1', n: 1 });
    const seen = [await a.stamps('docs')];
    await b.dropCollection('docs');
    seen.push(await a.stamps('docs'));
    await b.ensureCollection({ name: 'docs', indexes: [] });
    const recreated = await a.stamps('docs');
    for (const earlier of seen) {
      expect(recreated.changed).not.toBe(earlier.changed);
      expect(recreated.rewritten).not.toBe(earlier.rewritten);
    }
    expect(await a.get('docs', '1')).toBeNull();
  });

  it('keeps the stamps when a commit fails', async () => {
    await put(a, { id: '1', n: 1 });
    const before = await a.stamps('docs');
    await expect(a.commit([{ op: 'put', collection: 'docs', doc: { id: '1', n: 5 } }, { op: 'put', collection: 'never_ensured', doc: { id: 'x' } }])).rejects.toThrow();
    expect(await a.stamps('docs')).toEqual(before);
    expect(await b.stamps('docs')).toEqual(before);
  });

  it('lets calls in one scope share a look at other connections taken after its first call, and looks again for another scope', async () => {
    await put(a, { id: '1', n: 1 });
    const request = {};
    const first = await a.stamps('docs', request);
    await put(b, { id: '2', n: 2 });
    expect(await a.stamps('docs', request)).toEqual(first);
    const nextRequest = {};
    const seenByNext = await a.stamps('docs', nextRequest);
    expect(seenByNext.changed).not.toBe(first.changed);
    await put(a, { id: '3', n: 3 });
    const afterOwnCommit = await a.stamps('docs', nextRequest);
    expect(afterOwnCommit.changed).not.toBe(seenByNext.changed);
    await put(b, { id: '4', n: 4 });
    expect(await a.stamps('docs', nextRequest)).toEqual(afterOwnCommit);
    expect((await a.stamps('docs')).changed).not.toBe(afterOwnCommit.changed);
  });

  it('looks again for a scope that begins after another connection committed, even in the turn that took an earlier look', async () => {
    await put(a, { id: '1', n: 1 });
    const early = {};
    const seenEarly = await a.stamps('docs', early);
    // Still the turn of the event loop that took the look (its microtasks): another process
    // commits, and then a request arrives. A look kept for the turn would miss the commit.
    const committed = put(b, { id: '2', n: 2 });
    const late = {};
    const seenLate = await a.stamps('docs', late);
    await committed;
    expect(seenLate.changed).not.toBe(seenEarly.changed);
    expect(await a.get('docs', '2')).toEqual({ id: '2', n: 2 });
    // The earlier scope may keep its look; a later look only adds commits, so it may see it too.
    expect([seenEarly.changed, seenLate.changed]).toContain((await a.stamps('docs', early)).changed);
  });

  it('takes one look for the scopes that ask in the same turn, after the last of them asked', async () => {
    await put(a, { id: '1', n: 1 });
    const before = await a.stamps('docs');
    const first = a.stamps('docs', {});
    // Another process commits between two requests arriving in the same turn: the look they
    // share is taken after both arrived, so both see it.
    await put(b, { id: '2', n: 2 });
    const second = a.stamps('docs', {});
    const [seenFirst, seenSecond] = await Promise.all([first, second]);
    expect(seenFirst).toEqual(seenSecond);
    expect(seenFirst.changed).not.toBe(before.changed);
  });

  it('answers from its own commits exactly what a fresh connection reads, whoever wrote in between', async () => {
    // The connection that commits keeps the stamps of its own commits in memory (it does not read
    // the table again); a fresh connection on the same file reads them from the table.
    const names = ['docs', 'other', 'third'];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    /** The greatest stamp any collection had before the step: a write must stamp above it. */
    let highest = 0;
    for (let step = 0; step < 120; step++) {
      const writer = random(4) === 0 ? b : a;
      const collection = names[random(names.length)];
      const action = random(10);
      let written: string[] = [];
      if (action === 0) await writer.dropCollection(collection);
      else if (action === 1) await writer.ensureCollection({ name: collection, indexes: [] });
      else if (action === 2) written = await writer.commit([{ op: 'delete', collection, id: String(random(5)) }]).then(() => [collection], () => []);
      else {
        const writes = [{ op: 'put' as const, collection, doc: { id: String(random(5)), n: step } }];
        if (random(2) === 0) writes.push({ op: 'put' as const, collection: names[random(names.length)], doc: { id: String(random(5)), n: -step } });
        written = await writer.commit(writes).then(() => writes.map((w) => w.collection), () => []);
      }
      // Some steps leave `a` unasked, so its next commit follows others' unseen.
      const look = random(2) === 0;
      const fresh = new SqliteReadStore(file);
      try {
        for (const name of names) {
          const truth = await fresh.stamps(name);
          if (written.includes(name)) expect([name, truth.changed > highest]).toEqual([name, true]);
          if (look) expect([name, await a.stamps(name, random(2) === 0 ? {} : undefined)]).toEqual([name, truth]);
        }
        for (const name of names) highest = Math.max(highest, (await fresh.stamps(name)).changed);
      } finally {
        await fresh.close();
      }
    }
  });

  it('does not move any stamp when an existing collection is ensured again', async () => {
    const before = await a.stamps('docs');
    await b.ensureCollection({ name: 'docs', indexes: [{ fields: ['n'] }, { fields: ['m'] }] });
    expect(await a.stamps('docs')).toEqual(before);
  });
});
