import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { GoodChecks } from '../src/analytics/application/good-checks.js';
import { Slices } from '../src/analytics/application/slices.js';
import { SloCounter } from '../src/slos/application/slo-figures.js';
import { readSloGauges, type SloGaugeReading } from '../src/slos/application/slo-workers.js';
import { presentSlo, type SloObject } from '../src/slos/views/slos/queries.js';
import type { SloDoc } from '../src/slos/views/slos/view.js';
import { type BenchFigure, type BenchModule, ratio } from './bench.js';
import { build } from './analytics.bench.js';

/**
 * The SLO gauges' reading per `/metrics` scrape (`readSloGauges`: every live SLO's window and
 * six burn windows) with 200 and 1,000 SLOs over imported history, each SLO over one of 100
 * endpoints, alternating in the same run with two baselines: the same reading with analytics'
 * slices off (`Slices` whose slice never ends: the reading in one task) and an idle loop for as
 * long as a reading takes (what the shared machine alone costs). Figure: the longest
 * main-thread stretch while a reading runs (event-loop delay max, 1 ms resolution).
 */
const TEAM = 1;
const ENDPOINTS = 100;

function slosOver(count: number): SloDoc[] {
  return Array.from({ length: count }, (_, i) => ({
    id: String(i + 1),
    slo_id: i + 1,
    team_id: TEAM,
    name: `slo ${i + 1}`,
    endpoint_ids: [(i % ENDPOINTS) + 1],
    project_id: null,
    objective_percent: 99.9,
    window_days: 30,
    latency_threshold_ms: null,
    alerts: { page: null, ticket: null },
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  }));
}

function source(docs: SloDoc[], counter: SloCounter) {
  return {
    all: async () => docs,
    present: async (doc: SloDoc, now: number): Promise<SloObject> => {
      const { from, to, figures } = await counter.figures(doc, now, false);
      return presentSlo(doc, from, to, figures);
    },
  };
}

interface Measured {
  stall: number;
  ms: number;
  readings: SloGaugeReading[];
}

async function measured(read: () => Promise<SloGaugeReading[]>): Promise<Measured> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 10));
  const started = performance.now();
  const readings = await read();
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 5));
  histogram.disable();
  return { stall: histogram.max / 1e6, ms, readings };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const sloGaugesBench: BenchModule = {
  name: 'slo-gauges',
  async run({ quick, workDir, log }) {
    const total = quick ? 100_000 : 1_000_000;
    const rounds = quick ? 3 : 5;
    const to = Date.now();
    const dir = join(workDir, 'slo-gauges');
    log(`slo-gauges: building ${total.toLocaleString('en-US')} checks over 90 days, ${ENDPOINTS} endpoints`);
    const built = await build(dir, total, to);
    const counter = new SloCounter(new GoodChecks(built.store));
    const unsliced = new SloCounter(new GoodChecks(built.store, undefined, {}, new Slices(Infinity)));
    const figures: BenchFigure[] = [];
    for (const count of [200, 1_000]) {
      const docs = slosOver(count);
      const sliced = source(docs, counter);
      const oneTask = source(docs, unsliced);
      await readSloGauges(sliced, to);
      const runs = { one: [] as Measured[], sliced: [] as Measured[], idle: [] as Measured[] };
      for (let round = 0; round < rounds; round++) {
        const one = await measured(() => readSloGauges(oneTask, to));
        const built = await measured(() => readSloGauges(sliced, to));
        if (JSON.stringify(one.readings) !== JSON.stringify(built.readings)) throw new Error(`${count} SLOs: the sliced reading differs from the one-task reading`);
        runs.one.push(one);
        runs.sliced.push(built);
        runs.idle.push(await measured(async () => (await new Promise((resolve) => setTimeout(resolve, built.ms)), [])));
      }
      const stall = { one: median(runs.one.map((r) => r.stall)), sliced: median(runs.sliced.map((r) => r.stall)), idle: median(runs.idle.map((r) => r.stall)) };
      const ms = { one: median(runs.one.map((r) => r.ms)), sliced: median(runs.sliced.map((r) => r.ms)) };
      log(`slo-gauges: ${count} SLOs: longest stretch: one task ${stall.one.toFixed(1)} ms, sliced ${stall.sliced.toFixed(1)} ms, idle loop ${stall.idle.toFixed(1)} ms; reading ${ms.one.toFixed(0)} / ${ms.sliced.toFixed(0)} ms (load ${loadavg()[0].toFixed(1)})`);
      figures.push(
        { name: `${count} SLOs: longest main-thread stretch during a reading, as built (sliced)`, value: stall.sliced, unit: 'ms', baseline: { name: 'slices off (one task)', value: stall.one }, ratio: ratio(stall.sliced, stall.one) },
        { name: `${count} SLOs: longest main-thread stretch during a reading, as built, beside an idle loop`, value: stall.sliced, unit: 'ms', baseline: { name: 'idle loop as long', value: stall.idle }, ratio: ratio(stall.sliced, stall.idle) },
        { name: `${count} SLOs: reading duration, as built`, value: ms.sliced, unit: 'ms', baseline: { name: 'slices off', value: ms.one }, ratio: ratio(ms.sliced, ms.one) },
      );
    }
    await built.store.close();
    rmSync(dir, { recursive: true, force: true });
    return {
      title: `SLO gauges: one /metrics reading with 200 and 1,000 SLOs over ${total >= 1_000_000 ? `${total / 1_000_000}M` : `${total / 1000}k`} imported checks, as built beside slices off and an idle loop`,
      figures,
      notes: [
        `Each SLO over one of ${ENDPOINTS} endpoints, 30-day window; medians of ${rounds} alternating rounds (slices off, as built, idle loop). The two readings are checked equal.`,
        `Load average at the end of the run: ${loadavg().map((l) => l.toFixed(1)).join(', ')} (2 cores, shared machine): compare the ratios.`,
      ],
    };
  },
};

export default sloGaugesBench;
