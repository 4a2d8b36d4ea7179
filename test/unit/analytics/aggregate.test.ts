import fc from 'fast-check';
import { p95, roundRatio } from '../../../src/analytics/domain/aggregate.js';
import { makeWindow } from '../../../src/analytics/domain/window.js';
import { check, noFacts, queryOver } from './support/checks.js';
import { MemoryReadStore } from './support/memory-store.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';

const T = (iso: string) => Date.parse(iso);
const TEAM = { kind: 'team', id: 1 } as const;
const FROM = T('2026-03-01T00:00:00Z');
const TO = T('2026-03-01T01:00:00Z');

describe('analytics totals', () => {
  it('reports zero counts and null figures (no data, not zero) for a range without applicable checks', async () => {
    const { query } = await queryOver([check({ checked_at: '2026-03-01T02:00:00Z' })]);
    expect(await query.computeTotals(TEAM, { from: FROM, to: TO })).toEqual({
      checks: 0,
      failures: 0,
      uptime_percent: null,
      avg_latency_ms: null,
      min_latency_ms: null,
      max_latency_ms: null,
      p95_latency_ms: null,
    });
  });

  it('leaves manual and suppressed checks out of every figure', async () => {
    const { query } = await queryOver([
      check({ checked_at: '2026-03-01T00:10:00Z', latency_ms: 200 }),
      check({ checked_at: '2026-03-01T00:11:00Z', source: 'manual', success: false, latency_ms: 9000 }),
      check({ checked_at: '2026-03-01T00:12:00Z', alert_suppressed: true, success: false, latency_ms: 9000 }),
    ]);
    const totals = await query.computeTotals(TEAM, { from: FROM, to: TO });
    expect(totals).toMatchObject({ checks: 1, failures: 0, uptime_percent: 100, max_latency_ms: 200, p95_latency_ms: 200 });
  });

  it('counts failed checks in average, minimum and maximum latency, but not in p95', async () => {
    const { query } = await queryOver([
      check({ checked_at: '2026-03-01T00:10:00Z', latency_ms: 100 }),
      check({ checked_at: '2026-03-01T00:20:00Z', latency_ms: 101 }),
      check({ checked_at: '2026-03-01T00:30:00.250Z', success: false, latency_ms: 30_000 }),
    ]);
    expect(await query.computeTotals(TEAM, { from: FROM, to: TO })).toEqual({
      checks: 3,
      failures: 1,
      uptime_percent: 66.667,
      avg_latency_ms: 10_067,
      min_latency_ms: 100,
      max_latency_ms: 30_000,
      p95_latency_ms: 101,
    });
  });

  it('reports 0% uptime and the measured latency when every check failed; p95 has no sample and is null', async () => {
    const { query } = await queryOver([check({ checked_at: '2026-03-01T00:10:00Z', success: false, latency_ms: 5 })]);
    const totals = await query.computeTotals(TEAM, { from: FROM, to: TO });
    expect(totals).toMatchObject({ checks: 1, failures: 1, uptime_percent: 0, avg_latency_ms: 5, p95_latency_ms: null });
  });

  it('separates scopes: another endpoint, project or team does not leak in', async () => {
    const members = [
      { endpoint_id: 1, project_id: 1 },
      { endpoint_id: 2, project_id: 1 },
      { endpoint_id: 3, project_id: 2 },
      { endpoint_id: 4, project_id: 3 },
    ];
    const facts = { ...noFacts, membersOf: async (ids: number[]) => members.filter((m) => ids.includes(m.project_id)) };
    const { query } = await queryOver(
      [
        check({ checked_at: '2026-03-01T00:10:00Z' }),
        check({ checked_at: '2026-03-01T00:10:00Z', endpoint_id: 2 }),
        check({ checked_at: '2026-03-01T00:10:00Z', endpoint_id: 3, project_id: 2 }),
        check({ checked_at: '2026-03-01T00:10:00Z', endpoint_id: 4, project_id: 3, team_id: 2 }),
      ],
      facts,
    );
    const range = { from: FROM, to: TO };
    expect((await query.computeTotals({ kind: 'endpoint', id: 1 }, range)).checks).toBe(1);
    expect((await query.computeTotals({ kind: 'project', id: 1 }, range)).checks).toBe(2);
    expect((await query.computeTotals(TEAM, range)).checks).toBe(3);
  });
});

describe('analytics range and bucket edges', () => {
  it('includes a check exactly at from and excludes one exactly at to, to the millisecond', async () => {
    const from = T('2026-03-01T00:00:00.250Z');
    const to = T('2026-03-01T00:30:00.750Z');
    const { query } = await queryOver([
      check({ checked_at: '2026-03-01T00:00:00.249Z' }),
      check({ checked_at: '2026-03-01T00:00:00.250Z' }),
      check({ checked_at: '2026-03-01T00:30:00.749Z' }),
      check({ checked_at: '2026-03-01T00:30:00.750Z' }),
    ]);
    expect((await query.computeTotals(TEAM, { from, to })).checks).toBe(2);
  });

  it('counts every check of a busy edge minute, beyond one store page', async () => {
    const minute = T('2026-03-01T00:05:00Z');
    const busy = Array.from({ length: 6000 }, (_, i) => check({ checked_at: new Date(minute + i * 10).toISOString() }));
    const { query } = await queryOver(busy, undefined, 3000);
    // from sits mid-minute: the first 3000 checks (00:05:00.000-00:05:29.990) are before it
    const totals = await query.computeTotals(TEAM, { from: minute + 30_000, to: TO });
    expect(totals.checks).toBe(3000);
  });

  it('puts a check exactly at a bucket start into that bucket, not the one before', async () => {
    const window = makeWindow(FROM, TO, 4); // 15-minute buckets
    const { query } = await queryOver([
      check({ checked_at: '2026-03-01T00:14:59.999Z', latency_ms: 10 }),
      check({ checked_at: '2026-03-01T00:15:00.000Z', success: false, latency_ms: 20 }),
    ]);
    const series = await query.computeSeries(TEAM, window.from, window.to, window.bucket_seconds, window.buckets);
    expect(series).toEqual([
      { bucket_start: '2026-03-01T00:00:00.000Z', checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 10 },
      { bucket_start: '2026-03-01T00:15:00.000Z', checks: 1, failures: 1, uptime_percent: 0, avg_latency_ms: 20 },
      { bucket_start: '2026-03-01T00:30:00.000Z', checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null },
      { bucket_start: '2026-03-01T00:45:00.000Z', checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null },
    ]);
  });

  it('stops the last bucket at to, even though bucket_seconds reaches past it', async () => {
    const to = T('2026-03-01T00:10:00Z');
    const window = makeWindow(FROM, to, 3); // 200 s buckets; the last covers 400-600 s only
    const { query } = await queryOver([
      check({ checked_at: '2026-03-01T00:09:59Z' }),
      check({ checked_at: '2026-03-01T00:10:00Z' }),
      check({ checked_at: '2026-03-01T00:10:30Z' }),
    ]);
    const series = await query.computeSeries(TEAM, window.from, window.to, window.bucket_seconds, window.buckets);
    expect(series.map((s) => s.checks)).toEqual([0, 0, 1]);
  });
});

describe('analytics rounding', () => {
  it('rounds half up, exactly, at 3 decimals for uptime and 2 for latency', () => {
    expect(roundRatio(2 * 100, 3, 3)).toBe(66.667);
    expect(roundRatio(1 * 100, 64, 3)).toBe(1.563); // 1.5625
    expect(roundRatio(63 * 100, 64, 3)).toBe(98.438); // 98.4375
    expect(roundRatio(1001, 2000, 3)).toBe(0.501); // 0.5005, where float rounding gives 0.5
    expect(roundRatio(201, 2, 2)).toBe(100.5);
    expect(roundRatio(1, 200, 2)).toBe(0.01); // 0.005
  });

  it('rounds every integer ratio as exact integer arithmetic does, ties and sums near 2^53 included', () => {
    const exact = (numerator: number, denominator: number, decimals: number) => {
      const scale = 10n ** BigInt(decimals);
      const den = BigInt(denominator);
      return Number((2n * BigInt(numerator) * scale + den) / (2n * den)) / Number(scale);
    };
    const ratio = fc.oneof(
      // Uptime and averages as rollups make them: checks up to billions, latency sums up to 2^53.
      fc.tuple(fc.integer({ min: 1, max: 4_000_000_000 }), fc.integer({ min: 0, max: 100 })).map(([checks, share]) => [Math.floor((checks * share) / 100) * 100, checks] as const),
      fc.tuple(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.integer({ min: 1, max: 2_000_000_000 })).map(([sum, checks]) => [sum, checks] as const),
      // Exact ties (x.xx5 and x.xxx5): an odd multiple of half a unit of the last place.
      fc.tuple(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 1_000_000 })).map(([units, d]) => [(2 * units + 1) * d, 2000 * d] as const),
    );
    fc.assert(
      fc.property(ratio, fc.constantFrom(2, 3), ([numerator, denominator], decimals) => {
        expect(roundRatio(numerator, denominator, decimals)).toBe(exact(numerator, denominator, decimals));
      }),
      { numRuns: 5000 },
    );
  });
});

describe('p95', () => {
  it('is the nearest rank: sorted ascending, index ceil(0.95 n) - 1', () => {
    expect(p95([5])).toBe(5);
    expect(p95(Array.from({ length: 20 }, (_, i) => 20 - i))).toBe(19);
    expect(p95(Array.from({ length: 21 }, (_, i) => i + 1))).toBe(20);
    expect(p95([])).toBeNull();
  });

  it('uses only the 10,000 most recent successful checks in the range', async () => {
    const start = T('2026-03-01T00:00:00Z');
    const older = Array.from({ length: 1000 }, (_, i) =>
      check({ checked_at: new Date(start + i * 100).toISOString(), latency_ms: 1 }),
    );
    const newer = Array.from({ length: 10_000 }, (_, i) =>
      check({ checked_at: new Date(start + 200_000 + i * 100).toISOString(), latency_ms: i + 1 }),
    );
    const failures = Array.from({ length: 50 }, (_, i) =>
      check({ checked_at: new Date(start + 1_300_000 + i).toISOString(), success: false, latency_ms: 1 }),
    );
    const { query } = await queryOver([...older, ...newer, ...failures], undefined, 2000);
    // Over all 11,000 successes the answer would be 9450; over the newest 10,000 it is 9500.
    expect(await query.computeP95(TEAM, start, start + 3_600_000)).toBe(9500);
  });

  it.each([
    ['memory', () => new MemoryReadStore()],
    ['SQLite', () => new SqliteReadStore(':memory:')],
  ])("takes a team's newest 10,000 successful checks across its projects, by time (%s store)", async (_name, makeStore) => {
    // The team's raw rows are read through its projects': project 2 holds the older 6,000
    // checks (slots 0-5,999), project 1 the newer 8,000 (slots 6,000-13,999); the latency is
    // 14,000 - slot. The newest 10,000 are slots 4,000-13,999 (latencies 1-10,000: p95 9,500); an
    // even share of 5,000 per project would give 12,500, every check 13,300, and each project's
    // first page of 1,000 alone 8,900.
    const start = T('2026-03-01T00:00:00Z');
    const at = (slot: number) => new Date(start + slot * 100).toISOString();
    const older = Array.from({ length: 6000 }, (_, slot) => check({ checked_at: at(slot), latency_ms: 14_000 - slot, endpoint_id: 3, project_id: 2 }));
    const newer = Array.from({ length: 8000 }, (_, i) => check({ checked_at: at(6000 + i), latency_ms: 14_000 - (6000 + i) }));
    const { store, query } = await queryOver([...older, ...newer], undefined, 2000, makeStore());
    try {
      expect(await query.computeP95(TEAM, start, start + 3_600_000)).toBe(9500);
      expect(await query.computeP95({ kind: 'project', id: 2 }, start, start + 3_600_000)).toBe(13_700);
    } finally {
      await store.close();
    }
  });
});
