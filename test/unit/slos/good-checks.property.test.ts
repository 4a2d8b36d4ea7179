import fc from 'fast-check';
import { GoodChecks, type GoodCheckScope } from '../../../src/analytics/application/good-checks.js';
import { GRANULARITY_MS, ceilTo, floorTo } from '../../../src/analytics/domain/range-plan.js';
import { isApplicable, type CheckRecordedData } from '../../../src/checks/domain/check.js';
import { figuresOf, type Counts } from '../../../src/slos/domain/budget.js';
import { BURN_WINDOWS } from '../../../src/slos/domain/events.js';
import { analyticsRollupsProjection } from '../../../src/analytics/views/rollups/projection.js';
import { queryOver } from '../analytics/support/checks.js';
import { applyBatch } from '../analytics/support/memory-store.js';
import { T0, TOPOLOGY, instant, scenario, summaries, toChecks } from '../analytics/support/scenario.js';

/**
 * An SLO's good and total checks, counted through analytics' GoodChecks from the rollups the
 * real projection wrote, equal a brute-force count over the raw checks: any range, any latency
 * threshold, endpoint lists and projects, an endpoint moving between projects, a retention
 * horizon before and after retention summarized the checks behind it.
 */

const HOUR = GRANULARITY_MS.hour;

/** Brute force: the issue's rules read literally, and analytics' whole hours before the horizon. */
function reference(checks: CheckRecordedData[], scope: GoodCheckScope, from: number, to: number, threshold: number | null, horizon: number, projectOf: ReadonlyMap<number, number>): Counts {
  let total = 0;
  let good = 0;
  for (const check of checks) {
    if (!isApplicable(check)) continue;
    const inScope = scope.kind === 'endpoint' ? scope.ids.includes(check.endpoint_id) : projectOf.get(check.endpoint_id) === scope.ids[0];
    if (!inScope) continue;
    const at = Date.parse(check.checked_at);
    const counted = at >= horizon ? from <= at && at < to : ceilTo(from, HOUR) <= at && at < floorTo(Math.min(to, horizon), HOUR);
    if (!counted) continue;
    total++;
    // Before the horizon latencies are gone: success alone.
    if (check.success && (threshold === null || at < horizon || check.latency_ms <= threshold)) good++;
  }
  return { total, good };
}

const scopes = fc.oneof(
  fc.subarray([1, 2, 3], { minLength: 1 }).map((ids): GoodCheckScope => ({ kind: 'endpoint', ids })),
  fc.constantFrom<GoodCheckScope>({ kind: 'project', ids: [1] }, { kind: 'project', ids: [2] }),
);

describe('SLO counts through analytics equal brute force', () => {
  it('for any range, threshold, selection, move and retention horizon', async () => {
    await fc.assert(
      fc.asyncProperty(
        scenario,
        instant,
        scopes,
        fc.option(fc.integer({ min: 0, max: 5000 }), { nil: null }),
        fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
        fc.boolean(),
        fc.option(fc.nat(60), { nil: null }),
        fc.option(fc.nat(), { nil: null }),
        async (s, extra, scope, randomThreshold, horizonDay, prune, moveAt, pick) => {
          // Often exactly one check's latency: "at most the threshold" is good.
          const threshold = pick !== null && s.checks.length > 0 ? s.checks[pick % s.checks.length].latency_ms : randomThreshold;
          // Endpoint 2 may move from project 1 to project 2 among the checks.
          let checks = toChecks(s.checks);
          if (moveAt !== null) checks = checks.map((c, i) => (c.endpoint_id === 2 && i >= moveAt ? { ...c, project_id: 2 } : c));
          const moves = moveAt === null ? [] : [{ before: moveAt, endpoint_id: 2, team_id: 1, project_id: 2 }];
          const { store } = await queryOver(checks, undefined, s.batchSize, undefined, moves);
          const horizon = horizonDay === null ? -Infinity : T0 + horizonDay * 86_400_000;
          if (prune && horizonDay !== null) await applyBatch(store, analyticsRollupsProjection, summaries(checks, horizon));
          const projectOf = new Map(TOPOLOGY.map((t) => [t.endpoint_id, moveAt !== null && t.endpoint_id === 2 ? 2 : t.project_id]));
          const from = T0 + Math.min(s.from, extra);
          const to = T0 + Math.max(s.from, extra) + 1;
          const counted = await new GoodChecks(store, undefined, { rawHorizon: () => horizon }).count(scope, { from, to }, threshold);
          expect(counted).toEqual(reference(checks, scope, from, to, threshold, horizon, projectOf));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('figures follow the issue\'s definitions for any counts and objective', () => {
    const objective = fc.integer({ min: 50_001, max: 99_999 }).map((milli) => milli / 1000);
    const counts = fc.nat(100_000).chain((total) => fc.nat(total).map((good) => ({ total, good })));
    fc.assert(
      fc.property(objective, counts, counts, fc.boolean(), (o, window, burn, alert) => {
        const f = figuresOf(o, window, Object.fromEntries(BURN_WINDOWS.map((w) => [w, burn])) as Record<(typeof BURN_WINDOWS)[number], Counts>, alert);
        expect(f.good).toBe(window.good);
        expect(f.total).toBe(window.total);
        if (window.total === 0) {
          expect(f).toMatchObject({ sli_percent: null, error_budget: { allowed_bad: null, bad: null, remaining_percent: null }, status: 'ok' });
        } else {
          const bad = window.total - window.good;
          const allowed = window.total * (1 - o / 100);
          expect(f.sli_percent!).toBeCloseTo((100 * window.good) / window.total, 2);
          expect(f.error_budget.bad).toBe(bad);
          expect(f.error_budget.allowed_bad!).toBeCloseTo(allowed, 2);
          expect(f.error_budget.remaining_percent!).toBeCloseTo(100 * (1 - bad / allowed), 1);
          if (bad === 0) expect(f.error_budget.remaining_percent).toBe(100);
          const exceeded = bad * 100_000 >= window.total * (100_000 - Math.round(o * 1000));
          expect(f.status).toBe(exceeded ? 'breached' : alert ? 'at_risk' : 'ok');
        }
        for (const w of BURN_WINDOWS) {
          if (burn.total === 0) expect(f.burn_rates[w]).toBeNull();
          else expect(f.burn_rates[w]!).toBeCloseTo((burn.total - burn.good) / burn.total / (1 - o / 100), 2);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
