/** A batch's reads: what the store holds, merged with the batch's own writes, however often asked. */
import { BatchViewTransaction, KeptDocuments } from '../../../src/platform/projections/view-transaction.js';
import type { Doc } from '../../../src/platform/read-store/read-store.port.js';
import { MemoryReadStore } from '../analytics/support/memory-store.js';

describe('a projection batch reading its own collections', () => {
  let store: MemoryReadStore;
  beforeEach(async () => {
    store = new MemoryReadStore();
    await store.ensureCollection({ name: 'channels', indexes: [] });
    await store.commit([
      { op: 'put', collection: 'channels', doc: { id: '1', team_id: 7, name: 'a' } },
      { op: 'put', collection: 'channels', doc: { id: '2', team_id: 7, name: 'b' } },
    ]);
  });
  const batch = () => new BatchViewTransaction(store, (collection) => collection);
  const names = (docs: Doc[]) => docs.map((d) => (d as unknown as { name: string }).name).sort();

  it('sees a document put earlier in the batch when the same query is asked again', async () => {
    const views = batch();
    expect(names(await views.find('channels', { filter: { team_id: 7 } }))).toEqual(['a', 'b']);
    views.put('channels', { id: '3', team_id: 7, name: 'c' });
    expect(names(await views.find('channels', { filter: { team_id: 7 } }))).toEqual(['a', 'b', 'c']);
  });

  it('no longer sees a stored document deleted or changed earlier in the batch', async () => {
    const views = batch();
    await views.find('channels', { filter: { team_id: 7 } });
    views.delete('channels', '1');
    views.put('channels', { id: '2', team_id: 8, name: 'b' });
    expect(await views.find('channels', { filter: { team_id: 7 } })).toEqual([]);
    expect(names(await views.find('channels', { filter: { team_id: 8 } }))).toEqual(['b']);
  });

  it('hands a document put earlier in the batch back frozen as it is when its documents are kept, and a copy otherwise', async () => {
    const kept = new BatchViewTransaction(store, (collection) => collection, undefined, new KeptDocuments());
    const doc = { id: '4', team_id: 7, name: 'd' };
    kept.put('channels', doc);
    expect(await kept.get('channels', '4')).toBe(doc);
    expect(Object.isFrozen(doc)).toBe(true);
    const copying = batch();
    const other = { id: '5', team_id: 7, name: 'e' };
    copying.put('channels', other);
    const read = await copying.get('channels', '5');
    expect(read).toEqual(other);
    expect(read).not.toBe(other);
  });

  it('answers a get of a collection the projection did not declare with a rejected promise, not a throw', async () => {
    const undeclared = new BatchViewTransaction(store, (collection) => {
      throw new Error(`undeclared collection "${collection}"`);
    }, undefined, new KeptDocuments());
    const read = undeclared.get('other', '1');
    await expect(read).rejects.toThrow('undeclared collection "other"');
  });

  it('reads a kept document from the store once, and what a committed batch wrote over it not at all', async () => {
    const documents = new KeptDocuments();
    let reads = 0;
    const get = store.get.bind(store);
    store.get = (collection, id) => {
      reads++;
      return get(collection, id);
    };
    const first = new BatchViewTransaction(store, (collection) => collection, undefined, documents);
    expect(await first.get('channels', '1')).toEqual({ id: '1', team_id: 7, name: 'a' });
    expect(await first.get('channels', '2')).toEqual({ id: '2', team_id: 7, name: 'b' });
    first.put('channels', { id: '2', team_id: 7, name: 'b2' });
    await store.commit(first.writes());
    first.committed();
    const second = new BatchViewTransaction(store, (collection) => collection, undefined, documents);
    expect(await second.get('channels', '1')).toEqual({ id: '1', team_id: 7, name: 'a' });
    expect(await second.get('channels', '2')).toEqual({ id: '2', team_id: 7, name: 'b2' });
    expect(reads).toBe(2);
  });

  it('keeps only documents known as stored: a row written where none was, or deleted, is not held after its commit', async () => {
    // A raw check row: its dedupe read finds nothing, then it is written and never read again.
    await store.ensureCollection({ name: 'rows', indexes: [] });
    const documents = new KeptDocuments();
    const first = new BatchViewTransaction(store, (collection) => collection, undefined, documents);
    await first.prefetch(new Map([['rows', new Set(['r1'])]]));
    expect(await first.get('rows', 'r1')).toBeNull();
    first.put('rows', { id: 'r1', team_id: 7 });
    expect(await first.get('rows', 'r2')).toBeNull();
    first.put('rows', { id: 'r2', team_id: 7 });
    first.put('rows', { id: 'r3', team_id: 7 });
    expect(await first.get('channels', '1')).toEqual({ id: '1', team_id: 7, name: 'a' });
    first.delete('channels', '1');
    expect(await first.get('channels', '2')).toEqual({ id: '2', team_id: 7, name: 'b' });
    first.put('channels', { id: '2', team_id: 7, name: 'b2' });
    await store.commit(first.writes());
    first.committed();
    expect(['r1', 'r2', 'r3'].map((id) => documents.lookup('rows', id))).toEqual([undefined, undefined, undefined]);
    expect(documents.lookup('channels', '1')).toBeUndefined();
    expect(documents.lookup('channels', '2')).toEqual({ id: '2', team_id: 7, name: 'b2' });
    // Asked for again, a forgotten row is read from the store (once) and kept from then on.
    const second = new BatchViewTransaction(store, (collection) => collection, undefined, documents);
    expect(await second.get('rows', 'r1')).toEqual({ id: 'r1', team_id: 7 });
    expect(await second.get('channels', '1')).toBeNull();
    expect(documents.lookup('rows', 'r1')).toEqual({ id: 'r1', team_id: 7 });
  });

  it('keeps at most its bound of documents per collection, the least recently used going first', () => {
    const documents = new KeptDocuments(16);
    const used: string[] = [];
    const keep = (id: string) => {
      documents.keep('rows', id, { id });
      const at = used.indexOf(id);
      if (at >= 0) used.splice(at, 1);
      used.push(id);
    };
    for (let i = 0; i < 16; i++) keep(`r${i}`);
    for (let i = 16; i < 30; i++) {
      keep('r0'); // read batch after batch, as an endpoint's rollup row is
      keep(`r${i}`);
    }
    const kept = used.filter((id) => documents.lookup('rows', id) !== undefined);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThanOrEqual(16);
    expect(kept).toEqual(used.slice(used.length - kept.length));
    expect(kept).toContain('r0');
  });

  it('hands out stored documents that a handler cannot change in place for the next reader', async () => {
    const views = batch();
    const [first] = await views.find('channels', { filter: { team_id: 7 }, sort: [['name', 'asc']] });
    expect(() => {
      (first as unknown as { name: string }).name = 'changed';
    }).toThrow(TypeError);
    expect(names(await views.find('channels', { filter: { team_id: 7 } }))).toEqual(['a', 'b']);
  });

  it('keeps what was put as it was put: changing the object afterwards fails instead of changing the batch', async () => {
    const views = batch();
    const doc = { id: '3', team_id: 7, name: 'c' };
    views.put('channels', doc);
    expect(() => {
      doc.name = 'changed';
    }).toThrow(TypeError);
    const again = await views.get('channels', '3');
    (again as unknown as { name: string }).name = 'a copy may change';
    expect(names(await views.find('channels', { filter: { team_id: 7 } }))).toEqual(['a', 'b', 'c']);
  });

  it('reads the store again in the next batch, after the commit', async () => {
    const first = batch();
    await first.find('channels', { filter: { team_id: 7 } });
    first.put('channels', { id: '3', team_id: 7, name: 'c' });
    await store.commit(first.writes());
    expect(names(await batch().find('channels', { filter: { team_id: 7 } }))).toEqual(['a', 'b', 'c']);
  });

  describe('with documents read ahead (prefetch)', () => {
    it('answers a get from what was read ahead, once, and reads the store for the next get as before', async () => {
      const views = batch();
      let reads = 0;
      const get = store.get.bind(store);
      store.get = async (collection, id) => {
        reads++;
        return get(collection, id);
      };
      await views.prefetch(new Map([['channels', new Set(['1', '9'])]]));
      expect(await views.get('channels', '1')).toEqual({ id: '1', team_id: 7, name: 'a' });
      expect(await views.get('channels', '9')).toBeNull();
      expect(reads).toBe(0);
      expect(await views.get('channels', '1')).toEqual({ id: '1', team_id: 7, name: 'a' });
      expect(await views.get('channels', '2')).toEqual({ id: '2', team_id: 7, name: 'b' });
      expect(reads).toBe(2);
    });

    it('answers with the batch\'s own writes over what was read ahead', async () => {
      const views = batch();
      await views.prefetch(new Map([['channels', new Set(['1', '2', '3'])]]));
      views.put('channels', { id: '1', team_id: 7, name: 'a2' });
      views.delete('channels', '2');
      views.put('channels', { id: '3', team_id: 7, name: 'c' });
      expect(await views.get('channels', '1')).toEqual({ id: '1', team_id: 7, name: 'a2' });
      expect(await views.get('channels', '2')).toBeNull();
      expect(await views.get('channels', '3')).toEqual({ id: '3', team_id: 7, name: 'c' });
    });
  });
});
