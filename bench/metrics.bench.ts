import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import type { EventStore, NewEvent } from '../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../src/platform/event-store/sqlite/sqlite-event-store.js';
import { instrumentedEventStore } from '../src/platform/metrics/instrumented-event-store.js';
import { installMetrics } from '../src/platform/metrics/metrics-http.js';
import { Metrics } from '../src/platform/metrics/metrics.js';
import { type BenchFigure, type BenchModule } from './bench.js';

/**
 * What the metrics cost where they are counted on every call: an HTTP request through the
 * onResponse hook (a Fastify route with and without `installMetrics`, loaded by autocannon), and
 * an event append through the instrumented event store (against the same SQLite store bare).
 * Baselines are measured in the same run, alternating, so the ratios say the overhead.
 */
interface CannonResult {
  requests: { average: number; total: number };
  errors: number;
  non2xx: number;
}
type Autocannon = (options: { url: string; connections: number; duration: number }) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const BODY = JSON.stringify({ data: { id: 1, name: 'Home', url: 'https://example.com/health', enabled: true } });

async function server(withMetrics: boolean): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  if (withMetrics) installMetrics(app, new Metrics({ role: 'bench', perEndpoint: false }), { token: null });
  app.get('/api/public/v2/endpoints/:endpointID', async (_request, reply) => reply.type('application/json').send(BODY));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  return { app, url: `http://127.0.0.1:${port}/api/public/v2/endpoints/42` };
}

/** CPU time this process spent (user + system), in microseconds. */
function cpuMicros(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/**
 * CPU microseconds per request (server and load generator share this process, the same in both
 * runs). CPU time, unlike throughput, hardly moves with what other processes on the machine do.
 */
async function cpuPerRequest(withMetrics: boolean, seconds: number): Promise<number> {
  const { app, url } = await server(withMetrics);
  try {
    await autocannon({ url, connections: 20, duration: 1 });
    const before = cpuMicros();
    const result = await autocannon({ url, connections: 20, duration: seconds });
    const spent = cpuMicros() - before;
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`load run failed: ${result.errors} errors, ${result.non2xx} non-2xx`);
    return spent / result.requests.total;
  } finally {
    await app.close();
  }
}

function event(n: number): NewEvent {
  return { type: 'CheckRecorded', data: { endpoint_id: n % 50, status: 200, latency_ms: 87 + (n % 13) }, metadata: { actor: 'system:prober' } };
}

/** CPU microseconds per single-event append. */
async function cpuPerAppend(store: EventStore, count: number): Promise<number> {
  const before = cpuMicros();
  for (let i = 0; i < count; i++) await store.append(`checks-${i % 50}`, [event(i)], { expectedRevision: 'any' });
  return (cpuMicros() - before) / count;
}

const metricsBench: BenchModule = {
  name: 'metrics',
  async run({ quick, workDir, log }) {
    const loadBefore = loadavg()[0];
    const rounds = quick ? 1 : 3;
    const seconds = quick ? 2 : 5;
    const appends = quick ? 2_000 : 10_000;
    let bareCpu = 0;
    let meteredCpu = 0;
    let bareAppendCpu = 0;
    let meteredAppendCpu = 0;
    for (let round = 0; round < rounds; round++) {
      // Alternate which goes first, so neither always runs on a warmer (or busier) machine.
      const order = round % 2 === 0 ? [false, true] : [true, false];
      for (const withMetrics of order) {
        const cpu = await cpuPerRequest(withMetrics, seconds);
        if (withMetrics) meteredCpu += cpu;
        else bareCpu += cpu;
      }
      for (const withMetrics of order) {
        const raw = new SqliteEventStore(join(workDir, `${withMetrics ? 'metered' : 'bare'}-${round}.sqlite`));
        const store = withMetrics ? instrumentedEventStore(raw, new Metrics({ role: 'bench', perEndpoint: false })) : raw;
        const cpu = await cpuPerAppend(store, appends);
        await store.close();
        if (withMetrics) meteredAppendCpu += cpu;
        else bareAppendCpu += cpu;
      }
      log(`round ${round + 1}/${rounds} done`);
    }
    const figures: BenchFigure[] = [
      {
        name: 'CPU per GET request with the metrics hook (lower is better)',
        value: meteredCpu / rounds,
        unit: 'µs',
        baseline: { name: 'same route, no metrics', value: bareCpu / rounds },
      },
      {
        name: 'CPU per append through the instrumented event store (lower is better)',
        value: meteredAppendCpu / rounds,
        unit: 'µs',
        baseline: { name: 'same SQLite store, bare', value: bareAppendCpu / rounds },
      },
    ];
    return {
      title: 'Metrics overhead (onResponse hook, instrumented appends)',
      figures,
      notes: [
        `Figures are CPU time per operation (ratio above 1: the metrics cost that much more), not throughput: load average ${loadBefore.toFixed(1)} before and ${loadavg()[0].toFixed(1)} after the run on this shared machine, where throughput ratios swung by 25 % from run to run.`,
        `${rounds} round(s), alternating which runs first; HTTP: autocannon, 20 connections, ${seconds} s per run after a 1 s warm-up, in this process; appends: ${appends} single-event appends per store.`,
      ],
    };
  },
};

export default metricsBench;
