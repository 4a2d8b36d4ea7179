import { rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { AnalyticsQuery } from '../src/analytics/views/rollups/queries.js';
import { GoodChecks } from '../src/analytics/application/good-checks.js';
import { makeWindow } from '../src/analytics/domain/window.js';
import { SloCounter } from '../src/slos/application/slo-figures.js';
import type { SloDefinition } from '../src/slos/application/slo-figures.js';
import { type BenchFigure, type BenchModule, ratio } from './bench.js';
import { build, facts } from './analytics.bench.js';

/**
 * An SLO read (good and total over its 30-day window plus the six burn-rate windows, what
 * `GET /api/public/v2/slos/:id` computes) over 100 endpoints and 1M checks spread over 90 days,
 * beside the team analytics query over the same 30 days on the same read store (the baseline).
 * Cases: the 100 endpoints listed, one project of 10 (its own rollups), and the list with a
 * latency threshold (a count over the raw rows of the window). The store is built as the
 * analytics bench builds it (the rollup projection's domain functions, event log skipped).
 */
const DAY = 86_400_000;
const TEAM = 1;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Timed reads one at a time after a warm-up, with the longest event-loop stall seen meanwhile (1 ms resolution). */
async function time(runs: number, read: () => Promise<unknown>): Promise<{ p50: number; p99: number; stall: number }> {
  await read();
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  await tick(10);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
    await tick(2);
  }
  histogram.disable();
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99), stall: histogram.max / 1e6 };
}

const slosBench: BenchModule = {
  name: 'slos',
  async run({ quick, workDir, log }) {
    const total = quick ? 100_000 : 1_000_000;
    const runs = quick ? 20 : 50;
    const to = Date.parse('2026-01-31T12:34:56.789Z');
    const dir = join(workDir, 'slos');
    log(`slos: building ${total.toLocaleString('en-US')} checks over 90 days, 100 endpoints`);
    const built = await build(dir, total, to);
    const query = new AnalyticsQuery(built.store, facts());
    const counter = new SloCounter(new GoodChecks(built.store));
    const all = Array.from({ length: 100 }, (_, i) => i + 1);
    const base = { window_days: 30, objective_percent: 99.9, latency_threshold_ms: null };
    const cases: Array<[string, SloDefinition]> = [
      ['SLO over 100 listed endpoints', { ...base, endpoint_ids: all, project_id: null }],
      ['SLO over a project (10 endpoints)', { ...base, endpoint_ids: null, project_id: 1 }],
      ['SLO over 100 listed endpoints, latency threshold 300 ms', { ...base, endpoint_ids: all, project_id: null, latency_threshold_ms: 300 }],
    ];
    const window = makeWindow(to - 30 * DAY, to, 48);
    const team = await time(runs, () => query.teamAnalytics(TEAM, window));
    const teamChecks = (await query.teamAnalytics(TEAM, window)).totals;
    log(`slos: team analytics (30 days) p50 ${team.p50.toFixed(1)} ms, p99 ${team.p99.toFixed(1)} ms`);
    const figures: BenchFigure[] = [
      { name: 'team analytics, 30 days (baseline) p50', value: team.p50, unit: 'ms' },
      { name: 'team analytics, 30 days (baseline) p99', value: team.p99, unit: 'ms' },
      { name: 'team analytics, 30 days (baseline), longest event-loop stall', value: team.stall, unit: 'ms' },
    ];
    for (const [name, slo] of cases) {
      const read = await counter.figures(slo, to, false);
      if (slo.endpoint_ids && slo.latency_threshold_ms === null && (read.figures.total !== teamChecks.checks || read.figures.good !== teamChecks.checks - teamChecks.failures)) {
        throw new Error(`${name}: counted ${read.figures.good}/${read.figures.total}, analytics ${teamChecks.checks - teamChecks.failures}/${teamChecks.checks}`);
      }
      const t = await time(runs, () => counter.figures(slo, to, false));
      log(`slos: ${name}: p50 ${t.p50.toFixed(1)} ms, p99 ${t.p99.toFixed(1)} ms, longest stall ${t.stall.toFixed(1)} ms (${read.figures.total.toLocaleString('en-US')} checks in the window)`);
      figures.push(
        { name: `${name} p50`, value: t.p50, unit: 'ms', baseline: { name: 'team analytics p50', value: team.p50 }, ratio: ratio(t.p50, team.p50) },
        { name: `${name} p99`, value: t.p99, unit: 'ms', baseline: { name: 'team analytics p99', value: team.p99 }, ratio: ratio(t.p99, team.p99) },
        { name: `${name}, longest event-loop stall`, value: t.stall, unit: 'ms', baseline: { name: 'team analytics', value: team.stall }, ratio: ratio(t.stall, team.stall) },
      );
    }
    await built.store.close();
    rmSync(dir, { recursive: true, force: true });
    return {
      title: `SLOs: one SLO read (30-day window and six burn windows) over 100 endpoints and ${total >= 1_000_000 ? `${total / 1_000_000}M` : `${total / 1000}k`} checks, beside team analytics`,
      figures,
      notes: [
        `${runs} timed reads each after one warm-up; \`to\` off the minute grid (raw edges read). The 100-endpoint SLO's counts are checked equal to team analytics' over the same window.`,
        'Run on the machine shared by eight engineers (load average about 20 on 2 cores): absolute times are several times a quiet machine\'s; compare the ratios.',
        'An SLO read is seven ranges (window, 5m, 30m, 1h, 6h, 24h, 72h) per listed endpoint, or per project; a latency threshold adds one count of the successful raw rows slower than it per range.',
      ],
    };
  },
};

export default slosBench;
