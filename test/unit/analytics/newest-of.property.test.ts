import fc from 'fast-check';
import { newestOf, type NewestFirstWalk, type Placed } from '../../../src/analytics/views/rollups/queries.js';

/**
 * A team's p95 sample merges two keyset walks (its primary project's rows and the rest of its
 * rows): the merge must give exactly the newest rows of the union, whatever the page size, and
 * read no walk further than it needs.
 */
describe('the newest rows of disjoint walks, merged', () => {
  const newestFirst = (a: Placed, b: Placed) => b.checked_at_ms - a.checked_at_ms || b.check_id - a.check_id;
  /** A walk over `rows` as the store reads it: newest first, after a keyset, at most `limit`. */
  const walkOf = (rows: Placed[], reads: number[]): NewestFirstWalk => {
    const sorted = [...rows].sort(newestFirst);
    return async (after, limit) => {
      const from = after === undefined ? 0 : sorted.findIndex((row) => newestFirst(row, { checked_at_ms: after[0], check_id: after[1] }) > 0);
      const page = from < 0 ? [] : sorted.slice(from, from + limit);
      reads.push(page.length);
      return page;
    };
  };

  it('equals the newest `limit` rows of the union, reading at most `limit` rows and a page per walk', async () => {
    // Rows with distinct ids, checked_at drawn from a few instants (ties broken by id), dealt to walks.
    const rows = fc.uniqueArray(fc.record({ check_id: fc.nat(500), checked_at_ms: fc.nat(8), walk: fc.nat(2) }), { selector: (row) => row.check_id, maxLength: 60 });
    await fc.assert(
      fc.asyncProperty(rows, fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 70 }), async (all, walkCount, page, limit) => {
        const reads: number[] = [];
        const walks = Array.from({ length: walkCount }, (_, w) => walkOf(all.filter((row) => row.walk % walkCount === w).map(({ check_id, checked_at_ms }) => ({ check_id, checked_at_ms })), reads));
        const merged = await newestOf(walks, limit, page);
        const expected = all.map(({ check_id, checked_at_ms }) => ({ check_id, checked_at_ms })).sort(newestFirst).slice(0, limit);
        expect(merged).toEqual(expected);
        expect(reads.reduce((n, read) => n + read, 0)).toBeLessThanOrEqual(limit + walkCount * page);
      }),
      { numRuns: 300 },
    );
  });
});
