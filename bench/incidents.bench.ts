/**
 * Incident commands through the public HTTP API of the real embedded service: create and
 * comment add with 20 concurrent clients, commands/s and p99, each beside the raw event-store
 * append rate measured in the same run (20 concurrent appenders on the SQLite adapter).
 *
 * The service runs as a child process from this build's compiled JS (`<outDir>/src/main.js`,
 * ROLE=all, temp DATA_DIR, its own port), provisioned through the admin routes; the 20 clients
 * are an undici Pool in this process, so the load generator does not share the service's event
 * loop. A short in-process profile at the end says where a command's time goes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { EventStore } from '../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../src/platform/event-store/sqlite/sqlite-event-store.js';
import { type BenchFigure, type BenchModule, median, ratio, SERVICE_NODE_FLAGS } from './bench.js';

const CLIENTS = 20;
/** Events an incident already holds before the hot-incident figure (issue 11 item 8). */
const BIG_INCIDENT_EVENTS = 5_000;
/** Checks linked to an incident before the long-outage figure (issue 12 item 3): a week at one failing check every 30 s (quick: a day and a half). */
const LONG_OUTAGE_CHECKS = 20_160;
const LONG_OUTAGE_CHECKS_QUICK = 5_000;
/** Slices of the hot-incident figure, alternating the fresh incident and the big one. */
const HOT_SLICES = 8;
/** Incidents the spread comment figure writes to; each client keeps to its own share. */
const COMMENT_INCIDENTS = 200;
const RATE_LIMIT_PER_MINUTE = 1_000_000;
const here = dirname(fileURLToPath(import.meta.url));

interface LoadResult {
  ok: number;
  seconds: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** Non-2xx answers by status and problem code. */
  failures: Record<string, number>;
  /** Parsed `data` of the successful answers, when asked for. */
  data: unknown[];
  /** CPU time (user + system) the process doing the work spent meanwhile, when measured. */
  cpuMs?: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function summarize(latencies: number[], seconds: number, failures: Record<string, number>, data: unknown[]): LoadResult {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { ok: latencies.length, seconds, perSecond: latencies.length / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), failures, data };
}

// ---------------------------------------------------------------------------------------------
// Baseline: the SQLite event-store adapter, 20 concurrent appenders, one event per append.
// ---------------------------------------------------------------------------------------------

function commentLikeEvent(client: number, n: number) {
  return {
    type: 'CommentAdded',
    data: { incident_id: client + 1, comment_id: n + 1, body: `Looking into it (${n})`, pinned: false, created_at: new Date().toISOString() },
    metadata: { actor: 'token:1', request_id: `bench-${client}-${n}` },
  };
}

/**
 * Each appender owns one stream and appends with its exact expected revision; `groupCommit`: the
 * appends may wait to share a commit with the others of their turn (as probed checks do), else
 * each is written at once (as a command's is).
 */
async function rawAppends(store: EventStore, seconds: number, streamPrefix: string, groupCommit: boolean): Promise<LoadResult> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      const stream = `${streamPrefix}-${client}`;
      let expected: number | 'no_stream' = 'no_stream';
      for (let n = 0; performance.now() < deadline; n++) {
        const t0 = performance.now();
        const result = await store.append(stream, [commentLikeEvent(client, n)], { expectedRevision: expected, groupCommit });
        latencies.push(performance.now() - t0);
        expected = result.nextExpectedRevision;
      }
    }),
  );
  return summarize(latencies, (performance.now() - started) / 1000, {}, []);
}

function combined(a: LoadResult, b: LoadResult): LoadResult {
  const seconds = a.seconds + b.seconds;
  const ok = a.ok + b.ok;
  const cpuMs = a.cpuMs !== undefined && b.cpuMs !== undefined ? a.cpuMs + b.cpuMs : undefined;
  const failures = { ...a.failures };
  for (const [key, count] of Object.entries(b.failures)) failures[key] = (failures[key] ?? 0) + count;
  return { ...a, ok, seconds, perSecond: ok / seconds, p50: Math.max(a.p50, b.p50), p99: Math.max(a.p99, b.p99), failures, cpuMs };
}

/** Successful operations per CPU second: on a shared machine, what the work costs rather than how fast it got done. */
function perCpuSecond(result: LoadResult): number {
  return result.cpuMs ? result.ok / (result.cpuMs / 1000) : 0;
}

/** Raw appends with the bench process's CPU time (nothing else runs in it meanwhile). */
async function rawAppendsTimed(store: EventStore, seconds: number, streamPrefix: string, groupCommit = false): Promise<LoadResult> {
  const before = process.cpuUsage();
  const result = await rawAppends(store, seconds, streamPrefix, groupCommit);
  const used = process.cpuUsage(before);
  return { ...result, cpuMs: (used.user + used.system) / 1000 };
}

/** User + system CPU of a process so far (Linux /proc; clock ticks of 10 ms), null elsewhere. */
function processCpuMs(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The service in a child process, and 20 HTTP clients.
// ---------------------------------------------------------------------------------------------

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Service {
  base: string;
  adminToken: string;
  /** CPU time the service process has used so far, null where it cannot be read. */
  cpuMs(): number | null;
  stop(): Promise<void>;
}

async function startService(dataDir: string): Promise<Service> {
  const port = await freePort();
  const adminToken = randomBytes(24).toString('hex');
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    ROLE: 'all',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE),
    EVENTSTORE_URL: '',
    MONGODB_URL: '',
    NATS_URL: '',
  };
  const child: ChildProcess = spawn(process.execPath, [...SERVICE_NODE_FLAGS, join(here, '..', 'src', 'main.js')], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${base}/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`service not ready after 60 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    base,
    adminToken,
    cpuMs: () => processCpuMs(child.pid),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text).data;
}

interface Provisioned {
  token: string;
  projectId: number;
  endpointId: number;
}

/** Team, editor token (incidents:read/write), project and endpoint, through the admin routes. */
async function provision(service: Service): Promise<Provisioned> {
  const admin = (method: string, path: string, body?: unknown) => call(service.base, service.adminToken, method, path, body);
  const team = await admin('POST', '/api/v2/teams', { name: 'Bench' });
  const { token } = await admin('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'bench', scopes: ['incidents:read', 'incidents:write'], role: 'editor' });
  const project = await admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Shop' });
  const endpoint = await admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: 'Checkout', url: 'https://example.com/health' });
  return { token, projectId: project.id, endpointId: endpoint.id };
}

interface Command {
  method: 'POST';
  path: string;
  body: unknown;
}

async function withServiceCpu(service: Service, work: () => Promise<LoadResult>): Promise<LoadResult> {
  const before = service.cpuMs();
  const result = await work();
  const after = service.cpuMs();
  return before === null || after === null ? result : { ...result, cpuMs: after - before };
}

/** Appends to the incident and comment id sequences, and the ids they reserved, in the service's log. */
async function sequenceAppends(file: string): Promise<Record<'incident' | 'comment', { appends: number; ids: number }>> {
  const store = new SqliteEventStore(file);
  try {
    const count = async (sequence: string) => {
      const events = await store.readStream(`sequence-${sequence}`);
      return { appends: events.length, ids: events.reduce((sum, event) => sum + Number((event.data as { count: number }).count), 0) };
    };
    return { incident: await count('incident'), comment: await count('comment') };
  } finally {
    await store.close();
  }
}

/** CLIENTS loops, each sending its next command as soon as the previous one answered. */
async function drive(pool: Pool, token: string, seconds: number, next: (client: number, n: number) => Command, keepData = false): Promise<LoadResult> {
  const latencies: number[] = [];
  const failures: Record<string, number> = {};
  const data: unknown[] = [];
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let n = 0; performance.now() < deadline; n++) {
        const command = next(client, n);
        const t0 = performance.now();
        const response = await pool.request({ method: command.method, path: command.path, headers, body: JSON.stringify(command.body) });
        const text = await response.body.text();
        const ms = performance.now() - t0;
        if (response.statusCode < 300) {
          latencies.push(ms);
          if (keepData) data.push(JSON.parse(text).data);
        } else {
          const key = `${response.statusCode} ${(JSON.parse(text) as { code?: string }).code ?? ''}`.trim();
          failures[key] = (failures[key] ?? 0) + 1;
        }
      }
    }),
  );
  return summarize(latencies, (performance.now() - started) / 1000, failures, data);
}

const INCIDENTS = '/api/public/v2/incidents';

function creates(p: Provisioned) {
  return (client: number, n: number): Command => ({
    method: 'POST',
    path: INCIDENTS,
    body: { project_id: p.projectId, endpoint_ids: [p.endpointId], title: `Checkout errors ${client}.${n}`, severity: n % 2 ? 'critical' : 'warning' },
  });
}

/** Client c writes to incidents c, c + 20, c + 40, ... of the set, in turn. */
function spreadComments(incidentIds: number[]) {
  const perClient = Math.max(1, Math.floor(incidentIds.length / CLIENTS));
  return (client: number, n: number): Command => ({
    method: 'POST',
    path: `${INCIDENTS}/${incidentIds[(client + CLIENTS * (n % perClient)) % incidentIds.length]}/comments`,
    body: { body: `Still investigating (${client}.${n})` },
  });
}

function hotComments(incidentId: number) {
  return (client: number, n: number): Command => ({ method: 'POST', path: `${INCIDENTS}/${incidentId}/comments`, body: { body: `Hot (${client}.${n})` } });
}

/** Adds comments to one incident with all clients until it holds `count` more events. */
async function seedComments(pool: Pool, token: string, incidentId: number, count: number): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  let added = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let n = 0; added < count; n++) {
        const response = await pool.request({ method: 'POST', path: `${INCIDENTS}/${incidentId}/comments`, headers, body: JSON.stringify({ body: `Earlier note (${client}.${n})` }) });
        await response.body.text();
        if (response.statusCode < 300) added++;
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// A long outage: linking checks the way the automatic-incident reactor does, in-process.
// ---------------------------------------------------------------------------------------------

interface LinkRate {
  links: number;
  seconds: number;
  perSecond: number;
}

/**
 * Links checks to two incidents of one service, one fresh and one already holding
 * LONG_OUTAGE_CHECKS, as the reactor does (incident streams folded forward by a StreamCache, the
 * domain's link_check decision, one append per check), and counts the projection's work too:
 * each timed round ends when the incidents view has every link.
 */
async function longOutage(dataDir: string, seconds: number, outageChecks: number, log: (line: string) => void): Promise<{ fresh: LinkRate; long: LinkRate; detailBytes: number }> {
  await import('reflect-metadata');
  const { projections } = await import('../src/app/contexts.js');
  const { loadConfig } = await import('../src/platform/config/config.js');
  const { silentLogger } = await import('../src/platform/logging/logger.js');
  const { createPlatform } = await import('../src/platform/platform.js');
  const { StreamCache } = await import('../src/platform/es/stream-cache.js');
  const { runStreamCommand } = await import('../src/platform/es/stream-command.js');
  const { systemContext } = await import('../src/platform/es/command-context.js');
  const { incidentAggregate } = await import('../src/incidents/application/lookups.js');
  const { IncidentQueries } = await import('../src/incidents/views/incidents/queries.js');
  const { incidentStreamId } = await import('../src/incidents/domain/events.js');
  const { decide } = await import('../src/incidents/domain/incident.js');
  type LinkedCheck = import('../src/incidents/domain/events.js').LinkedCheck;

  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: randomBytes(24).toString('hex'), LOG_LEVEL: 'silent' });
  const platform = await createPlatform(config, { projections: projections(), withRunner: true, withTransport: false, logger: silentLogger });
  await platform.runner!.start();
  try {
    const fold = new StreamCache(platform.events, incidentAggregate.initial, incidentAggregate.evolve);
    const context = systemContext('bench');
    const now = () => new Date().toISOString();
    let nextCheckId = 1;
    const check = (checkedAt: number): LinkedCheck => ({
      id: nextCheckId++, endpoint_id: 1, configuration_version: 1, success: false, status_code: 503, latency_ms: 120, time_to_first_byte_ms: 100,
      duration_ms: 130, source: 'scheduled', body_complete: true, latency_anomaly: false, latency_threshold_ms: null, alert_suppressed: false,
      failure_reason: 'status: 503', response_excerpt_omitted: true, checked_at: new Date(checkedAt).toISOString(),
    });
    const open = async (incidentId: number) => {
      const command = { kind: 'create' as const, incident_id: incidentId, team_id: 1, project_id: 1, endpoint_ids: [1], title: `Outage ${incidentId}`, status: { id: 1, name: 'Investigating' } };
      await runStreamCommand(platform.events, incidentStreamId(incidentId), incidentAggregate, context, (state) => ({ events: decide(state, command, { now: now() }), result: null }), { fold });
    };
    let lastPosition: import('../src/platform/event-store/event-store.port.js').Position | null = null;
    const link = async (incidentId: number, linked: LinkedCheck) => {
      const { append } = await runStreamCommand(platform.events, incidentStreamId(incidentId), incidentAggregate, context, (state) => ({ events: decide(state, { kind: 'link_check', check: linked }, { now: now() }), result: null }), { fold });
      if (append) lastPosition = append.position;
    };
    const caughtUp = async () => {
      if (lastPosition !== null) await platform.freshness.waitFor(lastPosition, ['incidents']);
    };
    const fresh = 1;
    const long = 2;
    await open(fresh);
    await open(long);
    const start = Date.parse('2026-03-01T00:00:00Z');
    log(`long outage: linking ${outageChecks.toLocaleString('en-US')} checks to incident ${long} first`);
    for (let i = 0; i < outageChecks; i++) await link(long, check(start + i * 30_000));
    await caughtUp();

    let freshAt = start;
    let longAt = start + outageChecks * 30_000;
    const timed = async (incidentId: number, at: () => number, round: number): Promise<LinkRate> => {
      const deadline = performance.now() + round * 1000;
      const t0 = performance.now();
      let links = 0;
      while (performance.now() < deadline) {
        await link(incidentId, check(at()));
        links++;
      }
      await caughtUp();
      const secondsTaken = (performance.now() - t0) / 1000;
      return { links, seconds: secondsTaken, perSecond: links / secondsTaken };
    };
    const sum = (a: LinkRate, b: LinkRate): LinkRate => ({ links: a.links + b.links, seconds: a.seconds + b.seconds, perSecond: (a.links + b.links) / (a.seconds + b.seconds) });
    // Interleaved halves, so both share the machine's noise.
    const freshFirst = await timed(fresh, () => (freshAt += 30_000), seconds / 2);
    const longFirst = await timed(long, () => (longAt += 30_000), seconds / 2);
    const freshSecond = await timed(fresh, () => (freshAt += 30_000), seconds / 2);
    const longSecond = await timed(long, () => (longAt += 30_000), seconds / 2);
    const detail = await new IncidentQueries(platform).detail(1, long);
    return { fresh: sum(freshFirst, freshSecond), long: sum(longFirst, longSecond), detailBytes: JSON.stringify(detail).length };
  } finally {
    await platform.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Where the time goes: the same commands in-process, one at a time, with the steps timed.
// ---------------------------------------------------------------------------------------------

interface StepTimes {
  commands: number;
  totalMs: number;
  idsMs: number;
  loadMs: number;
  appendMs: number;
  waitMs: number;
  viewReadsMs: number;
  rateLimitMs: number;
  /** Read-store commits (projection batches: view changes + checkpoint), counted apart: they run inside the other steps' awaits. */
  viewCommits: number;
  viewCommitMs: number;
  /** Each command's read-your-writes wait and its whole time, for their medians (the averages hide a skewed spread). */
  waits: number[];
  totals: number[];
}

const noTime = (): StepTimes => ({ commands: 0, totalMs: 0, idsMs: 0, loadMs: 0, appendMs: 0, waitMs: 0, viewReadsMs: 0, rateLimitMs: 0, viewCommits: 0, viewCommitMs: 0, waits: [], totals: [] });

export async function profileSteps(dataDir: string, seconds: number): Promise<{ create: StepTimes; comment: StepTimes }> {
  await import('reflect-metadata');
  const { createHttpApp } = await import('../src/app/http-app.js');
  const { projections, upcasters } = await import('../src/app/contexts.js');
  const { loadConfig } = await import('../src/platform/config/config.js');
  const { silentLogger } = await import('../src/platform/logging/logger.js');
  const { createPlatform } = await import('../src/platform/platform.js');
  const adminToken = randomBytes(24).toString('hex');
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: adminToken, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT_PER_MINUTE) });
  const platform = await createPlatform(config, { projections: projections(), upcasters: upcasters(), withRunner: true, withTransport: true, logger: silentLogger });
  await platform.runner!.start();
  const app = await createHttpApp(platform);
  const fastify = app.getHttpAdapter().getInstance();
  await fastify.ready();
  try {
    const inject = async (token: string, method: string, url: string, body?: unknown) => {
      const response = await fastify.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: body === undefined ? undefined : JSON.stringify(body) });
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.json().data;
    };
    const team = await inject(adminToken, 'POST', '/api/v2/teams', { name: 'Profile' });
    const { token } = await inject(adminToken, 'POST', `/api/v2/teams/${team.id}/tokens`, { name: 'p', scopes: ['incidents:read', 'incidents:write'], role: 'editor' });
    const project = await inject(adminToken, 'POST', `/api/v2/teams/${team.id}/projects`, { name: 'P' });
    const endpoint = await inject(adminToken, 'POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: 'E', url: 'https://example.com/' });

    let times: StepTimes = noTime();
    const timed = <A extends unknown[], R>(original: (...args: A) => Promise<R>, step: Exclude<keyof StepTimes, 'waits' | 'totals'>, when: (first: unknown) => boolean = () => true) =>
      async (...args: A): Promise<R> => {
        if (!when(args[0])) return original(...args);
        const t0 = performance.now();
        try {
          return await original(...args);
        } finally {
          const ms = performance.now() - t0;
          times[step] += ms;
          if (step === 'waitMs') times.waits.push(ms);
        }
      };
    const onIncident = (stream: unknown) => String(stream).startsWith('incident-');
    platform.ids.next = timed(platform.ids.next.bind(platform.ids), 'idsMs');
    platform.events.readStream = timed(platform.events.readStream.bind(platform.events), 'loadMs', onIncident);
    platform.events.append = timed(platform.events.append.bind(platform.events), 'appendMs', onIncident);
    platform.freshness.waitFor = timed(platform.freshness.waitFor.bind(platform.freshness), 'waitMs');
    platform.reader.get = timed(platform.reader.get.bind(platform.reader), 'viewReadsMs');
    platform.reader.find = timed(platform.reader.find.bind(platform.reader), 'viewReadsMs');
    platform.coordination.hit = timed(platform.coordination.hit.bind(platform.coordination), 'rateLimitMs');
    const commit = timed(platform.views.commit.bind(platform.views), 'viewCommitMs');
    platform.views.commit = (writes) => {
      times.viewCommits++;
      return commit(writes);
    };

    const run = async (send: (n: number) => Promise<unknown>): Promise<StepTimes> => {
      for (let n = 0; n < 20; n++) await send(n); // warm-up
      times = noTime();
      const deadline = performance.now() + seconds * 1000;
      for (let n = 0; performance.now() < deadline; n++) {
        const t0 = performance.now();
        await send(n);
        const ms = performance.now() - t0;
        times.totalMs += ms;
        times.totals.push(ms);
        times.commands++;
      }
      return times;
    };
    const ids: number[] = [];
    const create = await run(async (n) => ids.push((await inject(token, 'POST', INCIDENTS, { project_id: project.id, endpoint_ids: [endpoint.id], title: `P ${n}` })).id));
    const comment = await run((n) => inject(token, 'POST', `${INCIDENTS}/${ids[n % ids.length]}/comments`, { body: `c ${n}` }));
    return { create, comment };
  } finally {
    await app.close();
    await platform.close();
  }
}

export function perCommand(t: StepTimes): string {
  const avg = (ms: number) => (ms / Math.max(1, t.commands)).toFixed(2);
  const rest = t.totalMs - t.idsMs - t.loadMs - t.appendMs - t.waitMs - t.viewReadsMs - t.rateLimitMs;
  return [
    `${avg(t.totalMs)} ms = id allocation ${avg(t.idsMs)}`,
    `incident stream read ${avg(t.loadMs)}`,
    `incident stream append ${avg(t.appendMs)}`,
    `read-your-writes wait (the projection applying and committing) ${avg(t.waitMs)}`,
    `view reads (token, statuses, project/endpoint lookups) ${avg(t.viewReadsMs)}`,
    `rate-limit counter ${avg(t.rateLimitMs)}`,
    `the rest ${avg(rest)} (Fastify/Nest routing and hooks, validation, JSON, response)`,
  ].join(' + ') + `; meanwhile the projections made ${avg(t.viewCommits)} read-store commits per command (${avg(t.viewCommitMs)} ms); medians: the command ${median(t.totals).toFixed(2)} ms, its wait ${median(t.waits).toFixed(2)} ms`;
}

// ---------------------------------------------------------------------------------------------

const round = (value: number) => Math.round(value * 100) / 100;

function failuresText(result: LoadResult): string {
  const entries = Object.entries(result.failures);
  return entries.length === 0 ? 'none' : entries.map(([key, count]) => `${count} x ${key}`).join(', ');
}

const incidentsBench: BenchModule = {
  name: 'incidents',
  async run({ quick, workDir, log }) {
    const seconds = quick ? 3 : 10;
    const warmup = quick ? 0.5 : 1;
    for (const dir of ['raw', 'service', 'profile', 'outage']) mkdirSync(join(workDir, dir), { recursive: true });
    const rawStore = new SqliteEventStore(join(workDir, 'raw', 'events.sqlite'));
    log(`starting the service (child process, ROLE=all, RATE_LIMIT_PER_MINUTE=${RATE_LIMIT_PER_MINUTE})`);
    const service = await startService(join(workDir, 'service'));
    const pool = new Pool(service.base, { connections: CLIENTS, pipelining: 1 });
    let raw: LoadResult;
    let rawGrouped: LoadResult;
    let create: LoadResult;
    let spread: LoadResult;
    let hot: LoadResult;
    let hotFresh: LoadResult;
    let hotBig: LoadResult;
    try {
      const p = await provision(service);
      log(`baseline, first half: raw appends, ${CLIENTS} appenders, ${seconds / 2} s, each written at once, then grouped`);
      const rawFirst = await rawAppendsTimed(rawStore, seconds / 2, 'first');
      const rawGroupedFirst = await rawAppendsTimed(rawStore, seconds / 2, 'first-grouped', true);

      await drive(pool, p.token, warmup, creates(p));
      log(`incident create: ${CLIENTS} clients, ${seconds} s`);
      create = await withServiceCpu(service, () => drive(pool, p.token, seconds, creates(p), true));
      const created = (create.data as Array<{ id: number }>).map((incident) => incident.id);
      const commentSet = created.slice(0, COMMENT_INCIDENTS);

      await drive(pool, p.token, warmup, spreadComments(commentSet));
      log(`comment add over ${commentSet.length} incidents: ${CLIENTS} clients, ${seconds} s`);
      spread = await withServiceCpu(service, () => drive(pool, p.token, seconds, spreadComments(commentSet)));

      const hotIncident = created[created.length - 1];
      log(`comment add on one incident: ${CLIENTS} clients, ${seconds} s`);
      hot = await drive(pool, p.token, seconds, hotComments(hotIncident));

      const fresh = (await call(service.base, p.token, 'POST', INCIDENTS, { project_id: p.projectId, title: 'Fresh incident' })).id as number;
      const big = (await call(service.base, p.token, 'POST', INCIDENTS, { project_id: p.projectId, title: 'Big incident' })).id as number;
      log(`seeding incident ${big} with ${BIG_INCIDENT_EVENTS.toLocaleString('en-US')} comments`);
      await seedComments(pool, p.token, big, BIG_INCIDENT_EVENTS);
      log(`comment add, all clients on a fresh incident vs one holding ${BIG_INCIDENT_EVENTS.toLocaleString('en-US')} events: ${seconds} s each, in ${HOT_SLICES} interleaved slices`);
      // Slices in the order fresh, big, big, fresh, ...: a load that rises or falls during the
      // figure weighs on both alike (two halves let a swing of the shared machine decide the ratio).
      const slices: Record<'fresh' | 'big', LoadResult[]> = { fresh: [], big: [] };
      for (let slice = 0; slice < HOT_SLICES; slice++) {
        for (const which of slice % 2 === 0 ? (['fresh', 'big'] as const) : (['big', 'fresh'] as const)) {
          slices[which].push(await drive(pool, p.token, seconds / HOT_SLICES, hotComments(which === 'fresh' ? fresh : big)));
        }
      }
      hotFresh = slices.fresh.reduce(combined);
      hotBig = slices.big.reduce(combined);

      log(`baseline, second half: raw appends, ${CLIENTS} appenders, ${seconds / 2} s, grouped, then each written at once`);
      rawGrouped = combined(rawGroupedFirst, await rawAppendsTimed(rawStore, seconds / 2, 'second-grouped', true));
      raw = combined(rawFirst, await rawAppendsTimed(rawStore, seconds / 2, 'second'));
    } finally {
      await pool.close();
      await service.stop();
      await rawStore.close();
    }
    const reservations = await sequenceAppends(join(workDir, 'service', 'events.sqlite'));

    log('profile: the same commands in-process, one at a time, steps timed');
    const profile = await profileSteps(join(workDir, 'profile'), quick ? 1 : 2);
    const outageChecks = quick ? LONG_OUTAGE_CHECKS_QUICK : LONG_OUTAGE_CHECKS;
    const outage = await longOutage(join(workDir, 'outage'), quick ? 2 : 6, outageChecks, log);

    const baseline = { name: `raw appends (SQLite adapter, ${CLIENTS} concurrent appenders, 1 event each, each written at once)`, value: round(raw.perSecond) };
    // Unit "/s": the same unit reads right for commands (figure) and appends (baseline).
    const rate = (name: string, result: LoadResult, aim?: string): BenchFigure => ({ name, value: round(result.perSecond), unit: '/s', baseline, ratio: ratio(result.perSecond, raw.perSecond), ...(aim ? { aim } : {}) });
    const p99 = (name: string, result: LoadResult): BenchFigure => ({ name, value: round(result.p99), unit: 'ms' });
    return {
      title: `Incident commands over HTTP (${CLIENTS} concurrent clients)`,
      figures: [
        rate('incident create commands', create, '>= 0.25'),
        {
          name: 'incident create commands vs raw appends grouped (group commit, as probed checks append)',
          value: round(create.perSecond),
          unit: '/s',
          baseline: { name: `raw appends, ${CLIENTS} concurrent appenders, sharing commits per turn`, value: round(rawGrouped.perSecond) },
          ratio: ratio(create.perSecond, rawGrouped.perSecond),
        },
        {
          name: 'incident create commands per CPU second of the service',
          value: round(perCpuSecond(create)),
          unit: '/CPU s',
          baseline: { name: 'raw appends per CPU second of the bench process', value: round(perCpuSecond(raw)) },
          ratio: ratio(perCpuSecond(create), perCpuSecond(raw)),
        },
        { ...p99('incident create, p99 latency', create), aim: '<= 40' },
        rate(`comment add commands, spread over ${Math.min(COMMENT_INCIDENTS, create.ok)} incidents`, spread, '>= 0.35'),
        {
          name: 'comment add commands (spread) vs raw appends grouped',
          value: round(spread.perSecond),
          unit: '/s',
          baseline: { name: `raw appends, ${CLIENTS} concurrent appenders, sharing commits per turn`, value: round(rawGrouped.perSecond) },
          ratio: ratio(spread.perSecond, rawGrouped.perSecond),
        },
        p99(`comment add, spread, p99 latency`, spread),
        {
          name: 'comment add commands (spread) per CPU second of the service',
          value: round(perCpuSecond(spread)),
          unit: '/CPU s',
          baseline: { name: 'raw appends per CPU second of the bench process', value: round(perCpuSecond(raw)) },
          ratio: ratio(perCpuSecond(spread), perCpuSecond(raw)),
        },
        rate('comment add commands, all clients on one incident', hot),
        p99('comment add, one incident, p99 latency', hot),
        {
          name: `comment add, all clients on an incident already holding ${BIG_INCIDENT_EVENTS.toLocaleString('en-US')} events`,
          value: round(hotBig.perSecond),
          unit: '/s',
          baseline: { name: 'the same on a fresh incident', value: round(hotFresh.perSecond) },
          ratio: ratio(hotBig.perSecond, hotFresh.perSecond),
          aim: '>= 0.8',
        },
        p99(`comment add, incident holding ${BIG_INCIDENT_EVENTS.toLocaleString('en-US')} events, p99 latency`, hotBig),
        p99('comment add, fresh incident, p99 latency', hotFresh),
        {
          name: `linking a failing check to an incident already holding ${outageChecks.toLocaleString('en-US')} (in-process, view included)`,
          value: round(outage.long.perSecond),
          unit: '/s',
          baseline: { name: 'the same on a fresh incident', value: round(outage.fresh.perSecond) },
          ratio: ratio(outage.long.perSecond, outage.fresh.perSecond),
          aim: 'flat (~1)',
        },
        { name: `incident detail of that long outage (newest 100 checks + checks_total)`, value: outage.detailBytes, unit: 'bytes' },
        { name: 'one client, incident create: read-your-writes wait p50 (in-process, Fastify inject)', value: round(median(profile.create.waits)), unit: 'ms', aim: '<= 0.5' },
        { name: 'one client, comment add: read-your-writes wait p50 (in-process, Fastify inject)', value: round(median(profile.comment.waits)), unit: 'ms' },
      ],
      notes: [
        `Service: the compiled service in a child process (ROLE=all: API and projector in one process), embedded SQLite (WAL, synchronous=NORMAL) under a temp DATA_DIR, provisioned through the admin routes; RATE_LIMIT_PER_MINUTE=${RATE_LIMIT_PER_MINUTE.toLocaleString('en-US')} (the configured per-token limit, raised for the bench so the default 1,200/min does not cap it; the counter still runs, from quota grants taken from the shared store). Clients: an undici Pool with ${CLIENTS} connections in the bench process, each client sending its next command when the previous one answered; ${seconds} s per figure after a ${warmup} s warm-up. Only 2xx answers count.`,
        `Baseline: the SQLite event-store adapter (SqliteEventStore, not raw better-sqlite3) in the bench process, ${CLIENTS} concurrent appenders, each appending one event to its own stream with its exact expected revision; measured in two halves, before and after the HTTP figures, to share the machine's noise: ${Math.round(raw.perSecond).toLocaleString('en-US')} appends/s, p99 ${round(raw.p99)} ms. Ratio = commands/s / appends/s. Each append is written at once, as a command's is: that is the baseline of the issue's aims. Beside it the same appenders with \`groupCommit\` (the appends of one turn of the event loop share one transaction, as probed checks' do): ${Math.round(rawGrouped.perSecond).toLocaleString('en-US')} appends/s, p99 ${round(rawGrouped.p99)} ms; a command cannot wait for a group without holding its stream's next command to one append per turn of the loop.`,
        `Failed answers: create ${failuresText(create)}; spread comments ${failuresText(spread)}; one incident ${failuresText(hot)}. Medians: create ${round(create.p50)} ms, spread comments ${round(spread.p50)} ms, one incident ${round(hot.p50)} ms.`,
        `Where the time goes (same commands in-process through Fastify inject, one at a time, steps timed; the read-your-writes wait runs from the command's append to the incidents view having it, and its median is the one-client figure above): create ${perCommand(profile.create)}; comment add ${perCommand(profile.comment)}.`,
        `Each command appends to its incident stream and takes an id from a sequence stream (\`sequence-incident\`, \`sequence-comment\`); the allocator gathers the requests of one sequence from the end of the event loop's turn until its reservation's turn on the sequence stream begins, and reserves them with one append, handed out in order: here ${reservations.incident.appends.toLocaleString('en-US')} appends reserved ${reservations.incident.ids.toLocaleString('en-US')} incident ids and ${reservations.comment.appends.toLocaleString('en-US')} appends ${reservations.comment.ids.toLocaleString('en-US')} comment ids over the whole run. A command also reads the events of the incident stream since the process last folded it (usually none), looks up views (token, statuses, project and endpoint), and waits until the incidents view has the event (read-your-writes: the runner cuts its gathering for a position a writer waits on, and the writer reads the runner's applied position, not the store). Only the projections that handle an event's type are woken by it; the incidents view commits its change with its checkpoint: that is the read-store commit count above. All of it shares one event loop and synchronous SQLite, so at ${CLIENTS} clients throughput is bounded by that CPU work, not by waiting; a raw append is a single small SQLite transaction in a process doing nothing else. The CPU-second figures divide the successful commands by the service process's CPU time (/proc) over the same seconds, and the raw appends by the bench process's: on a shared machine they say what a command costs where the rates say how fast it got done.`,
        `One incident for all clients: a command folds the incident's stream forward from this process's cache (it reads only the events since the last command) and the view writes the incident's small head and the one comment, so a command costs the same on an incident holding ${BIG_INCIDENT_EVENTS.toLocaleString('en-US')} events (seeded with comments through the API) as on a fresh one; both measured in ${HOT_SLICES} interleaved slices each (fresh, big, big, fresh, ...). This process's commands on the one stream take turns, each from its load to its append, so they decide on each other's results instead of conflicting; an append another process got in first is refused, and the command folds on and decides again (a command refused 8 times answers 409 concurrent_update, counted under failed answers). Failed answers: fresh ${failuresText(hotFresh)}; big ${failuresText(hotBig)}.`,
        `Long outage: in-process (the service's platform with its projection runner, embedded SQLite), ${outageChecks.toLocaleString('en-US')} failing checks linked first to one incident, then links to it and to a fresh incident timed in interleaved halves (${outage.fresh.links + outage.long.links} links), each round ending when the incidents view has every link. A link is what the automatic-incident reactor does per failing check: fold the incident stream forward (StreamCache), decide link_check (an O(1) "already linked?" lookup), append one event; the view writes the head and one check document.`,
      ],
    };
  },
};

export default incidentsBench;
