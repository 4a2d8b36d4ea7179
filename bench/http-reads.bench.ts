import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchFigure, type BenchModule, ratio, SERVICE_NODE_FLAGS } from './bench.js';

/**
 * The two hottest public reads, GET endpoint and GET checks, served by the real embedded service
 * (its own process, temp DATA_DIR, real socket), against a bare Fastify route returning the same
 * JSON (its own process too), both loaded by autocannon from this process with the same settings
 * in the same run. The service path includes what a client pays for: bearer token lookup,
 * rate-limit counter, view reads, maintenance coverage, presentation and serialisation.
 */
const CONNECTIONS = 50;
const ROUNDS = 2;
const WARMUP_SECONDS = 1;
const IMPORTED_CHECKS = 1_000;
const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';
/** The highest RATE_LIMIT_PER_MINUTE the config accepts: a minute of flooding stays under it. */
const RATE_LIMIT_PER_MINUTE = '1000000';
const BASELINE_FLAG = '--http-reads-baseline';
/** Headers the HTTP server writes itself; every other response header is copied to the baseline. */
const TRANSPORT_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

const here = dirname(fileURLToPath(import.meta.url));

interface CannonResult {
  requests: { average: number };
  latency: { p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: { url: string; connections: number; duration: number; headers?: Record<string, string> }) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** A route served by the baseline: the service's exact response, replayed. */
interface RecordedRoute {
  path: string;
  body: string;
  headers: Record<string, string>;
}

interface Measure {
  rps: number;
  p99: number;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export class ServerProcess {
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    readonly base: string,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-4000);
    });
  }

  static async start(args: string[], env: Record<string, string>, readyPath: string, readyWithinMs = 30_000): Promise<ServerProcess> {
    const port = await freePort();
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...args], { env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    const server = new ServerProcess(child, `http://127.0.0.1:${port}`);
    await server.waitUntilReady(readyPath, readyWithinMs);
    return server;
  }

  private async waitUntilReady(path: string, withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null) throw new Error(`server exited (${this.child.exitCode}): ${this.stderr}`);
      try {
        if ((await fetch(this.base + path)).ok) return;
      } catch {
        /* not listening yet */
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`server not ready after ${withinMs / 1000} s: ${this.stderr}`);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** CPU time the server process used so far (user + system, every thread), in ms. */
  cpuMs(): number {
    const fields = readFileSync(`/proc/${this.child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // utime and stime (fields 14 and 15 of the line, 12 and 13 after the command name), in ticks of 10 ms.
    return (Number(fields[11]) + Number(fields[12])) * 10;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = once(this.child, 'exit');
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

export async function call(base: string, method: string, path: string, token: string, body?: unknown): Promise<any> {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

function importedChecks(now: number): unknown[] {
  return Array.from({ length: IMPORTED_CHECKS }, (_, n) => {
    const success = n % 25 !== 0;
    const latency = 60 + ((n * 7919) % 300);
    return {
      checked_at: new Date(now - (n + 1) * 60_000).toISOString(),
      success,
      status_code: success ? 200 : 503,
      latency_ms: latency,
      time_to_first_byte_ms: Math.round(latency * 0.8),
      duration_ms: latency,
      ...(success ? {} : { failure_reason: 'status: 503' }),
    };
  });
}

/** A team, a monitoring:read token, a project, an endpoint and its imported history, all over the admin routes. */
async function provision(base: string): Promise<{ token: string; endpointId: number }> {
  const admin = (method: string, path: string, body?: unknown) => call(base, method, path, ADMIN_TOKEN, body);
  const team = (await admin('POST', '/api/v2/teams', { name: 'Bench' })).data;
  const { token } = (await admin('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'bench', scopes: ['monitoring:read'], role: 'viewer' })).data;
  const project = (await admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Storefront', description: 'Public web shop' })).data;
  const endpoint = (
    await admin('POST', `/api/v2/teams/${team.id}/endpoints`, {
      project_id: project.id,
      name: 'Checkout health',
      description: 'Health of the checkout service',
      url: 'https://shop.example.com/api/health?region=eu',
      headers: { 'x-probe': 'secret-value' },
      interval_seconds: 30,
      timeout_seconds: 5,
    })
  ).data;
  const { imported } = (await admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, { checks: importedChecks(Date.now()) })).data;
  if (imported !== IMPORTED_CHECKS) throw new Error(`imported ${imported} checks, expected ${IMPORTED_CHECKS}`);
  return { token, endpointId: endpoint.id };
}

async function record(base: string, path: string, token: string): Promise<RecordedRoute> {
  const response = await fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
  const body = await response.text();
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${body}`);
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (!TRANSPORT_HEADERS.has(name)) headers[name] = value;
  });
  return { path, body, headers };
}

async function load(url: string, seconds: number, token: string): Promise<Measure> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { authorization: `Bearer ${token}` } });
  const failed = result.errors + result.timeouts + result.non2xx;
  if (failed > 0) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

function mean(measures: Measure[]): Measure {
  const sum = measures.reduce((acc, m) => ({ rps: acc.rps + m.rps, p99: acc.p99 + m.p99 }), { rps: 0, p99: 0 });
  return { rps: sum.rps / measures.length, p99: sum.p99 / measures.length };
}

/** Rounds alternate which server goes first, so neither always runs on a warmer or cooler machine. */
async function compare(route: string, service: ServerProcess, baseline: ServerProcess, token: string, seconds: number, log: (line: string) => void) {
  await load(service.base + route, WARMUP_SECONDS, token);
  await load(baseline.base + route, WARMUP_SECONDS, token);
  const measured = { service: [] as Measure[], baseline: [] as Measure[] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['service', 'baseline'] as const) : (['baseline', 'service'] as const);
    for (const side of order) {
      const server = side === 'service' ? service : baseline;
      const m = await load(server.base + route, seconds, token);
      measured[side].push(m);
      log(`round ${round + 1} ${side.padEnd(8)} ${route}: ${Math.round(m.rps)} req/s, p99 ${m.p99} ms`);
    }
  }
  return { service: mean(measured.service), baseline: mean(measured.baseline) };
}

function figures(label: string, result: { service: Measure; baseline: Measure }): BenchFigure[] {
  const baselineName = 'bare Fastify route, same JSON';
  return [
    { name: `${label}: requests/s`, value: result.service.rps, unit: 'req/s', baseline: { name: baselineName, value: result.baseline.rps }, aim: '>= 0.5' },
    {
      name: `${label}: p99 latency`,
      value: result.service.p99,
      unit: 'ms',
      baseline: { name: baselineName, value: result.baseline.p99 },
      ratio: ratio(result.baseline.p99, result.service.p99),
    },
  ];
}

const httpReadsBench: BenchModule = {
  name: 'http-reads',
  async run({ quick, workDir, log }) {
    const seconds = quick ? 3 : 10;
    const dataDir = join(workDir, 'data');
    mkdirSync(dataDir, { recursive: true });
    const servers: ServerProcess[] = [];
    try {
      const service = await ServerProcess.start(
        [join(here, '..', 'src', 'main.js')],
        { DATA_DIR: dataDir, HOST: '127.0.0.1', ADMIN_TOKEN, ROLE: 'all', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE },
        '/health/ready',
      );
      servers.push(service);
      const { token, endpointId } = await provision(service.base);
      const endpointPath = `/api/public/v2/endpoints/${endpointId}`;
      const checksPath = `${endpointPath}/checks`;
      const routes = [await record(service.base, endpointPath, token), await record(service.base, checksPath, token)];
      const checksPage = JSON.parse(routes[1].body) as { data: unknown[] };
      log(`provisioned endpoint ${endpointId} with ${IMPORTED_CHECKS} checks; bodies ${routes[0].body.length} and ${routes[1].body.length} bytes (${checksPage.data.length} checks a page)`);

      const routesFile = join(workDir, 'baseline-routes.json');
      writeFileSync(routesFile, JSON.stringify(routes));
      const baseline = await ServerProcess.start([fileURLToPath(import.meta.url), BASELINE_FLAG, routesFile], {}, endpointPath);
      servers.push(baseline);
      for (const route of routes) {
        const replayed = await (await fetch(baseline.base + route.path)).text();
        if (replayed !== route.body) throw new Error(`baseline body for ${route.path} differs from the service's`);
      }

      const endpoint = await compare(endpointPath, service, baseline, token, seconds, log);
      const checks = await compare(checksPath, service, baseline, token, seconds, log);
      return {
        title: 'Public monitoring reads over HTTP (GET endpoint, GET checks)',
        figures: [...figures('GET /endpoints/:id', endpoint), ...figures('GET /endpoints/:id/checks', checks)],
        notes: [
          `autocannon, ${CONNECTIONS} connections, ${seconds} s per measurement, ${ROUNDS} rounds alternating which server goes first (mean of rounds), after a ${WARMUP_SECONDS} s warm-up of each.`,
          'Service: `node src/main.js` (ROLE=all, embedded SQLite, temp DATA_DIR) in its own process; provisioned through the admin routes (team, monitoring:read viewer token, project, endpoint, ' +
            `${IMPORTED_CHECKS.toLocaleString('en-US')} imported checks); requests carry the bearer token; GET checks uses the default limit.`,
          'Baseline: a bare Fastify route in its own process returning the same JSON (byte-for-byte, checked before measuring) with the same non-transport response headers; it ignores the token.',
          'Load generator: autocannon in the bench process, the same for both sides, so on a 2-core machine each server competes with it alike.',
          `Rate limit: RATE_LIMIT_PER_MINUTE=${RATE_LIMIT_PER_MINUTE} (the documented setting's maximum) so the flood is not cut at the default 1,200 a minute; the per-token counter is still kept on every request.`,
          'p99 ratio is baseline / service (higher is better, 1 = as fast as the bare route).',
        ],
      };
    } finally {
      for (const server of servers.reverse()) await server.stop();
    }
  },
};

export default httpReadsBench;

/** Child-process entry: the baseline server, replaying each recorded route's JSON and headers. */
async function serveBaseline(routesFile: string): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  const routes = JSON.parse(readFileSync(routesFile, 'utf8')) as RecordedRoute[];
  for (const route of routes) {
    const payload = JSON.parse(route.body) as unknown;
    app.get(route.path, async (_request, reply) => {
      reply.headers(route.headers);
      return payload;
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
