import fc from 'fast-check';
import { healthByProjectOf, type AnalyticsFacts, type LatestApplicableCheck } from '../../../src/analytics/application/analytics-facts.js';
import { P95_SAMPLE_LIMIT, addAccumulator, addCheck, emptyAccumulator, toFigures } from '../../../src/analytics/domain/aggregate.js';
import { GRANULARITY_MS, ceilTo, floorTo } from '../../../src/analytics/domain/range-plan.js';
import { referenceAnalytics, referenceP95 } from '../../../src/analytics/domain/reference.js';
import { bucketRange, makeWindow, type AnalyticsWindow } from '../../../src/analytics/domain/window.js';
import { isApplicable, type CheckRecordedData } from '../../../src/checks/domain/check.js';
import { AnalyticsQuery } from '../../../src/analytics/views/rollups/queries.js';
import { analyticsRollupsProjection } from '../../../src/analytics/views/rollups/projection.js';
import { queryOver } from './support/checks.js';
import { applyBatch } from './support/memory-store.js';
import { T0, TOPOLOGY, facts, scenario, summaries, toChecks } from './support/scenario.js';

/**
 * Endpoint analytics with `?region=` (issue 25): every figure of one probe region, computed from
 * the rows the real projection wrote, equals brute force over that region's checks alone; the
 * figures without a region stay those of every check. Checks come from `local`, `a` and `b` in
 * any order, so endpoints turn from one region to several at any point of a batch; `unused` is
 * a region no check came from.
 */

const REGIONS = ['local', 'a', 'b', 'unused'];
const ENDPOINTS = TOPOLOGY.filter((t) => t.team_id === 1).map((t) => t.endpoint_id);
const HOUR = GRANULARITY_MS.hour;
const DAY = GRANULARITY_MS.day;

function inRegion(check: CheckRecordedData, endpointId: number, region?: string): boolean {
  return isApplicable(check) && check.endpoint_id === endpointId && (region === undefined || (check.region ?? 'local') === region);
}

/** Brute force `current`: the newest applicable check (by checked_at, then id) and the failures in a row ending with it. */
function referenceLatest(checks: CheckRecordedData[], endpointId: number, region?: string): LatestApplicableCheck | null {
  const newestFirst = checks
    .filter((c) => inRegion(c, endpointId, region))
    .sort((a, b) => Date.parse(b.checked_at) - Date.parse(a.checked_at) || b.check_id - a.check_id);
  if (newestFirst.length === 0) return null;
  const failures = newestFirst.findIndex((c) => c.success);
  const [latest] = newestFirst;
  return {
    checked_at: new Date(Date.parse(latest.checked_at)).toISOString(),
    success: latest.success,
    status_code: latest.status_code,
    latency_ms: latest.latency_ms,
    consecutive_failures: failures === -1 ? newestFirst.length : failures,
  };
}

function referenceCurrent(checks: CheckRecordedData[], endpointId: number, region?: string) {
  const latest = referenceLatest(checks, endpointId, region);
  return {
    up: latest?.success ?? null,
    last_check_at: latest?.checked_at ?? null,
    last_status_code: latest?.status_code ?? null,
    last_latency_ms: latest?.latency_ms ?? null,
    consecutive_failures: latest?.consecutive_failures ?? 0,
  };
}

/** The scenario's facts, with each endpoint's latest applicable check as the endpoints view keeps it. */
function factsOver(checks: CheckRecordedData[]): AnalyticsFacts {
  const over: AnalyticsFacts = {
    ...facts,
    endpoints: async (teamId, scope) => (await facts.endpoints(teamId, scope)).map((e) => ({ ...e, latest: referenceLatest(checks, e.endpoint_id) })),
    healthByProject: async (teamId) => healthByProjectOf(await over.endpoints(teamId, { kind: 'team', id: teamId })),
  };
  return over;
}

/**
 * Brute force with a retention horizon: before it, each bucket counts whole hours rounded inward
 * (totals are the sum of the buckets); p95 only when the range starts inside it.
 */
function referenceWithHorizon(checks: CheckRecordedData[], endpointId: number, region: string, window: AnalyticsWindow, horizon: number) {
  const sums = (from: number, to: number) => {
    const acc = emptyAccumulator();
    for (const check of checks) {
      if (!inRegion(check, endpointId, region)) continue;
      const at = Date.parse(check.checked_at);
      const counted = at >= horizon ? from <= at && at < to : ceilTo(from, HOUR) <= at && at < floorTo(Math.min(to, horizon), HOUR);
      if (counted) addCheck(acc, check);
    }
    return acc;
  };
  const total = emptyAccumulator();
  const series = Array.from({ length: window.buckets }, (_, i) => {
    const { start, end } = bucketRange(window, i);
    const bucket = sums(start, end);
    addAccumulator(total, bucket);
    const { checks: n, failures, uptime_percent, avg_latency_ms } = toFigures(bucket);
    return { bucket_start: new Date(start).toISOString(), checks: n, failures, uptime_percent, avg_latency_ms };
  });
  const p95 = window.from < horizon ? null : referenceP95(checks, { kind: 'endpoint', id: endpointId, region }, window.from, window.to);
  return { totals: { ...toFigures(total), p95_latency_ms: p95 }, series };
}

describe('endpoint analytics of one probe region equal brute force over that region’s checks', () => {
  it('for totals, p95, series and current of every region (and none), checks redelivered, in any batches', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const checks = toChecks(s.checks);
        const delivered = [...checks, ...checks.slice(0, s.redeliver)];
        const { query } = await queryOver(delivered, factsOver(checks), s.batchSize);
        const window = makeWindow(T0 + s.from, T0 + s.from + s.length, s.buckets);
        for (const endpointId of ENDPOINTS) {
          for (const region of [undefined, ...REGIONS]) {
            const actual = (await query.endpointAnalytics(1, endpointId, window, region))!;
            const expected = referenceAnalytics(checks, { kind: 'endpoint', id: endpointId, region }, window);
            expect({ region, totals: actual.totals, series: actual.series, current: actual.current }).toEqual({
              region,
              totals: expected.totals,
              series: expected.series,
              current: referenceCurrent(checks, endpointId, region),
            });
          }
        }
      }),
      { numRuns: 100 },
    );
  }, 180_000);

  it('past the retention horizon too, before and after retention summarized the checks behind it', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.integer({ min: 0, max: 3 }), fc.boolean(), async (s, horizonDay, prune) => {
        const checks = toChecks(s.checks);
        const { store } = await queryOver(checks, facts, s.batchSize);
        const horizon = T0 + horizonDay * DAY;
        if (prune) await applyBatch(store, analyticsRollupsProjection, summaries(checks, horizon));
        const query = new AnalyticsQuery(store, factsOver(checks), undefined, { rawHorizon: () => horizon });
        const window = makeWindow(T0 + s.from, T0 + s.from + s.length, s.buckets);
        for (const endpointId of ENDPOINTS) {
          for (const region of REGIONS) {
            const actual = (await query.endpointAnalytics(1, endpointId, window, region))!;
            expect({ region, totals: actual.totals, series: actual.series }).toEqual({ region, ...referenceWithHorizon(checks, endpointId, region, window, horizon) });
            // The region's newest check, whether its raw row is kept or only a summary speaks of it.
            const { consecutive_failures: _failures, ...latest } = actual.current;
            const { consecutive_failures: _expected, ...expectedLatest } = referenceCurrent(checks, endpointId, region);
            expect({ region, latest }).toEqual({ region, latest: expectedLatest });
          }
        }
      }),
      { numRuns: 100 },
    );
  }, 180_000);

  it('is not vacuous: the generated scenarios have endpoints with checks from several regions', () => {
    const samples = fc.sample(scenario, { numRuns: 50, seed: 7 });
    const several = samples.filter((s) => ENDPOINTS.some((e) => new Set(toChecks(s.checks).filter((c) => inRegion(c, e)).map((c) => c.region)).size > 1));
    expect(several.length).toBeGreaterThanOrEqual(10);
    expect(P95_SAMPLE_LIMIT).toBeGreaterThan(60);
  });
});
