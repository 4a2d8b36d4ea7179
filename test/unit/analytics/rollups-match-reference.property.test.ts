import fc from 'fast-check';
import { referenceFigures, referenceP95 } from '../../../src/analytics/domain/reference.js';
import { queryOver } from './support/checks.js';
import { CURRENT_PROJECTS_AFTER_MOVE, MOVED_TOPOLOGY, T0, expectObjectMatchesReference, facts, factsOf, instant, scenario, toChecks } from './support/scenario.js';

/**
 * The rollup + range-plan computation must equal brute force for every figure, whatever the
 * checks, the range (aligned or not, to the millisecond) and the bucket count.
 */

/**
 * Each property builds 100-150 stores: about 5 s on an idle 2-core machine, over jest's 30 s on a
 * loaded one (CI once). The cases are the point, so the deadline is long, not the runs few.
 */
const PROPERTY_TIMEOUT_MS = 180_000;

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
  }, PROPERTY_TIMEOUT_MS);

  it('after an endpoint moved: every figure of a project counts its endpoints’ checks where they are now', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.nat(60), fc.boolean(), async (s, moveAt, andBack) => {
        // Endpoint 2 moves from project 1 to project 2 somewhere among the checks (its checks
        // after the move are recorded under project 2), and possibly back to 1 and on to 2
        // again, inside one batch or across batches.
        const checks = toChecks(s.checks).map((c, i) => (c.endpoint_id === 2 && i >= moveAt ? { ...c, project_id: 2 } : c));
        const back = Math.min(moveAt + 3, checks.length);
        const moves = [
          { before: moveAt, endpoint_id: 2, team_id: 1, project_id: 2 },
          ...(andBack ? [{ before: back, endpoint_id: 2, team_id: 1, project_id: 1 }, { before: back + 2, endpoint_id: 2, team_id: 1, project_id: 2 }] : []),
        ];
        const { query } = await queryOver(checks, factsOf(MOVED_TOPOLOGY), s.batchSize, undefined, moves);
        await expectObjectMatchesReference(query, checks, s, CURRENT_PROJECTS_AFTER_MOVE);
      }),
      { numRuns: 100 },
    );
  }, PROPERTY_TIMEOUT_MS);

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
  }, PROPERTY_TIMEOUT_MS);
});
