import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchFigure, type BenchModule, ratio } from './bench.js';
import { call, ServerProcess } from './http-reads.bench.js';

/**
 * The public status page and its Statuspage summary, served by the real embedded service (its
 * own process, temp DATA_DIR, real socket), against a bare Fastify route serving the same bytes
 * with the same headers (its own process too), both loaded by autocannon from this process with
 * the same settings in the same run. Requests carry no If-None-Match: every answer is a full 200,
 * so the figure is the cost of a cache miss at the CDN.
 */
const CONNECTIONS = 50;
const ROUNDS = 2;
const WARMUP_SECONDS = 3;
const COMPONENTS = 5;
const HISTORY_DAYS = 90;
/** Hourly imported checks per endpoint: 89 days of them, so one 90-day analytics query counts them all. */
const CHECKS_PER_ENDPOINT = (HISTORY_DAYS - 1) * 24;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
/** The highest STATUS_PAGE_RATE_LIMIT_PER_MINUTE the config accepts: the flood comes from one address. */
const ADDRESS_LIMIT = '1000000';
const BASELINE_FLAG = '--status-pages-baseline';
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset']);

const here = dirname(fileURLToPath(import.meta.url));

interface CannonResult {
  requests: { average: number; total: number };
  latency: { p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: { url: string; connections: number; duration: number }) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface RecordedRoute {
  path: string;
  /** base64: the baseline serves the exact bytes. */
  body: string;
  headers: Record<string, string>;
}

interface Measure {
  rps: number;
  p99: number;
  /** CPU time of the server process per answered request, in microseconds. */
  cpuUs: number;
}

/** A team, a project, endpoints with 90 days of hourly history, a page and two published incidents. */
async function provision(base: string): Promise<string> {
  const admin = (method: string, path: string, body?: unknown) => call(base, method, path, ADMIN_TOKEN, body);
  const team = (await admin('POST', '/api/v2/teams', { name: 'Bench' })).data;
  const { token } = (await admin('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'bench', scopes: ['incidents:read', 'incidents:write', 'analytics:read'], role: 'editor' })).data;
  const project = (await admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Cloud' })).data;
  const endpoints: number[] = [];
  const now = Date.now();
  for (let i = 0; i < COMPONENTS; i++) {
    const endpoint = (await admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: `Service ${i + 1}`, url: `https://svc${i}.example.com/health` })).data;
    endpoints.push(endpoint.id);
    const checks = Array.from({ length: CHECKS_PER_ENDPOINT }, (_, n) => ({
      checked_at: new Date(now - (n + 1) * 3_600_000).toISOString(),
      success: (n * 31 + i) % 97 !== 0,
      status_code: 200,
      latency_ms: 80 + ((n * 7919) % 200),
    }));
    await admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, { checks });
  }
  await admin('POST', `/api/v2/teams/${team.id}/status-pages`, {
    slug: 'bench',
    title: 'Bench Cloud',
    components: endpoints.map((endpoint_id) => ({ endpoint_id })),
  });
  const incidents = (method: string, path: string, body?: unknown) => call(base, method, `/api/public/v2/incidents${path}`, token, body);
  for (const [i, severity] of (['critical', 'warning'] as const).entries()) {
    const incident = (await incidents('POST', '', { endpoint_ids: [endpoints[i]], severity, title: `Incident ${i + 1}` })).data;
    await incidents('POST', `/${incident.id}/checkpoints`, { title: 'Investigating', body: 'We are looking into it.', status_label: 'Investigating' });
    await incidents('POST', `/${incident.id}/checkpoints`, { title: 'Identified', body: 'A fix is being rolled out.', status_label: 'Identified' });
  }
  await rollupsCaughtUp(base, token);
  return '/status/bench';
}

/**
 * The import answers once the checks view has the checks; the analytics rollups (the uptime bars)
 * follow. Measuring before they caught up would measure re-rendering, so wait until the team's
 * analytics count every imported check.
 */
async function rollupsCaughtUp(base: string, token: string): Promise<void> {
  const expected = COMPONENTS * CHECKS_PER_ENDPOINT;
  const deadline = Date.now() + 300_000;
  for (;;) {
    const to = new Date();
    const from = new Date(to.getTime() - HISTORY_DAYS * 86_400_000);
    const query = `from=${from.toISOString()}&to=${to.toISOString()}&buckets=1`;
    const counted = (await call(base, 'GET', `/api/public/v2/analytics?${query}`, token)).data.totals.checks as number;
    if (counted === expected) return;
    if (Date.now() > deadline) throw new Error(`rollups hold ${counted} of ${expected} checks after 5 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * The service applies every projection in its own process: until they all caught up with the
 * provisioning (thousands of imported checks feed the checks, alerting and analytics views) it
 * spends its CPU on that, not on the page. Asks `npm run projections -- status` (its built
 * entry point, on the same DATA_DIR) until every lag is 0.
 */
async function projectionsCaughtUp(dataDir: string, log: (line: string) => void): Promise<void> {
  const cli = join(here, '..', 'src', 'cli', 'projections.js');
  const deadline = Date.now() + 300_000;
  for (;;) {
    const { stdout } = await promisify(execFile)(process.execPath, [cli, '--data-dir', dataDir, 'status'], { env: { ...process.env, DATA_DIR: dataDir, ADMIN_TOKEN, LOG_LEVEL: 'warn' } });
    // Padded columns under a header line starting PROJECTION; LAG is the last column.
    const lines = stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('PROJECTION'));
    const lags = lines
      .slice(header + 1)
      .filter((line) => line.trim() !== '')
      .map((line) => Number(line.trim().split(/\s+/).at(-1)));
    if (header >= 0 && lags.length > 0 && lags.every((lag) => lag === 0)) return;
    if (Date.now() > deadline) throw new Error(`projections still behind after 5 minutes:\n${stdout}`);
    log(`waiting for projections: lags ${lags.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}

/** Polls until the answer has not changed for this long (the incidents were written last). */
const SETTLED_MS = 1_000;

/** The service's answer, once its views show everything provisioned. */
async function record(base: string, path: string): Promise<RecordedRoute> {
  let previous = '';
  let since = Date.now();
  for (let attempt = 0; attempt < 600; attempt++) {
    const response = await fetch(base + path);
    const body = Buffer.from(await response.arrayBuffer());
    if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${body.toString()}`);
    const tag = response.headers.get('etag') ?? '';
    if (tag !== previous) since = Date.now();
    if (tag === previous && Date.now() - since >= SETTLED_MS) {
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        if (!TRANSPORT_HEADERS.has(name)) headers[name] = value;
      });
      return { path, body: body.toString('base64'), headers };
    }
    previous = tag;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`GET ${path} kept changing`);
}

/** How long a server's CPU is watched while nothing loads it. */
const IDLE_SECONDS = 3;

/** CPU ms per second the server spends on its own (the service: projections polling, leases, probes). */
async function idleCpuMsPerSecond(server: ServerProcess): Promise<number> {
  const before = server.cpuMs();
  const started = Date.now();
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  return ((server.cpuMs() - before) * 1000) / (Date.now() - started);
}

/** `idleMsPerSecond`: the server's CPU without load, taken off its CPU per request. */
async function load(server: ServerProcess, route: string, seconds: number, idleMsPerSecond = 0): Promise<Measure> {
  const url = server.base + route;
  const cpuBefore = server.cpuMs();
  const started = Date.now();
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds });
  const busyMs = server.cpuMs() - cpuBefore - (idleMsPerSecond * (Date.now() - started)) / 1000;
  const cpuUs = (Math.max(0, busyMs) * 1000) / Math.max(1, result.requests.total);
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { rps: result.requests.average, p99: result.latency.p99, cpuUs };
}

function mean(measures: Measure[]): Measure {
  const sum = measures.reduce((acc, m) => ({ rps: acc.rps + m.rps, p99: acc.p99 + m.p99, cpuUs: acc.cpuUs + m.cpuUs }), { rps: 0, p99: 0, cpuUs: 0 });
  return { rps: sum.rps / measures.length, p99: sum.p99 / measures.length, cpuUs: sum.cpuUs / measures.length };
}

async function compare(route: string, service: ServerProcess, baseline: ServerProcess, seconds: number, log: (line: string) => void) {
  await load(service, route, WARMUP_SECONDS);
  await load(baseline, route, WARMUP_SECONDS);
  const idle = { service: await idleCpuMsPerSecond(service), baseline: await idleCpuMsPerSecond(baseline) };
  log(`idle CPU: service ${idle.service.toFixed(1)} ms/s, baseline ${idle.baseline.toFixed(1)} ms/s`);
  const measured = { service: [] as Measure[], baseline: [] as Measure[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['service', 'baseline'] as const) : (['baseline', 'service'] as const);
    for (const side of order) {
      const m = await load(side === 'service' ? service : baseline, route, seconds, idle[side]);
      measured[side].push(m);
      log(`round ${round + 1} ${side.padEnd(8)} ${route}: ${Math.round(m.rps)} req/s, p99 ${m.p99} ms, ${Math.round(m.cpuUs)} µs CPU/request`);
    }
  }
  return { service: mean(measured.service), baseline: mean(measured.baseline) };
}

function figures(label: string, result: { service: Measure; baseline: Measure }): BenchFigure[] {
  const baselineName = 'bare Fastify route, same bytes';
  return [
    { name: `${label}: requests/s`, value: result.service.rps, unit: 'req/s', baseline: { name: baselineName, value: result.baseline.rps }, aim: '>= 0.5' },
    { name: `${label}: p99 latency`, value: result.service.p99, unit: 'ms', baseline: { name: baselineName, value: result.baseline.p99 }, ratio: ratio(result.baseline.p99, result.service.p99) },
    { name: `${label}: server CPU per request`, value: result.service.cpuUs, unit: 'µs', baseline: { name: baselineName, value: result.baseline.cpuUs }, ratio: ratio(result.baseline.cpuUs, result.service.cpuUs) },
  ];
}

const statusPagesBench: BenchModule = {
  name: 'status-pages',
  async run({ quick, workDir, log }) {
    const seconds = quick ? 3 : 10;
    const dataDir = join(workDir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const servers: ServerProcess[] = [];
    const loadAtStart = loadavg()[0];
    try {
      // BENCH_CPU_PROF_DIR=<dir>: the service writes a V8 CPU profile there when it stops.
      const profile = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
      const service = await ServerProcess.start(
        [...profile, join(here, '..', 'src', 'main.js')],
        { DATA_DIR: dataDir, HOST: '127.0.0.1', ADMIN_TOKEN, ROLE: 'all', LOG_LEVEL: 'warn', STATUS_PAGE_RATE_LIMIT_PER_MINUTE: ADDRESS_LIMIT },
        '/health/ready',
      );
      servers.push(service);
      const page = await provision(service.base);
      await projectionsCaughtUp(dataDir, log);
      const summary = `${page}/summary.json`;
      const routes = [await record(service.base, page), await record(service.base, summary)];
      log(`page ${Buffer.from(routes[0].body, 'base64').length} bytes, summary ${Buffer.from(routes[1].body, 'base64').length} bytes`);
      const routesFile = join(workDir, 'baseline-routes.json');
      writeFileSync(routesFile, JSON.stringify(routes));
      const baseline = await ServerProcess.start([fileURLToPath(import.meta.url), BASELINE_FLAG, routesFile], {}, page);
      servers.push(baseline);
      for (const route of routes) {
        const replayed = Buffer.from(await (await fetch(baseline.base + route.path)).arrayBuffer()).toString('base64');
        if (replayed !== route.body) throw new Error(`baseline body for ${route.path} differs from the service's`);
      }
      const html = await compare(page, service, baseline, seconds, log);
      const json = await compare(summary, service, baseline, seconds, log);
      // The views must not have moved under the load, or the service was measured rendering.
      for (const route of routes) {
        const now = (await fetch(service.base + route.path)).headers.get('etag');
        if (now !== route.headers.etag) throw new Error(`${route.path} changed during the measurement`);
      }
      return {
        title: 'Public status page over HTTP (HTML page, summary.json)',
        figures: [...figures('GET /status/:slug', html), ...figures('GET /status/:slug/summary.json', json)],
        notes: [
          `autocannon, ${CONNECTIONS} connections, ${seconds} s per measurement, ${ROUNDS} rounds alternating which server goes first (mean of rounds), after a ${WARMUP_SECONDS} s warm-up of each.`,
          `Service: \`node src/main.js\` (ROLE=all, embedded SQLite, temp DATA_DIR) in its own process; a page of ${COMPONENTS} components, each with ${HISTORY_DAYS - 1} days of hourly imported checks (the uptime bars); measured once every projection has caught up ("npm run projections -- status" shows no lag), two published incidents with two checkpoints each; no If-None-Match, so every answer is a full 200.`,
          'The service path includes the platform\'s hooks (request id, metrics, request log), the per-address rate limit (STATUS_PAGE_RATE_LIMIT_PER_MINUTE=1000000, the setting\'s maximum, as all load comes from one address), the stamps of six views (one look shared by the requests read in one turn of the event loop) and the ETag; the body comes from the cache while the views are unchanged.',
          'Baseline: a bare Fastify route in its own process sending the same bytes (checked before measuring) with the same content-type, etag and cache-control.',
          `p99 and CPU ratios are baseline / service (higher is better). Server CPU per request is user + system time of the server process (/proc/<pid>/stat, 10 ms ticks) less its idle CPU (watched for ${IDLE_SECONDS} s before each route's rounds: the service's projections, leases and probes), over the requests answered: unlike requests/s it hardly depends on what else the machine runs, so on a loaded machine it is the steadier comparison.`,
          `Load average (1 min) when the run started and ended: ${loadAtStart.toFixed(2)} and ${loadavg()[0].toFixed(2)}.`,
          'Under load from other processes on a shared 2-core machine the per-round figures vary by up to 2x (the log prints each round); compare the ratio of a run, and rerun before drawing conclusions from one.',
        ],
      };
    } finally {
      for (const server of servers.reverse()) await server.stop();
    }
  },
};

export default statusPagesBench;

/** Child-process entry: the baseline server, replaying each recorded route's bytes and headers. */
async function serveBaseline(routesFile: string): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  const routes = JSON.parse(readFileSync(routesFile, 'utf8')) as RecordedRoute[];
  for (const route of routes) {
    const body = Buffer.from(route.body, 'base64');
    app.get(route.path, async (_request, reply) => {
      reply.headers(route.headers);
      return reply.send(body);
    });
  }
  await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
  process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === BASELINE_FLAG) {
  serveBaseline(process.argv[3]).catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
