import fc from 'fast-check';
import { referenceFigures, referenceP95 } from '../../../src/analytics/domain/reference.js';
import { queryOver } from './support/checks.js';
import { CURRENT_PROJECTS_AFTER_MOVE, MOVED_TOPOLOGY, T0, expectObjectMatchesReference, facts, factsOf, instant, scenario, toChecks } from './support/scenario.js';

/**
 * The rollup + range-plan computation must equal brute force for every figure, whatever the
 * checks, the range (aligned or not, to the millisecond) and the bucket count.
 */

describe('analytics from rollups equals brute force', () => {
  it('for totals, p95, series and comparison rows of team, project and endpoint analytics', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const checks = toChecks(s.checks);
        // A check delivered again (same check id) must not count twice.
        const delivered = [...checks, ...checks.slice(0, s.redeliver)];
        const { query } = await queryOver(delivered, facts, s.batchSize);
        await expectObjectMatchesReference(query, checks, s);
      }),
      { numRuns: 150 },
    );
  });

  it('after an endpoint moved: every figure of a project counts its endpoints’ checks where they are now', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        // Checks recorded while endpoint 2 was in project 1; it is in project 2 now.
        const checks = toChecks(s.checks);
        const { query } = await queryOver(checks, factsOf(MOVED_TOPOLOGY), s.batchSize);
        await expectObjectMatchesReference(query, checks, s, CURRENT_PROJECTS_AFTER_MOVE);
      }),
      { numRuns: 100 },
    );
  });

  it('for computeTotals over any sub-range of any scope', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, instant, async (s, extra) => {
        const checks = toChecks(s.checks);
        const { query } = await queryOver(checks, facts, s.batchSize);
        const from = T0 + Math.min(s.from, extra);
        const to = T0 + Math.max(s.from, extra) + 1;
        expect(await query.computeTotals(s.scope, { from, to })).toEqual({
          ...referenceFigures(checks, s.scope, from, to),
          p95_latency_ms: referenceP95(checks, s.scope, from, to),
        });
      }),
      { numRuns: 150 },
    );
  });
});
