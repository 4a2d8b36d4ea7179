/**
 * The read-store contract: every adapter must pass it. `make` returns a fresh, empty store each
 * time; the suite closes what it makes, the caller removes the storage afterwards.
 */
import { findIds, type Doc, type Filter, type ReadStore, type Scalar, type SortDirection } from '../../src/platform/read-store/read-store.port.js';
import { compareScalars } from '../../src/platform/read-store/read-store-rules.js';

type Sort = Array<[string, SortDirection]>;

const FILTER_DOCS: Doc[] = [
  { id: 'a', n: 1, s: 'apple', b: true, tags: ['red', 'blue'], opt: null },
  { id: 'b', n: 2, s: 'banana', b: false, tags: ['blue'], opt: 5 },
  { id: 'c', n: 3, s: 'cherry', tags: [], opt: 'five' },
  { id: 'd', n: 0, s: 'apple', b: true, tags: [true, 7] },
  { id: 'e', s: '10', b: 1, tags: ['red'] },
  { id: 'f', n: 10, s: 'date', b: 0, opt: 0 },
];

function ids(docs: Doc[]): string[] {
  return docs.map((d) => d.id).sort();
}

/** Reference order: nulls/missing lowest, then numbers, then strings. */
function compare(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (v === null || v === undefined ? 0 : typeof v === 'number' ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (a === b || rank(a) === 0) return 0;
  return (a as number | string) < (b as number | string) ? -1 : 1;
}

function compareBySort(sort: Sort) {
  return (x: Doc, y: Doc): number => {
    for (const [field, dir] of sort) {
      const c = compare(x[field], y[field]);
      if (c !== 0) return dir === 'asc' ? c : -c;
    }
    return 0;
  };
}

/** The shared order of every adapter (read-store-rules): null/missing, numbers, strings, booleans. */
function compareTyped(x: Doc, y: Doc, sort: Sort): number {
  for (const [field, dir] of sort) {
    const c = compareScalars((x[field] ?? null) as Scalar, (y[field] ?? null) as Scalar);
    if (c !== 0) return dir === 'asc' ? c : -c;
  }
  return 0;
}

function sortValues(doc: Doc, sort: Sort): Scalar[] {
  return sort.map(([field]) => (doc[field] ?? null) as Scalar);
}

interface Walk {
  sort: Sort;
  pageSize: number;
  filter?: Filter;
  between?: (page: number) => Promise<void>;
}

async function walk(store: ReadStore, collection: string, { sort, pageSize, filter, between }: Walk): Promise<Doc[]> {
  const seen: Doc[] = [];
  let after: Scalar[] | undefined;
  for (let page = 0; page < 1000; page++) {
    const rows = await store.find(collection, { filter, sort, after, limit: pageSize });
    seen.push(...rows);
    if (rows.length < pageSize) return seen;
    after = sortValues(rows[rows.length - 1], sort);
    await between?.(page);
  }
  throw new Error('pagination did not end');
}

export function readStoreContract(name: string, make: () => Promise<ReadStore>): void {
  describe(`read store contract: ${name}`, () => {
    let store: ReadStore;

    beforeEach(async () => {
      store = await make();
    });

    afterEach(async () => {
      await store.close();
    });

    const put = (collection: string, docs: Doc[]) => store.commit(docs.map((doc) => ({ op: 'put', collection, doc })));

    describe('collections', () => {
      it('creates a collection once even when ensured repeatedly, and lists it', async () => {
        const spec = { name: 'checks', indexes: [{ fields: ['endpoint_id', 'at'] }] };
        await store.ensureCollection(spec);
        await put('checks', [{ id: 'x', endpoint_id: 'e1', at: 1 }]);
        await store.ensureCollection(spec);
        expect(await store.listCollections()).toEqual(['checks']);
        expect(await store.get('checks', 'x')).toEqual({ id: 'x', endpoint_id: 'e1', at: 1 });
      });

      it('adds a new index to an existing collection without losing its documents', async () => {
        await store.ensureCollection({ name: 'items', indexes: [{ fields: ['a'] }] });
        await put('items', [{ id: '1', a: 1, b: 'y' }, { id: '2', a: 2, b: 'x' }]);
        await store.ensureCollection({ name: 'items', indexes: [{ fields: ['a'] }, { fields: ['b', 'id'] }] });
        const rows = await store.find('items', { filter: { b: { gte: 'x' } }, sort: [['b', 'asc'], ['id', 'asc']] });
        expect(rows.map((r) => r.id)).toEqual(['2', '1']);
      });

      it('drops a collection with its documents', async () => {
        await store.ensureCollection({ name: 'keep', indexes: [] });
        await store.ensureCollection({ name: 'gone', indexes: [] });
        await put('gone', [{ id: '1' }]);
        await store.dropCollection('gone');
        await store.dropCollection('gone');
        expect(await store.listCollections()).toEqual(['keep']);
        await store.ensureCollection({ name: 'gone', indexes: [] });
        expect(await store.get('gone', '1')).toBeNull();
      });

      it('reads a collection that does not exist as empty', async () => {
        expect(await store.get('nothing', 'x')).toBeNull();
        expect(await store.find('nothing', {})).toEqual([]);
        expect(await store.count('nothing')).toBe(0);
      });
    });

    describe('documents', () => {
      beforeEach(() => store.ensureCollection({ name: 'docs', indexes: [] }));

      it('replaces the whole document on put and forgets it on delete', async () => {
        await put('docs', [{ id: '1', a: 1, nested: { x: [1, 'two'] } }, { id: '2', a: 2 }]);
        await put('docs', [{ id: '1', b: 'new' }]);
        await store.commit([{ op: 'delete', collection: 'docs', id: '2' }]);
        expect(await store.get('docs', '1')).toEqual({ id: '1', b: 'new' });
        expect(await store.get('docs', '2')).toBeNull();
      });

      it('returns the documents found by getMany in the order asked, skipping unknown ids', async () => {
        await put('docs', [{ id: '1' }, { id: '2' }, { id: '3' }]);
        const rows = await store.getMany('docs', ['3', 'missing', '1']);
        expect(rows.map((r) => r.id)).toEqual(['3', '1']);
        expect(await store.getMany('docs', [])).toEqual([]);
      });
    });

    describe('filters', () => {
      beforeEach(async () => {
        await store.ensureCollection({ name: 'f', indexes: [{ fields: ['n'] }, { fields: ['s'] }, { fields: ['b'] }] });
        await put('f', FILTER_DOCS);
      });

      const cases: Array<[string, Record<string, unknown>, string[]]> = [
        ['bare scalar is eq', { s: 'apple' }, ['a', 'd']],
        ['eq on a number', { n: { eq: 3 } }, ['c']],
        ['eq true matches booleans only, not the number 1', { b: true }, ['a', 'd']],
        ['eq false matches booleans only, not the number 0', { b: { eq: false } }, ['b']],
        ['eq 1 matches the number, not true', { b: 1 }, ['e']],
        ['eq null matches null and missing', { opt: null }, ['a', 'd', 'e']],
        ['ne excludes the value and keeps missing', { b: { ne: true } }, ['b', 'c', 'e', 'f']],
        ['ne null matches present values', { opt: { ne: null } }, ['b', 'c', 'f']],
        ['in with strings', { s: { in: ['apple', 'date', 'nope'] } }, ['a', 'd', 'f']],
        ['in with null and a boolean', { b: { in: [null, false] } }, ['b', 'c']],
        ['in with an empty list matches nothing', { s: { in: [] } }, []],
        ['gt on numbers ignores strings and missing', { n: { gt: 1 } }, ['b', 'c', 'f']],
        ['gte and lt together', { n: { gte: 1, lt: 10 } }, ['a', 'b', 'c']],
        ['lte on numbers ignores booleans', { b: { lte: 1 } }, ['e', 'f']],
        ['lt on strings ignores numbers', { s: { lt: 'banana' } }, ['a', 'd', 'e']],
        ['gt on strings compares lexically', { s: { gt: 'banana' } }, ['c', 'f']],
        ['has finds a string in an array', { tags: { has: 'red' } }, ['a', 'e']],
        ['has finds a boolean in an array', { tags: { has: true } }, ['d']],
        ['has finds a number in an array', { tags: { has: 7 } }, ['d']],
        ['several fields must all hold', { s: 'apple', b: true, n: { gt: 0 } }, ['a']],
        ['filters on id', { id: { in: ['a', 'c', 'zz'] } }, ['a', 'c']],
        ['range on id', { id: { gte: 'e' } }, ['e', 'f']],
      ];

      it.each(cases)('%s', async (_title, filter, expected) => {
        expect(ids(await store.find('f', { filter: filter as never }))).toEqual(expected);
        expect(await store.count('f', filter as never)).toBe(expected.length);
      });
    });

    describe('sort and keyset pagination', () => {
      const sort: Sort = [['grp', 'asc'], ['score', 'desc'], ['id', 'asc']];

      function makeRows(count: number, prefix: string): Doc[] {
        return Array.from({ length: count }, (_, i) => {
          const doc: Doc = { id: `${prefix}${String(i).padStart(3, '0')}`, score: (i * 7) % 5 };
          if (i % 4 === 1) doc.grp = null;
          else if (i % 4 !== 2) doc.grp = ['x', 'y', 'z'][i % 3];
          if (i % 6 === 0) doc.score = null;
          return doc;
        });
      }

      beforeEach(() =>
        store.ensureCollection({ name: 'p', indexes: [{ fields: ['grp', 'score', 'id'] }, { fields: ['score', 'id'] }] }),
      );

      it('sorts by several fields with mixed directions, nulls lowest', async () => {
        const rows = makeRows(40, 'r');
        await put('p', rows);
        const found = await store.find('p', { sort });
        expect(found.map((d) => d.id)).toEqual([...rows].sort(compareBySort(sort)).map((d) => d.id));
      });

      it('walks the whole collection page by page without duplicates or gaps', async () => {
        const rows = makeRows(53, 'r');
        await put('p', rows);
        for (const order of [sort, [['score', 'desc'], ['id', 'desc']] as Sort, [['score', 'asc'], ['id', 'asc']] as Sort]) {
          const seen = await walk(store, 'p', { sort: order, pageSize: 6 });
          expect(seen.map((d) => d.id)).toEqual([...rows].sort(compareBySort(order)).map((d) => d.id));
        }
      });

      it('walks a filtered subset sorted descending into its nulls', async () => {
        const rows = makeRows(60, 'r');
        await put('p', rows);
        const expected = rows.filter((r) => r.grp === 'x').sort(compareBySort(sort));
        expect(expected.some((r) => r.score === null)).toBe(true);
        for (const pageSize of [1, 2, 3]) {
          const seen = await walk(store, 'p', { sort, pageSize, filter: { grp: 'x' } });
          expect(seen.map((d) => d.id)).toEqual(expected.map((d) => d.id));
        }
      });

      it('keeps walking correctly while rows are inserted between pages', async () => {
        const rows = makeRows(30, 'r');
        await put('p', rows);
        const extra = makeRows(30, 'n');
        const between = (page: number) => put('p', extra.slice(page * 3, page * 3 + 3));
        const seen = await walk(store, 'p', { sort, pageSize: 4, between });
        const seenIds = seen.map((d) => d.id);
        expect(new Set(seenIds).size).toBe(seenIds.length);
        expect(seenIds).toEqual(expect.arrayContaining(rows.map((r) => r.id)));
        expect([...seen].sort(compareBySort(sort)).map((d) => d.id)).toEqual(seenIds);
      });

      it('combines a filter, a keyset and a limit', async () => {
        await put('p', makeRows(20, 'r'));
        const order: Sort = [['score', 'desc'], ['id', 'asc']];
        const all = await store.find('p', { filter: { grp: 'x' }, sort: order });
        const rest = await store.find('p', { filter: { grp: 'x' }, sort: order, after: sortValues(all[1], order), limit: 2 });
        expect(rest.map((d) => d.id)).toEqual(all.slice(2, 4).map((d) => d.id));
      });

      it('returns only the fields asked for from documents without declared columns', async () => {
        await put('p', makeRows(12, 'r'));
        const whole = await store.find('p', { sort });
        expect(await store.find('p', { sort, fields: ['score'] })).toStrictEqual(whole.map((doc) => ('score' in doc ? { id: doc.id, score: doc.score } : { id: doc.id })));
        expect(await store.find('p', { sort, fields: ['grp'], limit: 3 })).toStrictEqual(whole.slice(0, 3).map((doc) => ('grp' in doc ? { id: doc.id, grp: doc.grp } : { id: doc.id })));
      });

      // findIds is optional in the port: the adapter's own where it has one (SQLite), the port's
      // fallback over find otherwise. Either way every adapter answers the same ids.
      it('finds the same ids, in the same order, with findIds as with find', async () => {
        await put('p', makeRows(45, 'r'));
        const order: Sort = [['score', 'desc'], ['id', 'asc']];
        const all = await store.find('p', { sort });
        const queries = [
          { sort },
          { sort, filter: { grp: 'x' }, limit: 5 },
          { sort, after: sortValues(all[7], sort), limit: 9 },
          { sort: order, filter: { grp: 'y' }, after: sortValues(all[3], order), limit: 4 },
          { sort, filter: { grp: 'x' }, after: sortValues(all.filter((d) => d.grp === 'x').at(-3)!, sort) },
        ];
        for (const query of queries) {
          expect(await findIds(store, 'p', query)).toEqual((await store.find('p', query)).map((d) => d.id));
        }
        expect(await findIds(store, 'missing_collection', { sort })).toEqual([]);
      });
    });

    describe('aggregate', () => {
      beforeEach(() => store.ensureCollection({ name: 'agg', indexes: [{ fields: ['status'] }] }));

      it('returns one zero row without groupBy and no rows with groupBy on an empty set', async () => {
        const query = { sum: ['ms'], min: ['ms'], max: ['ms'] };
        expect(await store.aggregate('agg', query)).toEqual([
          { group: null, count: 0, sum: { ms: 0 }, min: { ms: null }, max: { ms: null } },
        ]);
        expect(await store.aggregate('agg', { ...query, groupBy: 'status' })).toEqual([]);
        await put('agg', [{ id: '1', status: 'up', ms: 3 }]);
        expect(await store.aggregate('agg', { ...query, filter: { status: 'down' } })).toEqual([
          { group: null, count: 0, sum: { ms: 0 }, min: { ms: null }, max: { ms: null } },
        ]);
      });

      it('counts, sums and takes min/max of numbers only, overall and per group', async () => {
        await put('agg', [
          { id: '1', status: 'up', ms: 10, ok: true },
          { id: '2', status: 'up', ms: 30, ok: true },
          { id: '3', status: 'down', ms: 'n/a', ok: false },
          { id: '4', status: 'down', ms: 5, ok: false },
          { id: '5', ms: 7, ok: true },
          { id: '6', status: null },
        ]);
        const query = { sum: ['ms', 'ok'], min: ['ms'], max: ['ms', 'absent'] };
        expect(await store.aggregate('agg', query)).toEqual([
          { group: null, count: 6, sum: { ms: 52, ok: 0 }, min: { ms: 5 }, max: { ms: 30, absent: null } },
        ]);
        expect(await store.aggregate('agg', { ...query, groupBy: 'status' })).toEqual([
          { group: null, count: 2, sum: { ms: 7, ok: 0 }, min: { ms: 7 }, max: { ms: 7, absent: null } },
          { group: 'down', count: 2, sum: { ms: 5, ok: 0 }, min: { ms: 5 }, max: { ms: 5, absent: null } },
          { group: 'up', count: 2, sum: { ms: 40, ok: 0 }, min: { ms: 10 }, max: { ms: 30, absent: null } },
        ]);
      });

      it('groups by booleans and applies the filter first', async () => {
        await put('agg', [
          { id: '1', ok: true, ms: 1 },
          { id: '2', ok: false, ms: 2 },
          { id: '3', ok: true, ms: 4 },
          { id: '4', ok: 1, ms: 8 },
        ]);
        const rows = await store.aggregate('agg', { groupBy: 'ok', sum: ['ms'], filter: { ms: { lt: 8 } } });
        expect(rows.map((r) => [r.group, r.count, r.sum.ms])).toEqual([
          [false, 1, 2],
          [true, 2, 5],
        ]);
      });
    });

    describe('aggregateRanges', () => {
      // Keys like rollup ids: a letter, a scope id, a fixed-width period.
      const key = (scope: number, period: number) => `k${scope}p${String(period).padStart(3, '0')}`;
      beforeEach(async () => {
        await store.ensureCollection({ name: 'ranges', indexes: [{ fields: ['n'] }] });
        const docs: Doc[] = [];
        for (let scope = 1; scope <= 12; scope++) {
          for (let period = 0; period < 30; period += 1 + (scope % 3)) docs.push({ id: key(scope, period), n: scope * 100 + period, ms: (scope * 7 + period) % 50, label: 'x' });
        }
        docs.push({ id: key(3, 5) + 'x', n: 'text', ms: 'not a number' });
        await put('ranges', docs);
      });

      /** What `aggregate` says of each range on its own: the meaning aggregateRanges keeps. */
      async function oneByOne(field: string, ranges: Array<{ gte: Scalar; lt: Scalar }>) {
        const rows = [];
        for (const [i, range] of ranges.entries()) {
          const [row] = await store.aggregate('ranges', { filter: { [field]: range }, sum: ['ms', 'label'], min: ['ms'], max: ['ms', 'absent'] });
          rows.push({ ...row, group: i });
        }
        return rows;
      }

      it('sums each range of ids apart, in the ranges\' order, empty and overlapping ones included', async () => {
        const ranges = [
          { gte: key(4, 10), lt: key(4, 20) },
          { gte: key(1, 0), lt: key(1, 999) },
          { gte: key(5, 3), lt: key(5, 3) },
          { gte: key(99, 0), lt: key(99, 5) },
          { gte: key(3, 0), lt: key(3, 10) },
          { gte: key(1, 5), lt: key(1, 15) },
        ];
        const rows = await store.aggregateRanges('ranges', { field: 'id', ranges, sum: ['ms', 'label'], min: ['ms'], max: ['ms', 'absent'] });
        expect(rows).toEqual(await oneByOne('id', ranges));
        expect(rows.map((r) => r.count)).toEqual([5, 15, 0, 0, 11, 5]);
        expect(rows[2]).toEqual({ group: 2, count: 0, sum: { ms: 0, label: 0 }, min: { ms: null }, max: { ms: null, absent: null } });
      });

      it('keeps a field\'s type order, and answers hundreds of ranges at once', async () => {
        const numeric = [{ gte: 300, lt: 310 }, { gte: 0, lt: 'zzz' }, { gte: 'a', lt: 'zzz' }, { gte: 1150, lt: 1300 }];
        expect(await store.aggregateRanges('ranges', { field: 'n', ranges: numeric, sum: ['ms', 'label'], min: ['ms'], max: ['ms', 'absent'] })).toEqual(await oneByOne('n', numeric));
        const many = Array.from({ length: 601 }, (_, i) => ({ gte: key((i % 13) + 1, i % 30), lt: key((i % 13) + 1, (i % 30) + 1 + (i % 4)) }));
        const rows = await store.aggregateRanges('ranges', { field: 'id', ranges: many, sum: ['ms'], min: ['ms'], max: ['ms'] });
        expect(rows).toHaveLength(601);
        expect(rows.map((r) => r.group)).toEqual(many.map((_, i) => i));
        const expected = await Promise.all(many.map((range) => store.aggregate('ranges', { filter: { id: range }, sum: ['ms'], min: ['ms'], max: ['ms'] })));
        expect(rows.map(({ group: _, ...row }) => row)).toEqual(expected.map(([{ group: _, ...row }]) => row));
        expect(rows.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(300);
      });

      it('counts only the documents matching a filter in each range, for any number of ranges, ids or not', async () => {
        const withLabel: Filter = { label: 'x', ms: { lt: 30 } };
        const byFilter = async (field: string, ranges: Array<{ gte: Scalar; lt: Scalar }>) => {
          const rows = [];
          for (const [i, range] of ranges.entries()) {
            const [row] = await store.aggregate('ranges', { filter: { ...withLabel, [field]: range }, sum: ['ms'], min: ['ms'], max: ['ms'] });
            rows.push({ ...row, group: i });
          }
          return rows;
        };
        // 97 ranges: more than one statement's worth of a power of two, none read twice.
        const numeric = Array.from({ length: 97 }, (_, i) => ({ gte: 100 + i * 12, lt: 100 + i * 12 + 1 + (i % 9) }));
        const rows = await store.aggregateRanges('ranges', { field: 'n', ranges: numeric, filter: withLabel, sum: ['ms'], min: ['ms'], max: ['ms'] });
        expect(rows).toEqual(await byFilter('n', numeric));
        expect(rows.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(20);
        const ids = [{ gte: key(1, 0), lt: key(1, 999) }, { gte: key(4, 10), lt: key(4, 20) }];
        expect(await store.aggregateRanges('ranges', { field: 'id', ranges: ids, filter: withLabel, sum: ['ms'], min: ['ms'], max: ['ms'] })).toEqual(await byFilter('id', ids));
      });

      it('narrows each range by its own filter too, beside the query\'s, and refuses one naming a field twice', async () => {
        const withLabel: Filter = { label: 'x' };
        // Each range of `n` narrowed by a window of ids of its own (as a project's edges are by their minute's check ids).
        const ranges = Array.from({ length: 37 }, (_, i) => ({
          gte: 100 + (i % 12) * 100,
          lt: 130 + (i % 12) * 100,
          filter: { id: { gte: key((i % 12) + 1, i % 7), lt: key((i % 12) + 1, 10 + (i % 13)) } },
        }));
        const rows = await store.aggregateRanges('ranges', { field: 'n', ranges, filter: withLabel, sum: ['ms'], min: ['ms'], max: ['ms'] });
        const expected = [];
        for (const [i, range] of ranges.entries()) {
          const [row] = await store.aggregate('ranges', { filter: { ...withLabel, ...range.filter, n: { gte: range.gte, lt: range.lt } }, sum: ['ms'], min: ['ms'], max: ['ms'] });
          expected.push({ ...row, group: i });
        }
        expect(rows).toEqual(expected);
        expect(rows.reduce((n, r) => n + r.count, 0)).toBeGreaterThan(50);
        // The ranges' own filters narrowed them: fewer than the same ranges without.
        const unnarrowed = await store.aggregateRanges('ranges', { field: 'n', ranges: ranges.map(({ gte, lt }) => ({ gte, lt })), filter: withLabel, sum: ['ms'] });
        expect(rows.reduce((n, r) => n + r.count, 0)).toBeLessThan(unnarrowed.reduce((n, r) => n + r.count, 0));
        await expect(store.aggregateRanges('ranges', { field: 'n', ranges: [{ gte: 1, lt: 2, filter: { label: 'y' } }], filter: withLabel, sum: ['ms'] })).rejects.toThrow(/label/);
        await expect(store.aggregateRanges('ranges', { field: 'n', ranges: [{ gte: 1, lt: 2, filter: { n: 5 } }], sum: ['ms'] })).rejects.toThrow(/names n/);
      });

      /** Per-range rows folded by hand: what `prefixes` must answer for one prefix's ranges. */
      function folded(rows: Array<{ count: number; sum: Record<string, number>; min: Record<string, number | null>; max: Record<string, number | null> }>, group: number) {
        const pick = (values: Array<number | null>, better: (a: number, b: number) => boolean) =>
          values.reduce<number | null>((best, v) => (v === null ? best : best === null || better(v, best) ? v : best), null);
        return {
          group,
          count: rows.reduce((n, r) => n + r.count, 0),
          sum: Object.fromEntries(Object.keys(rows[0]?.sum ?? {}).map((f) => [f, rows.reduce((n, r) => n + r.sum[f], 0)])),
          min: Object.fromEntries(Object.keys(rows[0]?.min ?? {}).map((f) => [f, pick(rows.map((r) => r.min[f]), (a, b) => a < b)])),
          max: Object.fromEntries(Object.keys(rows[0]?.max ?? {}).map((f) => [f, pick(rows.map((r) => r.max[f]), (a, b) => a > b)])),
        };
      }

      it('sums each prefix\'s ranges of ids into one row per prefix, overlapping ranges counted twice', async () => {
        // 'k1' + 'p...' never reaches k10-k12's rows: the suffixes start with the letter after the scope.
        const prefixes = ['k4', 'k1', 'k99', 'k3', 'k1'];
        const ranges = [
          { gte: 'p010', lt: 'p020' },
          { gte: 'p000', lt: 'p005' },
          { gte: 'p003', lt: 'p012' },
          { gte: 'p007', lt: 'p007' },
        ];
        const rows = await store.aggregateRanges('ranges', { field: 'id', ranges, prefixes, sum: ['ms', 'label'], min: ['ms'], max: ['ms', 'absent'] });
        const expected = [];
        for (const [i, prefix] of prefixes.entries()) expected.push(folded(await oneByOne('id', ranges.map((r) => ({ gte: prefix + r.gte, lt: prefix + r.lt }))), i));
        expect(rows).toEqual(expected);
        expect(rows.map((r) => r.count)).toEqual([12, 12, 0, 25, 12]);
        expect(rows[2]).toEqual({ group: 2, count: 0, sum: { ms: 0, label: 0 }, min: { ms: null }, max: { ms: null, absent: null } });
      });

      it('sums prefixed ranges of another text field, refuses bounds that are not strings, and reads a missing collection as empty prefixes', async () => {
        await store.ensureCollection({ name: 'texts', indexes: [{ fields: ['key'] }] });
        await put('texts', Array.from({ length: 40 }, (_, i) => ({ id: `d${i}`, key: `a${i % 4}-${String(i).padStart(2, '0')}`, ms: i })));
        const ranges = [{ gte: '-00', lt: '-10' }, { gte: '-20', lt: '-99' }];
        const prefixes = ['a2', 'a0', 'b'];
        const rows = await store.aggregateRanges('texts', { field: 'key', ranges, prefixes, sum: ['ms'], min: ['ms'], max: ['ms'] });
        const byRange = async (range: { gte: string; lt: string }) => (await store.aggregate('texts', { filter: { key: range }, sum: ['ms'], min: ['ms'], max: ['ms'] }))[0];
        const expected = [];
        for (const [i, prefix] of prefixes.entries()) expected.push(folded(await Promise.all(ranges.map((r) => byRange({ gte: prefix + r.gte, lt: prefix + r.lt }))), i));
        expect(rows).toEqual(expected);
        expect(rows.map((r) => r.count)).toEqual([7, 8, 0]);
        await expect(store.aggregateRanges('ranges', { field: 'id', ranges: [{ gte: 1, lt: 2 }], prefixes: ['k1'], sum: ['ms'] })).rejects.toThrow(/string/);
        expect(await store.aggregateRanges('missing_collection', { field: 'id', ranges, prefixes: ['a', 'b'], sum: ['ms'] })).toEqual([
          { group: 0, count: 0, sum: { ms: 0 }, min: {}, max: {} },
          { group: 1, count: 0, sum: { ms: 0 }, min: {}, max: {} },
        ]);
        expect(await store.aggregateRanges('ranges', { field: 'id', ranges, prefixes: [], sum: ['ms'] })).toEqual([]);
      });

      it('reads a missing collection as empty ranges, and no ranges as no rows', async () => {
        expect(await store.aggregateRanges('missing_collection', { field: 'id', ranges: [{ gte: 'a', lt: 'b' }], sum: ['ms'] })).toEqual([
          { group: 0, count: 0, sum: { ms: 0 }, min: {}, max: {} },
        ]);
        expect(await store.aggregateRanges('ranges', { field: 'id', ranges: [], sum: ['ms'] })).toEqual([]);
      });
    });

    describe('commit', () => {
      beforeEach(async () => {
        await store.ensureCollection({ name: 'one', indexes: [] });
        await store.ensureCollection({ name: 'two', indexes: [{ fields: ['email'], unique: true }] });
      });

      it('applies puts and deletes across collections together', async () => {
        await put('one', [{ id: 'old' }]);
        await store.commit([
          { op: 'put', collection: 'one', doc: { id: 'a', v: 1 } },
          { op: 'put', collection: 'two', doc: { id: 'b', email: 'b@x' } },
          { op: 'delete', collection: 'one', id: 'old' },
          { op: 'put', collection: 'one', doc: { id: 'a', v: 2 } },
        ]);
        expect(await store.find('one', {})).toEqual([{ id: 'a', v: 2 }]);
        expect(await store.get('two', 'b')).toEqual({ id: 'b', email: 'b@x' });
      });

      it('leaves nothing behind when a document cannot be serialised', async () => {
        const cyclic: Doc = { id: 'c' };
        cyclic.self = cyclic;
        await expect(
          store.commit([
            { op: 'put', collection: 'one', doc: { id: 'a' } },
            { op: 'put', collection: 'two', doc: { id: 'b', email: 'b@x' } },
            { op: 'put', collection: 'one', doc: cyclic },
          ]),
        ).rejects.toThrow();
        expect(await store.count('one')).toBe(0);
        expect(await store.count('two')).toBe(0);
      });

      it('leaves nothing behind when the store rejects a write part-way', async () => {
        await put('two', [{ id: 'taken', email: 'dup@x' }]);
        await expect(
          store.commit([
            { op: 'put', collection: 'one', doc: { id: 'a' } },
            { op: 'delete', collection: 'two', id: 'taken' },
            { op: 'put', collection: 'two', doc: { id: 'b', email: 'b@x' } },
            { op: 'put', collection: 'two', doc: { id: 'c', email: 'b@x' } },
          ]),
        ).rejects.toThrow();
        expect(await store.count('one')).toBe(0);
        expect(ids(await store.find('two', {}))).toEqual(['taken']);
      });

      it('refuses writes to a collection that was never ensured, applying none', async () => {
        await expect(
          store.commit([
            { op: 'put', collection: 'one', doc: { id: 'a' } },
            { op: 'put', collection: 'missing', doc: { id: 'b' } },
          ]),
        ).rejects.toThrow(/missing/);
        expect(await store.count('one')).toBe(0);
        expect(await store.listCollections()).not.toContain('missing');
      });

      it('commits when every precondition holds, a missing document counting as null', async () => {
        await put('one', [{ id: 'checkpoint', position: 7 }]);
        await store.commit([{ op: 'put', collection: 'one', doc: { id: 'checkpoint', position: 9 } }, { op: 'put', collection: 'two', doc: { id: 'x', email: 'x@x' } }], {
          expect: [
            { collection: 'one', id: 'checkpoint', field: 'position', value: 7 },
            { collection: 'one', id: 'nobody', field: 'position', value: null },
          ],
        });
        expect(await store.get('one', 'checkpoint')).toEqual({ id: 'checkpoint', position: 9 });
        expect(await store.get('two', 'x')).toEqual({ id: 'x', email: 'x@x' });
      });

      it('writes nothing and says why when a precondition fails', async () => {
        await put('one', [{ id: 'checkpoint', position: 8 }]);
        const commit = store.commit([{ op: 'put', collection: 'one', doc: { id: 'checkpoint', position: 9 } }, { op: 'put', collection: 'two', doc: { id: 'x', email: 'x@x' } }], {
          expect: [{ collection: 'one', id: 'checkpoint', field: 'position', value: 7 }],
        });
        await expect(commit).rejects.toMatchObject({ name: 'PreconditionFailedError', actual: 8 });
        expect(await store.get('one', 'checkpoint')).toEqual({ id: 'checkpoint', position: 8 });
        expect(await store.count('two')).toBe(0);
      });
    });

    describe('typed collections (declared columns)', () => {
      const columns = { at: 'timestamp', ok: 'boolean', n: 'integer', ms: 'real', s: 'text' } as const;
      const TYPED: Doc[] = [
        { id: 't1', at: '2026-01-01T00:00:00.000Z', ok: true, n: 1, ms: 1.5, s: 'a', extra: { deep: [1] } },
        { id: 't2', at: '2026-01-01T00:00:00.001Z', ok: false, n: 2, ms: 2, s: 'b' },
        { id: 't3', at: '2026-01-02T12:00:00.000Z', ok: true, n: 3, ms: 0, s: 'b', tags: ['x'] },
        { id: 't4', at: null, ok: null, n: null, ms: null, s: null },
        { id: 't5', s: 'c' },
        { id: 't6', at: '1999-12-31T23:59:59.999Z', ok: false, n: -4, ms: -0.25, s: '' },
      ];

      beforeEach(async () => {
        await store.ensureCollection({ name: 'typed', indexes: [{ fields: ['at', 'id'] }, { fields: ['ok', 'n'] }, { fields: ['tags'] }], columns });
        await put('typed', TYPED);
      });

      it('reads every document back exactly as written, a missing field staying missing and a null staying null', async () => {
        for (const doc of TYPED) expect(await store.get('typed', doc.id)).toStrictEqual(doc);
        expect(await store.getMany('typed', ['t5', 't4'])).toStrictEqual([TYPED[4], TYPED[3]]);
        const found = await store.find('typed', {});
        expect(found).toStrictEqual(TYPED);
        expect(Object.keys(found[4]).sort()).toEqual(['id', 's']);
      });

      it('replaces a whole document, a field it no longer has included', async () => {
        await put('typed', [{ id: 't1', s: 'only' }]);
        expect(await store.get('typed', 't1')).toStrictEqual({ id: 't1', s: 'only' });
      });

      const cases: Array<[string, Filter, string[]]> = [
        ['eq on a timestamp', { at: '2026-01-01T00:00:00.001Z' }, ['t2']],
        ['eq on a timestamp written differently matches nothing (documents hold strings)', { at: '2026-01-01T00:00:00Z' }, []],
        ['range on timestamps', { at: { gte: '2026-01-01T00:00:00.000Z', lt: '2026-01-02T12:00:00.000Z' } }, ['t1', 't2']],
        ['range with a bound that is not a full timestamp compares as strings', { at: { gt: '2026-01-01', lte: '2026-01-02' } }, ['t1', 't2']],
        ['range bounds past the stored ones', { at: { gt: '2026-01-01T00:00:00.000Z', lte: '2026-01-02T12:00:00.000Z' } }, ['t2', 't3']],
        ['lt on a timestamp with a bound before every value', { at: { lt: '1000' } }, []],
        ['in on timestamps', { at: { in: ['1999-12-31T23:59:59.999Z', 'nope', null] } }, ['t4', 't5', 't6']],
        ['ne on a timestamp keeps null and missing', { at: { ne: '2026-01-01T00:00:00.000Z' } }, ['t2', 't3', 't4', 't5', 't6']],
        ['a number never equals a timestamp', { at: { lte: 99999999999999 } }, []],
        ['eq true on a boolean column', { ok: true }, ['t1', 't3']],
        ['eq 1 matches no boolean', { ok: 1 }, []],
        ['ne false keeps null and missing', { ok: { ne: false } }, ['t1', 't3', 't4', 't5']],
        ['in with false and null', { ok: { in: [false, null] } }, ['t2', 't4', 't5', 't6']],
        ['range on booleans', { ok: { gt: false } }, ['t1', 't3']],
        ['range on integers ignores strings', { n: { gt: 'a' } }, []],
        ['range on integers', { n: { gte: 0 } }, ['t1', 't2', 't3']],
        ['range on reals', { ms: { lt: 1.5 } }, ['t3', 't6']],
        ['eq null on a declared field matches null and missing', { n: null }, ['t4', 't5']],
        ['strings compare on a text column', { s: { gt: 'a', lt: 'c' } }, ['t2', 't3']],
        ['has on an undeclared array field', { tags: { has: 'x' } }, ['t3']],
        ['an undeclared nested field is kept but not an array', { extra: { has: 1 } }, []],
      ];

      it.each(cases)('%s', async (_title, filter, expected) => {
        expect(ids(await store.find('typed', { filter }))).toEqual(expected);
        expect(await store.count('typed', filter)).toBe(expected.length);
      });

      it('sorts and walks keysets over timestamp and boolean columns in the same order as documents', async () => {
        const more: Doc[] = Array.from({ length: 30 }, (_, i) => ({
          id: `k${String(i).padStart(2, '0')}`,
          ...(i % 7 === 3 ? {} : { at: i % 5 === 0 ? null : new Date(Date.UTC(2026, 0, 1, 0, 0, i % 4)).toISOString() }),
          ok: i % 3 === 0 ? null : i % 2 === 0,
          n: i,
        }));
        await put('typed', more);
        const all = [...TYPED, ...more];
        const orders: Sort[] = [
          [['at', 'desc'], ['id', 'asc']],
          [['at', 'asc'], ['id', 'desc']],
          [['ok', 'desc'], ['n', 'asc'], ['id', 'asc']],
          [['ok', 'asc'], ['at', 'desc'], ['id', 'asc']],
        ];
        for (const sort of orders) {
          const expected = [...all].sort((x, y) => compareTyped(x, y, sort)).map((d) => d.id);
          expect((await store.find('typed', { sort })).map((d) => d.id)).toEqual(expected);
          for (const pageSize of [1, 4]) expect((await walk(store, 'typed', { sort, pageSize })).map((d) => d.id)).toEqual(expected);
        }
        const since = '2026-01-01T00:00:01.000Z';
        const filtered = all.filter((d) => typeof d.at === 'string' && d.at >= since).sort((x, y) => compareTyped(x, y, orders[0])).map((d) => d.id);
        expect((await walk(store, 'typed', { sort: orders[0], pageSize: 3, filter: { at: { gte: since } } })).map((d) => d.id)).toEqual(filtered);
      });

      it('returns only the fields asked for, each as a whole document has it, a missing one staying missing', async () => {
        const pick = (doc: Doc, fields: string[]) => Object.fromEntries(Object.entries(doc).filter(([key]) => key === 'id' || fields.includes(key)));
        const sort: Sort = [['n', 'desc'], ['id', 'asc']];
        // Declared columns alone (null, missing and -0-free values among them), undeclared ones, and none that exist.
        for (const fields of [['n', 'ok', 'at'], ['s', 'extra', 'tags'], ['id'], ['nope'], ['ms', 'nope']]) {
          const whole = await store.find('typed', { sort });
          expect(await store.find('typed', { sort, fields })).toStrictEqual(whole.map((doc) => pick(doc, fields)));
          // With a filter, a keyset and a limit, as a page of a walk reads it.
          const query = { filter: { n: { gte: -10 } }, sort, after: sortValues(whole[1], sort), limit: 2 };
          expect(await store.find('typed', { ...query, fields })).toStrictEqual((await store.find('typed', query)).map((doc) => pick(doc, fields)));
        }
        expect(await store.find('typed', { filter: { s: 'c' }, fields: ['n', 's'] })).toStrictEqual([{ id: 't5', s: 'c' }]);
        expect(await store.find('missing_collection', { fields: ['n'] })).toEqual([]);
      });

      it('aggregates ranges of typed columns and ids as aggregate does one by one', async () => {
        const cases: Array<[string, Array<{ gte: Scalar; lt: Scalar }>]> = [
          ['id', [{ gte: 't1', lt: 't4' }, { gte: 't0', lt: 'tz' }, { gte: 't5', lt: 't5' }]],
          ['at', [{ gte: '2026-01-01T00:00:00.000Z', lt: '2026-01-01T00:00:02.000Z' }, { gte: '2000', lt: '3000' }]],
          ['n', [{ gte: -5, lt: 2 }, { gte: 2, lt: 100 }]],
        ];
        for (const [field, ranges] of cases) {
          const query = { sum: ['n', 'ms'], min: ['ms'], max: ['n'] };
          const expected = [];
          for (const [i, range] of ranges.entries()) expected.push({ ...(await store.aggregate('typed', { ...query, filter: { [field]: range } }))[0], group: i });
          expect(await store.aggregateRanges('typed', { ...query, field, ranges })).toEqual(expected);
        }
      });

      it('aggregates numbers of typed columns, never booleans or timestamps, and groups by them', async () => {
        expect(await store.aggregate('typed', { sum: ['n', 'ms', 'ok', 'at'], min: ['ms'], max: ['n', 'at'] })).toEqual([
          { group: null, count: 6, sum: { n: 2, ms: 3.25, ok: 0, at: 0 }, min: { ms: -0.25 }, max: { n: 3, at: null } },
        ]);
        expect(await store.aggregate('typed', { groupBy: 'ok', sum: ['n'] })).toEqual([
          { group: null, count: 2, sum: { n: 0 }, min: {}, max: {} },
          { group: false, count: 2, sum: { n: -2 }, min: {}, max: {} },
          { group: true, count: 2, sum: { n: 4 }, min: {}, max: {} },
        ]);
        const byTime = await store.aggregate('typed', { groupBy: 'at', filter: { s: 'b' } });
        expect(byTime.map((r) => [r.group, r.count])).toEqual([
          ['2026-01-01T00:00:00.001Z', 1],
          ['2026-01-02T12:00:00.000Z', 1],
        ]);
      });

      it('refuses a document whose declared field holds another type, writing nothing of the commit', async () => {
        for (const bad of [{ at: '2026-01-01T00:00:00Z' }, { ok: 1 }, { n: 1.5 }, { ms: 'fast' }, { s: 7 }]) {
          await expect(put('typed', [{ id: 'fine', s: 'x' }, { id: 'bad', ...bad }])).rejects.toThrow();
        }
        expect(await store.get('typed', 'fine')).toBeNull();
        expect(await store.count('typed')).toBe(TYPED.length);
      });

      it('keeps integer ids strings, sorting and comparing them as strings', async () => {
        await store.ensureCollection({ name: 'numbered', indexes: [], columns: { id: 'integer', n: 'integer' } });
        await put('numbered', [{ id: '10', n: 10 }, { id: '9', n: 9 }, { id: '-3', n: -3 }, { id: '100' }]);
        expect((await store.find('numbered', {})).map((d) => d.id)).toEqual(['-3', '10', '100', '9']);
        expect(await store.get('numbered', '9')).toStrictEqual({ id: '9', n: 9 });
        expect(await store.get('numbered', '09')).toBeNull();
        expect(await store.get('numbered', '100')).toStrictEqual({ id: '100' });
        expect(ids(await store.find('numbered', { filter: { id: { gt: '1' } } }))).toEqual(['10', '100', '9']);
        expect(ids(await store.find('numbered', { filter: { id: { in: ['9', '10', 'x'] } } }))).toEqual(['10', '9']);
        const page = await store.find('numbered', { sort: [['id', 'asc']], after: ['10'], limit: 2 });
        expect(page.map((d) => d.id)).toEqual(['100', '9']);
        await store.commit([{ op: 'delete', collection: 'numbered', id: '10' }, { op: 'delete', collection: 'numbered', id: 'x' }]);
        expect(await store.count('numbered')).toBe(3);
        await expect(put('numbered', [{ id: 'x1', n: 1 }])).rejects.toThrow();
      });

      it('keeps an id field with its documents, comparing, sorting and walking it as the integer it is', async () => {
        await store.ensureCollection({ name: 'checked', indexes: [{ fields: ['e', 'at', 'seq'] }], columns: { id: 'integer', seq: 'integer', e: 'integer', at: 'timestamp' }, idField: 'seq' });
        const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
        // Ties on `at` between ids that sort differently as strings (9 / 10 / 100).
        const docs: Doc[] = [
          { id: '9', seq: 9, e: 1, at: at(1) },
          { id: '10', seq: 10, e: 1, at: at(1), extra: 'x' },
          { id: '100', seq: 100, e: 1, at: at(1) },
          { id: '-3', seq: -3, e: 1, at: at(0) },
          { id: '11', seq: 11, e: 2, at: at(5) },
          { id: '12', seq: 12, e: 1, at: at(2) },
        ];
        await put('checked', docs);
        for (const doc of docs) expect(await store.get('checked', doc.id)).toStrictEqual(doc);
        expect(await store.getMany('checked', ['100', '9', '09'])).toStrictEqual([docs[2], docs[0]]);
        const sort: Sort = [['at', 'desc'], ['seq', 'desc']];
        const expected = docs.filter((d) => d.e === 1).sort((x, y) => compareTyped(x, y, sort)).map((d) => d.id);
        expect(expected).toEqual(['12', '100', '10', '9', '-3']);
        expect((await store.find('checked', { filter: { e: 1 }, sort })).map((d) => d.id)).toEqual(expected);
        for (const pageSize of [1, 2]) expect((await walk(store, 'checked', { sort, pageSize, filter: { e: 1 } })).map((d) => d.id)).toEqual(expected);
        expect(await findIds(store, 'checked', { filter: { e: 1 }, sort, after: [at(1), 100], limit: 2 })).toEqual(['10', '9']);
        expect(ids(await store.find('checked', { filter: { seq: { gt: 9, lt: 100 } } }))).toEqual(['10', '11', '12']);
        expect(await store.find('checked', { filter: { seq: 10 }, fields: ['seq'] })).toStrictEqual([{ id: '10', seq: 10 }]);
        expect(await store.aggregate('checked', { sum: ['seq'], max: ['seq'] })).toEqual([{ group: null, count: 6, sum: { seq: 139 }, min: {}, max: { seq: 100 } }]);
        // A document whose id is not its id field's string is refused, with nothing of its commit written.
        for (const bad of [{ id: '13', seq: 14 }, { id: '13' }, { id: '13', seq: null }, { id: '013', seq: 13 }]) {
          await expect(put('checked', [{ id: '15', seq: 15 }, bad])).rejects.toThrow();
        }
        expect(await store.get('checked', '15')).toBeNull();
        await store.commit([{ op: 'delete', collection: 'checked', id: '10' }]);
        expect(await store.count('checked', { e: 1 })).toBe(4);
        // An id field needs integer ids and an integer field.
        await expect(store.ensureCollection({ name: 'badid', indexes: [], columns: { seq: 'integer' }, idField: 'seq' })).rejects.toThrow();
        await expect(store.ensureCollection({ name: 'badid', indexes: [], columns: { id: 'integer', seq: 'real' }, idField: 'seq' })).rejects.toThrow();
      });

      it('fences commits on a typed field', async () => {
        await expect(store.commit([{ op: 'put', collection: 'typed', doc: { id: 't9', n: 9 } }], { expect: [{ collection: 'typed', id: 't2', field: 'n', value: 2 }] })).resolves.toBeUndefined();
        await expect(store.commit([{ op: 'put', collection: 'typed', doc: { id: 't9', n: 10 } }], { expect: [{ collection: 'typed', id: 't5', field: 'ok', value: false }] })).rejects.toMatchObject({ name: 'PreconditionFailedError', actual: null });
        expect(await store.get('typed', 't9')).toStrictEqual({ id: 't9', n: 9 });
      });

      it('keeps reading a collection created without columns when it is later ensured with them', async () => {
        await store.ensureCollection({ name: 'plain', indexes: [] });
        await put('plain', [{ id: 'p', at: 'not a timestamp', n: 'x' }]);
        await store.ensureCollection({ name: 'plain', indexes: [{ fields: ['n'] }], columns: { n: 'integer' } });
        expect(await store.get('plain', 'p')).toStrictEqual({ id: 'p', at: 'not a timestamp', n: 'x' });
      });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });
  });
}
