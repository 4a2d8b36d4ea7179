import fc from 'fast-check';
import { newestFirst, type Walk, type WalkRow } from '../../../src/analytics/application/newest-first.js';

/** A walk over rows as the store would give them: newest first, keyset after (checked_at_ms, check_id). */
function walkOver(rows: WalkRow[], reads: { rows: number }): Walk<WalkRow> {
  const sorted = [...rows].sort((a, b) => b.checked_at_ms - a.checked_at_ms || b.check_id - a.check_id);
  return async (limit, after) => {
    const rest = after ? sorted.filter((r) => r.checked_at_ms < after[0] || (r.checked_at_ms === after[0] && r.check_id < after[1])) : sorted;
    const page = rest.slice(0, limit);
    reads.rows += page.length;
    return page;
  };
}

describe('newest-first merge of several endpoints (a project’s p95 sample)', () => {
  it('takes exactly the `limit` newest rows of all walks, ties on checked_at broken by check id, reading at most limit plus a page per walk', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.integer({ min: 0, max: 2_000 }), { maxLength: 1_500 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 2_000 }),
        async (instantsPerWalk, limit) => {
          let id = 0;
          const walkRows = instantsPerWalk.map((instants) => instants.map((at) => ({ checked_at_ms: at, check_id: ++id })));
          const reads = { rows: 0 };
          const merged = await newestFirst(walkRows.map((rows) => walkOver(rows, reads)), limit);
          const expected = walkRows
            .flat()
            .sort((a, b) => b.checked_at_ms - a.checked_at_ms || b.check_id - a.check_id)
            .slice(0, limit);
          expect(merged).toEqual(expected);
          const page = Math.min(limit, Math.max(256, Math.ceil(limit / walkRows.length)));
          expect(reads.rows).toBeLessThanOrEqual(limit + page * walkRows.length);
        },
      ),
      { numRuns: 100 },
    );
  });
});
