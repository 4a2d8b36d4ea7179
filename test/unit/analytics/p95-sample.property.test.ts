import fc from 'fast-check';
import { P95_SAMPLE_LIMIT } from '../../../src/analytics/domain/aggregate.js';
import { referenceP95 } from '../../../src/analytics/domain/reference.js';
import { AnalyticsQuery, type AnalyticsCollections } from '../../../src/analytics/views/rollups/queries.js';
import { RAW_CHECKS_COLLECTION, ROLLUPS_COLLECTION, type RawCheckRow } from '../../../src/analytics/views/rollups/view.js';
import type { CheckRecordedData } from '../../../src/checks/domain/check.js';
import type { AnalyticsScope } from '../../../src/analytics/application/analytics-facts.js';
import { check, queryOver } from './support/checks.js';
import { T0, facts } from './support/scenario.js';

/**
 * Rollups v15 has no project index: a project's and a team's p95 sample (the newest
 * P95_SAMPLE_LIMIT successful applicable checks of the range) is read in spans back from the
 * range's end, by key range or through the endpoint index (`RawSpans`), no longer walked newest
 * first. It must be the same sample: compared with all rows sorted newest first (checked_at,
 * then check id), over more successful checks than the limit, with many checks sharing their
 * instant, check ids out of time order, and retention having cut the oldest raw rows.
 */

const PROPERTY_TIMEOUT_MS = 600_000;
const SPAN_MS = 2 * 86_400_000;

/** Deterministic numbers from a seed (the checks are too many for fast-check to shrink one by one). */
function numbers(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Case {
  seed: number;
  count: number;
  /** Checks share instants on this grid (1 ms: few ties; 5 s: many). */
  grainMs: number;
  /** Most checks in the newest part of the span (a rate that changes), or spread evenly. */
  burst: boolean;
  failurePercent: number;
  /** Fraction of the span cut by retention (raw rows before it deleted, the horizon there). */
  cut: number;
  from: number;
  to: number;
}

const cases = fc.record({
  seed: fc.integer(),
  count: fc.integer({ min: P95_SAMPLE_LIMIT + 2_000, max: P95_SAMPLE_LIMIT + 8_000 }),
  grainMs: fc.constantFrom(1, 1_000, 5_000),
  burst: fc.boolean(),
  failurePercent: fc.integer({ min: 0, max: 10 }),
  cut: fc.constantFrom(0, 0, 0.3),
  from: fc.double({ min: 0, max: 0.5, noNaN: true }),
  to: fc.double({ min: 0.8, max: 1.1, noNaN: true }),
});

function checksOf(c: Case): CheckRecordedData[] {
  const next = numbers(c.seed);
  const checks: CheckRecordedData[] = [];
  for (let i = 0; i < c.count; i++) {
    const position = c.burst && next() < 0.7 ? 0.8 + next() * 0.2 : next();
    const at = T0 + Math.floor((position * SPAN_MS) / c.grainMs) * c.grainMs;
    // Endpoints 1 and 2 are project 1, 3 project 2 (team 1), 4 project 3 (team 2): TOPOLOGY.
    // Most in project 1 and team 1, so that their samples often pass the limit.
    const pick = next();
    const endpoint = pick < 0.6 ? 1 : pick < 0.75 ? 2 : pick < 0.9 ? 3 : 4;
    const project = endpoint <= 2 ? 1 : endpoint === 3 ? 2 : 3;
    const team = endpoint <= 3 ? 1 : 2;
    // Ids in the order generated, times at random: ids out of time order, as imports make them.
    checks.push(
      check({
        endpoint_id: endpoint,
        project_id: project,
        team_id: team,
        checked_at: new Date(at).toISOString(),
        success: next() * 100 >= c.failurePercent,
        latency_ms: Math.floor(next() * 2_000),
      }),
    );
  }
  return checks;
}

const SCOPES: AnalyticsScope[] = [
  { kind: 'project', id: 1 },
  { kind: 'project', id: 2 },
  { kind: 'team', id: 1 },
];

/** How the query reads a project's rows: its own choice, always by key range, always through the endpoint index, and a v14 generation's project filter. */
const READS: Array<{ name: string; keysPerSeek?: number; checkMinutes?: null }> = [
  { name: 'as chosen' },
  { name: 'key ranges', keysPerSeek: Infinity },
  { name: 'endpoint index', keysPerSeek: 0 },
  { name: 'no map (v14)', checkMinutes: null },
];

describe('p95 of a project or team without the project index (rollups v15)', () => {
  it('takes the newest P95_SAMPLE_LIMIT successful checks of the range, as all rows sorted newest first do', async () => {
    let overTheLimit = 0;
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const checks = checksOf(c);
        const { store } = await queryOver(checks, facts, 500);
        const horizon = c.cut === 0 ? -Infinity : T0 + Math.floor(c.cut * SPAN_MS);
        const kept = checks.filter((k) => Date.parse(k.checked_at) >= horizon);
        if (c.cut > 0) {
          // Retention: the raw rows before the horizon leave (the map keeps its ranges).
          const rows = [...(store.collections.get(RAW_CHECKS_COLLECTION)?.values() ?? [])] as unknown as RawCheckRow[];
          await store.commit(rows.filter((row) => row.checked_at_ms < horizon).map((row) => ({ op: 'delete', collection: RAW_CHECKS_COLLECTION, id: row.id })));
        }
        const from = T0 + Math.floor(c.from * SPAN_MS);
        const to = T0 + Math.floor(c.to * SPAN_MS) + 1;
        for (const scope of SCOPES) {
          const sample = referenceSample(kept, scope, from, to);
          if (sample > P95_SAMPLE_LIMIT) overTheLimit++;
          const expected = from < horizon && sample < P95_SAMPLE_LIMIT ? null : referenceP95(kept, scope, from, to);
          for (const read of READS) {
            const collections: AnalyticsCollections = { rollups: ROLLUPS_COLLECTION, checks: RAW_CHECKS_COLLECTION, ...(read.checkMinutes === null ? { checkMinutes: null } : {}) };
            const query = new AnalyticsQuery(store, facts, collections, { rawHorizon: () => horizon, keysPerSeek: read.keysPerSeek });
            const actual = await query.computeP95(scope, from, to);
            if (actual !== expected) throw new Error(`${scope.kind} ${scope.id}, ${read.name}: p95 ${actual}, expected ${expected} (${sample} successful checks in range)`);
          }
        }
      }),
      // One case sure to pass the limit (project 1 and team 1 hold most of 18,000 checks), beside the random ones.
      { numRuns: 6, examples: [[{ seed: 1, count: P95_SAMPLE_LIMIT + 8_000, grainMs: 1_000, burst: false, failurePercent: 0, cut: 0, from: 0, to: 1 }]] },
    );
    // The cases cut samples at the limit, not only read every check of a range.
    expect(overTheLimit).toBeGreaterThan(0);
  }, PROPERTY_TIMEOUT_MS);

});

/** Successful applicable checks of the scope in [from, to) (TOPOLOGY: endpoints never moved here). */
function referenceSample(checks: CheckRecordedData[], scope: AnalyticsScope, from: number, to: number): number {
  return checks.filter((k) => {
    const at = Date.parse(k.checked_at);
    const inScope = scope.kind === 'team' ? k.team_id === scope.id : k.project_id === scope.id;
    return k.success && inScope && at >= from && at < to;
  }).length;
}
