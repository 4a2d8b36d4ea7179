/**
 * The life cycle of checks on disk, measured as an operator would: a fresh DATA_DIR, checks
 * imported over the admin import route, the service stopped cleanly, the files summed.
 *
 * Four parts, each on a data directory of its own (none reads another's output), any subset
 * run alone with LIFECYCLE_PARTS (comma-separated; all four when unset):
 *   probed    bytes per probed check (LIFECYCLE_ENDPOINTS, LIFECYCLE_PROBED_EVENTS), at steady
 *             state and again after the bounded fills (LIFECYCLE_FILL_CHECKS; 0: not)
 *   imported  bytes per imported check
 *   steady    the retention ratio: data dir after 120 simulated days / after 60
 *   rebuild   a full rebuild of every view after a prune / before it
 * e.g. `LIFECYCLE_PARTS=steady npm run bench -- --quick lifecycle`. A subset still rewrites the
 * module's whole generated section of docs/benchmarks.md (restore it before committing).
 */
import { isReactor } from '../src/platform/projections/projection.js';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createHttpApp } from '../src/app/http-app.js';
import { projections, upcasters } from '../src/app/contexts.js';
import { loadConfig } from '../src/platform/config/config.js';
import { silentLogger } from '../src/platform/logging/logger.js';
import { createPlatform, type Platform } from '../src/platform/platform.js';
import { CheckRetention } from '../src/checks/application/retention.js';
import { ProbeRecorder } from '../src/probing/application/probe-recorder.js';
import type { BenchFigure, BenchModule } from './bench.js';

const ADMIN = 'bench-admin-token-0123456789';
const DAY_MS = 86_400_000;

interface Service {
  platform: Platform;
  admin(method: string, url: string, body?: unknown): Promise<any>;
  close(): Promise<void>;
}

async function startService(dataDir: string, env: Record<string, string> = {}): Promise<Service> {
  mkdirSync(dataDir, { recursive: true });
  // ROLE=api by default: no scheduler, prober or hourly retention worker; this process still
  // applies the projections, and the bench runs retention itself with the simulated clock.
  const config = loadConfig({ DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'silent', ROLE: 'api', ...env });
  const platform = await createPlatform(config, { projections: projections(), upcasters: upcasters(), withRunner: true, withTransport: true, logger: silentLogger });
  await platform.runner!.start();
  const app = await createHttpApp(platform);
  await app.getHttpAdapter().getInstance().ready();
  const admin = async (method: string, url: string, body?: unknown) => {
    const response = await app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, payload: body === undefined ? undefined : JSON.stringify(body) });
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json().data;
  };
  return {
    platform,
    admin,
    async close() {
      await app.close();
      await platform.close();
    },
  };
}

/** A team, one project and `count` endpoints, created over the application API. */
async function provision(service: Service, count: number): Promise<{ teamId: number; endpointIds: number[] }> {
  const team = await service.admin('POST', '/api/v2/teams', { name: 'Bench' });
  const project = await service.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Web' });
  const endpointIds: number[] = [];
  for (let i = 0; i < count; i++) {
    const endpoint = await service.admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: `e${i}`, url: `https://example.com/${i}` });
    endpointIds.push(endpoint.id);
  }
  return { teamId: team.id, endpointIds };
}

/** A realistic mix: one check in 20 fails (503, or a timeout with no status). */
function check(n: number, at: number) {
  const failed = n % 20 === 0;
  return failed
    ? { checked_at: new Date(at).toISOString(), success: false, status_code: n % 40 === 0 ? 0 : 503, latency_ms: 900 + (n % 300), failure_reason: n % 40 === 0 ? 'timeout: no response within 10000 ms' : 'status: 503' }
    : { checked_at: new Date(at).toISOString(), success: true, status_code: 200, latency_ms: 40 + ((n * 7919) % 160) };
}

/** Imports `perEndpoint` checks into each endpoint, `intervalMs` apart, ending at `endMs`. */
async function importChecks(service: Service, teamId: number, endpointIds: number[], perEndpoint: number, endMs: number, intervalMs: number): Promise<void> {
  const chunk = 5000;
  for (const endpointId of endpointIds) {
    for (let start = 0; start < perEndpoint; start += chunk) {
      const checks = [];
      for (let i = start; i < Math.min(perEndpoint, start + chunk); i++) checks.push(check(i, endMs - (perEndpoint - i) * intervalMs));
      await service.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`, { checks });
    }
  }
}

function filesBytes(dataDir: string): Record<string, number> {
  const sizes: Record<string, number> = {};
  for (const name of readdirSync(dataDir)) sizes[name] = statSync(join(dataDir, name)).size;
  return sizes;
}

function total(sizes: Record<string, number>): number {
  return Object.values(sizes).reduce((a, b) => a + b, 0);
}

/** Bytes per table and index (dbstat), for "where the bytes go". */
function bytesByObject(file: string): Array<[string, number]> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db.prepare('SELECT name, sum(pgsize) AS bytes FROM dbstat GROUP BY name ORDER BY bytes DESC').all() as Array<{ name: string; bytes: number }>;
    return rows.map((r) => [r.name, r.bytes]);
  } finally {
    db.close();
  }
}

async function bytesPerCheck(workDir: string, checks: number, log: (line: string) => void): Promise<{ perCheck: number; events: number; views: number; where: string[] }> {
  const dataDir = join(workDir, 'bytes');
  const provisioning = await startService(dataDir);
  const { teamId, endpointIds } = await provision(provisioning, 10);
  await provisioning.close();
  const emptyBytes = filesBytes(dataDir);
  const service = await startService(dataDir);
  log(`importing ${checks} checks into 10 endpoints`);
  await importChecks(service, teamId, endpointIds, checks / 10, Date.now() - 60_000, 30_000);
  await service.close();
  const sizes = filesBytes(dataDir);
  const perCheck = (total(sizes) - total(emptyBytes)) / checks;
  const where: string[] = [];
  for (const file of ['events.sqlite', 'views.sqlite']) {
    const objects = bytesByObject(join(dataDir, file)).filter(([, bytes]) => bytes / checks >= 5);
    where.push(`${file}: ${objects.map(([name, bytes]) => `${name} ${Math.round(bytes / checks)}`).join(', ')} (bytes per check)`);
  }
  return {
    perCheck,
    events: ((sizes['events.sqlite'] ?? 0) - (emptyBytes['events.sqlite'] ?? 0)) / checks,
    views: ((sizes['views.sqlite'] ?? 0) - (emptyBytes['views.sqlite'] ?? 0)) / checks,
    where,
  };
}


const PROBE_INTERVAL_SECONDS = 5;

/**
 * A local HTTP target: 200 with a page of LIFECYCLE_BODY_BYTES bytes (default 512; the prober
 * keeps a successful answer's first 16 bytes as the check's excerpt, `<!doctype html><` here),
 * or `ok` with LIFECYCLE_BODY_BYTES=2 (the target of sessions before 19); and the verification
 * page of each endpoint. LIFECYCLE_BODY_VARIES=1 starts each answer with a counter, so no two
 * checks keep the same excerpt (what a check's excerpt costs when it is not its stream's
 * constant).
 */
const BODY_BYTES = Number(process.env.LIFECYCLE_BODY_BYTES ?? 512);
const BODY_VARIES = process.env.LIFECYCLE_BODY_VARIES === '1';
/**
 * LIFECYCLE_LATENCY_MS (default 0: answer at once): the target answers after this many ms plus up
 * to a quarter more, and the bounded fills record latencies spread the same way. A local answer
 * takes 1-4 ms, below the latency threshold's materiality floor, so the threshold stays the same
 * for ever and every timing fits in one byte: with real latencies a check stores more (the
 * threshold moves with nearly every check; timings take two bytes).
 */
const LATENCY_MS = Number(process.env.LIFECYCLE_LATENCY_MS ?? 0);

/** A latency of the spread LIFECYCLE_LATENCY_MS asks for, from a counter (deterministic). */
function spreadLatency(n: number): number {
  return LATENCY_MS + ((n * 37) % (Math.floor(LATENCY_MS / 4) + 1));
}

async function startTarget(): Promise<{ url: string; tokens: Map<number, string>; successExcerpt(): string; close(): Promise<void> }> {
  const tokens = new Map<number, string>();
  const bodyBytes = BODY_BYTES;
  const page = bodyBytes === 2 ? 'ok' : `<!doctype html><html><head><title>Status</title></head><body>${'<p>All systems operational.</p>'.repeat(Math.ceil(bodyBytes / 31))}`.slice(0, bodyBytes);
  let answers = 0;
  let delayed = 0;
  const answer = BODY_VARIES ? () => `<!--${String(answers++).padStart(10, '0')}-->${page}`.slice(0, page.length) : () => page;
  const server: Server = createServer((request, response) => {
    const verification = /^\/\.well-known\/monitor-verification\/(\d+)$/.exec(request.url ?? '');
    if (verification) {
      const token = tokens.get(Number(verification[1]));
      response.writeHead(token ? 200 : 404, { 'content-type': 'text/plain' });
      response.end(token ?? 'unknown');
      return;
    }
    const body = answer();
    const send = () => {
      response.writeHead(200, { 'content-type': bodyBytes === 2 ? 'text/plain' : 'text/html', 'content-length': String(Buffer.byteLength(body)) });
      response.end(body);
    };
    if (LATENCY_MS > 0) setTimeout(send, spreadLatency(delayed++));
    else send();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tokens,
    // What the prober keeps of a successful answer (its first 16 bytes).
    successExcerpt: () => answer().slice(0, 16),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/**
 * Rows of one event type in the compact log, and what their columns hold (content bytes, not
 * pages; a derived event id, stored as the integer 0, holds none; one that joined an earlier
 * append's commit holds its recorded_at offset, a one- or two-byte integer).
 */
function eventContent(file: string, type: string): { rows: number; data: number; metadata: number; eventId: number; hash: number; commits: number; commitMetadata: number } {
  const db = new Database(file, { readonly: true });
  try {
    const row = db
      .prepare(
        `SELECT count(*) AS rows, coalesce(sum(length(CAST(data AS BLOB))), 0) AS data, coalesce(sum(length(metadata)), 0) AS metadata,
                coalesce(sum(CASE typeof(event_id) WHEN 'blob' THEN length(event_id) WHEN 'text' THEN length(CAST(event_id AS BLOB))
                  WHEN 'integer' THEN (CASE WHEN event_id = 0 THEN 0 WHEN abs(event_id) < 128 THEN 1 WHEN abs(event_id) < 32768 THEN 2 ELSE 4 END) ELSE 0 END), 0) AS eventId,
                coalesce(sum(length(hash)), 0) AS hash
         FROM event_log WHERE type IN (SELECT id FROM event_types WHERE name = ?)`,
      )
      .get(type) as { rows: number; data: number; metadata: number; eventId: number; hash: number };
    const commits = db.prepare(`SELECT count(*) AS n, coalesce(sum(length(metadata)), 0) AS bytes FROM event_commits`).get() as { n: number; bytes: number };
    return { ...row, commits: commits.n, commitMetadata: commits.bytes };
  } finally {
    db.close();
  }
}

/** dbstat per object, grouped: tables by name, `(indexes)` for every index of the file. */
function pagesByKind(file: string): Map<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare(`SELECT d.name AS name, s.type AS type, sum(d.pgsize) AS bytes FROM dbstat d LEFT JOIN sqlite_schema s ON s.name = d.name GROUP BY d.name`)
      .all() as Array<{ name: string; type: string | null; bytes: number }>;
    const out = new Map<string, number>();
    for (const row of rows) out.set(row.name, row.bytes);
    return out;
  } finally {
    db.close();
  }
}

/** The fewest CheckRecorded events any endpoint's check stream holds (0 before every endpoint has one). */
function fewestChecksPerEndpoint(file: string, endpoints: number): number {
  // A read-only connection of the same SQLite library as the service's (so its locks are kept).
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare(`SELECT count(*) AS n FROM event_log WHERE type IN (SELECT id FROM event_types WHERE name = 'CheckRecorded') GROUP BY stream`)
      .pluck()
      .all() as number[];
    return rows.length < endpoints ? 0 : Math.min(...rows);
  } finally {
    db.close();
  }
}

/** The log's newest position in a stopped service's file. */
function headOf(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT coalesce(max(position), 0) FROM event_log').pluck().get() as number);
  } finally {
    db.close();
  }
}

/** Everything the bench measures of a stopped service's DATA_DIR. */
interface DiskSnapshot {
  files: Record<string, number>;
  objects: Map<string, number>;
  content: ReturnType<typeof eventContent>;
}

/** Rows (a table's) or entries (an index's) per table and index of both databases, keyed `file:object` as `objectsBytes`. */
function objectsEntries(dataDir: string): Map<string, number> {
  const entries = new Map<string, number>();
  for (const name of ['events.sqlite', 'views.sqlite']) {
    const db = new Database(join(dataDir, name), { readonly: true });
    try {
      const rows = db.prepare(`SELECT name, sum(ncell) AS cells FROM dbstat WHERE pagetype = 'leaf' GROUP BY name`).all() as Array<{ name: string; cells: number }>;
      for (const row of rows) entries.set(`${name}:${row.name}`, row.cells);
    } finally {
      db.close();
    }
  }
  return entries;
}

/**
 * Growth per check between two snapshots with each table and index taken at its average density
 * at the later one (its bytes per row or entry, interior pages included, times the rows or
 * entries it gained): what the window's growth converges to over a long run. A short window's
 * page count is mostly where each endpoint's last page in a per-endpoint index stood (one
 * page split more or less is 4 KB); a table whose rows only change in place (an alert status,
 * its sample chunks once ten are kept) gains none.
 */
function growthAtDensity(from: Map<string, number>, to: Map<string, number>, bytes: Map<string, number>, checks: number): { perCheck: number; objects: Array<[string, number]> } {
  const objects: Array<[string, number]> = [];
  for (const [name, entries] of to) {
    const gained = entries - (from.get(name) ?? 0);
    if (gained > 0 && entries > 0) objects.push([name, ((bytes.get(name) ?? 0) / entries) * (gained / checks)]);
  }
  objects.sort((a, b) => b[1] - a[1]);
  return { perCheck: objects.reduce((sum, [, b]) => sum + b, 0), objects };
}

/** Bytes per table and index of both databases, keyed `file:object`. */
function objectsBytes(dataDir: string): Map<string, number> {
  const objects = new Map<string, number>();
  for (const name of ['events.sqlite', 'views.sqlite']) {
    for (const [object, bytes] of pagesByKind(join(dataDir, name))) objects.set(`${name}:${object}`, bytes);
  }
  return objects;
}

function snapshot(dataDir: string): DiskSnapshot {
  return { files: filesBytes(dataDir), objects: objectsBytes(dataDir), content: eventContent(join(dataDir, 'events.sqlite'), 'CheckRecorded') };
}

export interface ProbedGrowth {
  checks: number;
  perCheck: number;
  /** Growth of each file of DATA_DIR (the WAL files included), per check. */
  files: Array<[string, number]>;
  /** Growth of each table and index, per check (dbstat, pages). */
  objects: Array<[string, number]>;
  /** What the CheckRecorded rows hold, per check (content bytes). */
  content: { data: number; metadata: number; eventId: number; hash: number; commitRowsPerCheck: number; commitMetadata: number };
}

/** Growth from one snapshot to a later one, per CheckRecorded event added between them. */
function growth(from: DiskSnapshot, to: DiskSnapshot): ProbedGrowth {
  const checks = to.content.rows - from.content.rows;
  const files = Object.keys(to.files)
    .map((name): [string, number] => [name, (to.files[name] - (from.files[name] ?? 0)) / checks])
    .filter(([, b]) => Math.abs(b) >= 0.5)
    .sort((a, b) => b[1] - a[1]);
  const objects = [...to.objects]
    .map(([name, bytes]): [string, number] => [name, (bytes - (from.objects.get(name) ?? 0)) / checks])
    .filter(([, b]) => Math.abs(b) >= 1)
    .sort((a, b) => b[1] - a[1]);
  const per = (key: 'data' | 'metadata' | 'eventId' | 'hash' | 'commits' | 'commitMetadata') => (to.content[key] - from.content[key]) / checks;
  return {
    checks,
    perCheck: (total(to.files) - total(from.files)) / checks,
    files,
    objects,
    content: { data: per('data'), metadata: per('metadata'), eventId: per('eventId'), hash: per('hash'), commitRowsPerCheck: per('commits'), commitMetadata: per('commitMetadata') },
  };
}

/** From provisioning (the figure earlier sessions measured), with the steady-state window inside it. */
export interface ProbedBytes extends ProbedGrowth {
  /**
   * The same growth over the window after the warm-up: every endpoint had recorded
   * `warmupChecks` checks and every view had applied them, so each endpoint's one-offs (its
   * first alert signals event and alerts stream, its alert_status and analytics_endpoints
   * documents, the hour's first rollup rows, the shm file) are behind it.
   */
  steady: ProbedGrowth & { warmupChecks: number };
  /**
   * A second window on the same data dir once every endpoint has recorded `fillChecks` more
   * checks (`fillBaselines`), so what grows only with an endpoint's first checks (its alert
   * status's baseline samples: the document's tail, then a chunk of 100 every 100 checks until
   * ten are kept) is complete: the figure a data dir shows after months. Absent when
   * LIFECYCLE_FILL_CHECKS is 0.
   */
  afterFill?: ProbedGrowth & {
    /** The same window's growth per check with each table and index at its average density (`growthAtDensity`; tables and indexes only, no WAL). */
    atDensity: { perCheck: number; objects: Array<[string, number]> };
    /** Checks recorded per endpoint by the fill, on average. */
    fillChecks: number;
    fillSeconds: number;
    alertingPerEndpoint: number;
  };
  seconds: number;
}

/** How many checks each endpoint records before the steady-state window opens (LIFECYCLE_WARMUP_CHECKS). */
const WARMUP_CHECKS = Number(process.env.LIFECYCLE_WARMUP_CHECKS ?? 3);

/**
 * How many checks each endpoint records before the after-fill window (LIFECYCLE_FILL_CHECKS; 0:
 * no such window). 1,100: an alert status keeps its latest 1,000 baseline samples, ten chunks
 * of 100 beside the document, and from the 1,100th on each new chunk replaces the oldest.
 */
const FILL_CHECKS = Number(process.env.LIFECYCLE_FILL_CHECKS ?? 1_100);

/**
 * Records at least `checks` successful scheduled checks for each endpoint through the service's
 * own recorder, as the prober hands them over but without the HTTP request: the same events,
 * judge and projections, a thousand times faster than probing at PROBE_INTERVAL_SECONDS. Each
 * endpoint's checks follow one another (as its probes do), the endpoints side by side; the
 * latencies are those of a local target (1-4 ms) and the excerpt the target's answer. Each
 * endpoint records up to 199 more than `checks`, its own number: endpoints that started
 * together would otherwise reach every boundary together (a baseline chunk every 100 checks,
 * the last page of their range in a per-endpoint index full at once), which a data dir whose
 * endpoints came one by one does not see.
 */
async function fillBaselines(service: Service, endpointIds: number[], checks: number, successExcerpt: () => string): Promise<number> {
  const recorder = new ProbeRecorder(service.platform);
  const firstDue = Date.now() - checks - 200;
  let recorded = 0;
  await Promise.all(
    endpointIds.map(async (id, i) => {
      const endpoint = await recorder.loadEndpoint(id);
      if (!endpoint) throw new Error(`endpoint ${id} not found`);
      const own = checks + ((i * 37) % 200);
      recorded += own;
      for (let n = 0; n < own; n++) {
        const latency = LATENCY_MS > 0 ? spreadLatency(n + id) : 1 + ((n * 7 + id) % 4);
        await recorder.record({
          // A scheduled job's id: the endpoint and its due time (unique per check here).
          jobId: `${id}:${firstDue + n}`,
          source: 'scheduled',
          endpoint,
          outcome: { success: true, status_code: 200, latency_ms: latency, time_to_first_byte_ms: latency, duration_ms: latency, body_complete: true, failure_reason: null, response_excerpt: successExcerpt(), checked_at: new Date().toISOString() },
        });
      }
    }),
  );
  return recorded;
}

/**
 * Disk per probed check: `endpoints` endpoints at PROBE_INTERVAL_SECONDS against a local target, scheduled and
 * probed by the whole service (ROLE=all). Three stops, each measured (files, dbstat, the
 * CheckRecorded rows' content): after provisioning (enabling the endpoints, one event each,
 * counts as provisioning); after the warm-up (every endpoint has recorded WARMUP_CHECKS checks
 * and the views applied them); after the log's head has moved `wanted` events since
 * provisioning. Growth per CheckRecorded event from the first stop (what earlier sessions
 * measured, with each endpoint's one-offs) and from the second (steady state).
 */
export async function probedBytes(workDir: string, endpoints: number, wanted: number, log: (line: string) => void): Promise<ProbedBytes> {
  const dataDir = join(workDir, 'probed');
  const file = join(dataDir, 'events.sqlite');
  const target = await startTarget();
  const env = { ROLE: 'all', RATE_LIMIT_PER_MINUTE: '1000000' };
  try {
    let service = await startService(dataDir, env);
    const team = await service.admin('POST', '/api/v2/teams', { name: 'Bench' });
    const base = `/api/v2/teams/${team.id}`;
    const project = await service.admin('POST', `${base}/projects`, { name: 'Web' });
    const ids: number[] = [];
    for (let i = 0; i < endpoints; i++) {
      const endpoint = await service.admin('POST', `${base}/endpoints`, {
        project_id: project.id,
        name: `target ${i}`,
        url: `${target.url}/health?n=${i}`,
        method: 'GET',
        interval_seconds: PROBE_INTERVAL_SECONDS,
        // As long as the interval: on a loaded shared machine a 1 s timeout fails checks (and
        // opens incidents), which measures the incident views instead of the checks.
        timeout_seconds: PROBE_INTERVAL_SECONDS,
        expected_status: 200,
      });
      target.tokens.set(endpoint.id, endpoint.verification_token);
      ids.push(endpoint.id);
    }
    for (const id of ids) {
      await service.admin('POST', `${base}/endpoints/${id}/verify-destination`);
      await service.admin('PATCH', `${base}/endpoints/${id}`, { enabled: true });
    }
    // Stopped right away: the few checks of this moment count as provisioning.
    await service.close();
    const provisioned = snapshot(dataDir);
    const provisionedHead = headOf(file);

    service = await startService(dataDir, env);
    const started = performance.now();
    log(`probing ${endpoints} endpoints at ${PROBE_INTERVAL_SECONDS} s until each has recorded ${WARMUP_CHECKS} checks (warm-up)`);
    while (fewestChecksPerEndpoint(file, endpoints) < WARMUP_CHECKS) await new Promise((resolve) => setTimeout(resolve, 250));
    await settle(service);
    await service.close();
    const warm = snapshot(dataDir);

    service = await startService(dataDir, env);
    log(`probing until the log's head has moved ${wanted} events since provisioning`);
    const events = service.platform.events;
    // Checks are most of what is appended: wait on the head, then count exactly once stopped.
    while (((await events.headPosition()) ?? 0) - provisionedHead < wanted) await new Promise((resolve) => setTimeout(resolve, 250));
    await settle(service);
    const seconds = (performance.now() - started) / 1000;
    await service.close();
    const done = snapshot(dataDir);
    const result: ProbedBytes = { ...growth(provisioned, done), steady: { ...growth(warm, done), warmupChecks: WARMUP_CHECKS }, seconds };
    if (FILL_CHECKS <= 0) return result;

    // ROLE=api: no scheduler or prober while the checks are recorded straight through.
    service = await startService(dataDir, { ...env, ROLE: 'api' });
    log(`recording ${FILL_CHECKS} checks for each endpoint through the recorder (the bounded fills)`);
    const fillStarted = performance.now();
    const fillRecorded = await fillBaselines(service, ids, FILL_CHECKS, target.successExcerpt);
    await settle(service);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    await service.close();
    const filled = snapshot(dataDir);
    const filledEntries = objectsEntries(dataDir);
    const filledHead = headOf(file);

    service = await startService(dataDir, env);
    log(`probing until the log's head has moved ${wanted} events after the fills`);
    while (((await service.platform.events.headPosition()) ?? 0) - filledHead < wanted) await new Promise((resolve) => setTimeout(resolve, 250));
    await settle(service);
    await service.close();
    // The alerting view's tables and their indexes, whole (their names carry the generation).
    const alerting = [...filled.objects].filter(([name]) => name.includes('__alerting__')).reduce((sum, [, bytes]) => sum + bytes, 0);
    const last = snapshot(dataDir);
    const afterFill = growth(filled, last);
    const atDensity = growthAtDensity(filledEntries, objectsEntries(dataDir), last.objects, afterFill.checks);
    return { ...result, afterFill: { ...afterFill, atDensity, fillChecks: fillRecorded / endpoints, fillSeconds, alertingPerEndpoint: alerting / endpoints } };
  } finally {
    await target.close();
  }
}

const VIEWS = ['analytics_rollups', 'analytics_endpoints'];

async function settle(service: Service): Promise<void> {
  const head = await service.platform.events.headPosition();
  if (head === null) return;
  while (!(await service.platform.freshness.waitFor(head, VIEWS))) {
    /* keep waiting: the bench has no deadline */
  }
}

/** One retention pass at simulated time `now`, then the freed pages given back, as the hourly worker does. */
async function prune(service: Service, now: number, days: number): Promise<void> {
  await new CheckRetention(service.platform.events, { days }).apply(now);
  await settle(service);
  await service.platform.views.reclaimSpace?.();
}

/**
 * Steady state: `endpoints` endpoints checked every `intervalMs` for 120 simulated days at
 * retention 30, imported and pruned 10 days at a time (the clock is the simulated day).
 */
async function steadyState(
  workDir: string,
  endpoints: number,
  intervalMs: number,
  log: (line: string) => void,
): Promise<{ day60: number; day120: number; checks: number; objectsGrown: Array<[string, number]> }> {
  const dataDir = join(workDir, 'steady');
  let service = await startService(dataDir);
  const { teamId, endpointIds } = await provision(service, endpoints);
  const start = Math.floor((Date.now() - 121 * DAY_MS) / DAY_MS) * DAY_MS;
  const perStep = Math.round((10 * DAY_MS) / intervalMs);
  let day60 = 0;
  let day60Objects = new Map<string, number>();
  let checks = 0;
  for (let day = 10; day <= 120; day += 10) {
    const stepEnd = start + day * DAY_MS;
    await importChecks(service, teamId, endpointIds, perStep, stepEnd, intervalMs);
    checks += perStep * endpoints;
    await settle(service);
    await prune(service, stepEnd, 30);
    if (day === 60 || day === 120) {
      await service.close();
      const bytes = total(filesBytes(dataDir));
      log(`day ${day}: ${(bytes / 1e6).toFixed(1)} MB on disk after ${checks} checks`);
      for (const file of ['events.sqlite', 'views.sqlite']) {
        log(`  ${file}: ${bytesByObject(join(dataDir, file)).slice(0, 6).map(([name, b]) => `${name} ${(b / 1e6).toFixed(1)} MB`).join(', ')}`);
      }
      const objects = objectsBytes(dataDir);
      if (day === 60) {
        day60 = bytes;
        day60Objects = objects;
      } else {
        const objectsGrown = [...objects]
          .map(([name, size]): [string, number] => [name, size - (day60Objects.get(name) ?? 0)])
          .sort((a, b) => b[1] - a[1]);
        return { day60, day120: bytes, checks, objectsGrown };
      }
      service = await startService(dataDir);
    }
  }
  throw new Error('unreachable');
}

/** Full rebuild of every view, in ms. */
async function rebuildAll(service: Service): Promise<number> {
  const runner = service.platform.runner!;
  const started = performance.now();
  for (const projection of runner.projections.filter((p) => !isReactor(p))) await runner.rebuild(projection.name);
  return performance.now() - started;
}

/** Rebuild time of 120 days of checks, then of the same log after a prune at retention 30. */
async function rebuildBeforeAfter(workDir: string, intervalMs: number, log: (line: string) => void): Promise<{ before: number; after: number; checks: number }> {
  const dataDir = join(workDir, 'rebuild');
  const service = await startService(dataDir);
  const { teamId, endpointIds } = await provision(service, 10);
  const now = Date.now();
  const perEndpoint = Math.round((120 * DAY_MS) / intervalMs);
  await importChecks(service, teamId, endpointIds, perEndpoint, now - 60_000, intervalMs);
  await settle(service);
  log(`rebuilding ${perEndpoint * 10} checks over 120 days`);
  const before = await rebuildAll(service);
  await prune(service, now, 30);
  const after = await rebuildAll(service);
  await service.close();
  return { before, after, checks: perEndpoint * 10 };
}

/** The bench's parts, in the order a run takes them (see the comment at the top of the file). */
export const LIFECYCLE_PARTS = ['probed', 'imported', 'steady', 'rebuild'] as const;
export type LifecyclePart = (typeof LIFECYCLE_PARTS)[number];

/** The parts a LIFECYCLE_PARTS value names (comma-separated; unset or empty: all of them). */
export function lifecycleParts(value: string | undefined): Set<LifecyclePart> {
  const names = (value ?? '').split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) return new Set(LIFECYCLE_PARTS);
  const unknown = names.filter((name) => !(LIFECYCLE_PARTS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`LIFECYCLE_PARTS: unknown part ${unknown.join(', ')} (parts: ${LIFECYCLE_PARTS.join(', ')})`);
  return new Set(names as LifecyclePart[]);
}

const MB = 1e6;

const bench: BenchModule = {
  name: 'lifecycle',
  async run({ quick, workDir, log }) {
    const figures: BenchFigure[] = [];
    const notes: string[] = [];
    const parts = lifecycleParts(process.env.LIFECYCLE_PARTS);

    if (parts.has('probed')) {
      // LIFECYCLE_ENDPOINTS: fewer endpoints for a loaded machine, where 300 at 5 s time out and
      // open incidents (then the incident views, not the checks, are measured).
      const probedEndpoints = Number(process.env.LIFECYCLE_ENDPOINTS ?? 300);
      // LIFECYCLE_PROBED_EVENTS: how far the log's head must move (before/after pairs of runs on a loaded machine use 3,000).
      const probedWanted = Number(process.env.LIFECYCLE_PROBED_EVENTS ?? (quick ? 6_000 : 30_000));
      const probed = await probedBytes(workDir, probedEndpoints, probedWanted, log);
      const probedSteady = probed.steady;
      const window = `${probedEndpoints} endpoints at ${PROBE_INTERVAL_SECONDS} s against a local target, all files of DATA_DIR`;
      figures.push({ name: `bytes per probed check on disk at steady state (${probedSteady.checks} checks after each endpoint's first ${probedSteady.warmupChecks}, ${window})`, value: probedSteady.perCheck, unit: 'B', aim: '<= 120' });
      for (const [name, bytes] of probedSteady.files) figures.push({ name: `of which ${name}`, value: bytes, unit: 'B' });
      figures.push({ name: `bytes per probed check on disk from provisioning (${probed.checks} checks, the same run; the figure of sessions before 17)`, value: probed.perCheck, unit: 'B' });
      for (const [name, bytes] of probed.files) figures.push({ name: `of which ${name}`, value: bytes, unit: 'B' });
      const afterFill = probed.afterFill;
      if (afterFill) {
        figures.push({ name: `bytes per probed check on disk after the bounded fills (${afterFill.checks} checks once each endpoint had recorded ${FILL_CHECKS}-${FILL_CHECKS + 199} more, the same data dir: the long-run figure)`, value: afterFill.perCheck, unit: 'B', aim: '<= 120' });
        for (const [name, bytes] of afterFill.files) figures.push({ name: `of which ${name}`, value: bytes, unit: 'B' });
        figures.push({ name: 'the same window with each table and index at its average density (rows or entries gained x bytes per row or entry: no page-split luck)', value: afterFill.atDensity.perCheck, unit: 'B' });
        figures.push({ name: "the alerting view's tables and indexes per endpoint once filled (alert status and its baseline sample chunks)", value: afterFill.alertingPerEndpoint, unit: 'B' });
      }
      const objectsNote = (growth: ProbedGrowth) => growth.objects.map(([name, bytes]) => `${name} ${bytes.toFixed(1)}`).join(', ');
      const contentNote = (growth: ProbedGrowth) =>
        `data ${growth.content.data.toFixed(1)}, event id ${growth.content.eventId.toFixed(1)}, own metadata ${growth.content.metadata.toFixed(1)}, hash ${growth.content.hash.toFixed(1)}; commit rows per check ${growth.content.commitRowsPerCheck.toFixed(2)} holding ${growth.content.commitMetadata.toFixed(1)} B of metadata JSON per check`;
      notes.push(
        `Probed checks: a fresh DATA_DIR; a team, a project and ${probedEndpoints} endpoints registered, verified and enabled over the admin routes (ROLE=all, in this process, against a node:http target in this process answering ${BODY_BYTES === 2 ? '`ok`' : `a ${BODY_BYTES}-byte page`}${LATENCY_MS > 0 ? ` after ${LATENCY_MS}-${LATENCY_MS + Math.floor(LATENCY_MS / 4)} ms (LIFECYCLE_LATENCY_MS; the fills record latencies spread the same way)` : ''}${BODY_VARIES ? ' that begins with a counter, so each check keeps another excerpt' : ''}), the service stopped and everything measured (files, dbstat, the CheckRecorded rows); started again, probing until every endpoint had recorded ${probedSteady.warmupChecks} checks (LIFECYCLE_WARMUP_CHECKS) and every view applied them, stopped and measured again; started again, probing until the log's head had moved ${probedWanted} events since provisioning and every view applied them (${probed.seconds.toFixed(0)} s in all), stopped cleanly and measured. Each figure is the growth between two stops divided by the CheckRecorded events added between them: steady state from the second stop, so each endpoint's one-offs (its first AlertSignalsCarriedOver event and its alerts stream, its alert_status and analytics_endpoints documents, the hour's first rollup rows) and the shm file (a fixed 32 KB) are behind it; from provisioning, from the first, as sessions before 17 measured. WAL files are what a clean stop leaves. Not behind it: the alerting view's fill (an endpoint's alert status grows with its first 1,100 checks: the document's baseline samples, then a chunk of 100 samples every 100 checks until ten are kept; the after-fill window below has it behind), and a window that crosses an hour counts that hour's first rollup rows.`,
        `Probed checks at steady state, per table and index (dbstat pages grown per check): ${objectsNote(probedSteady)}.`,
        `Probed checks at steady state, what a CheckRecorded row holds (content bytes per check): ${contentNote(probedSteady)}.`,
        `Probed checks from provisioning, per table and index (dbstat pages grown per check): ${objectsNote(probed)}.`,
        ...(afterFill
          ? [
              `After the bounded fills (LIFECYCLE_FILL_CHECKS): the service started again with ROLE=api, ${FILL_CHECKS} to ${FILL_CHECKS + 199} successful scheduled checks recorded for each endpoint (${afterFill.fillChecks.toFixed(0)} on average, each endpoint its own number so that they do not reach a chunk or a page boundary together) through its own recorder (the prober's path without the HTTP request: same events, judge and projections; ${afterFill.fillSeconds.toFixed(0)} s), stopped and measured; started again with ROLE=all, probing until the log's head had moved ${probedWanted} more events, stopped and measured. An endpoint's alert status keeps its latest 1,000 baseline samples (a document's tail and ten chunks of 100), so past 1,100 checks a new chunk replaces the oldest and the document is rewritten in place: this window is what a data dir running for months grows by. Per table and index (dbstat pages grown per check): ${objectsNote(afterFill)}. The same at each one's average density (rows or entries gained per check x its bytes per row or entry at the end): ${afterFill.atDensity.objects.filter(([, b]) => b >= 0.1).map(([name, b]) => `${name} ${b.toFixed(1)}`).join(', ')}. What a CheckRecorded row holds: ${contentNote(afterFill)}.`,
            ]
          : []),
        `Probed checks from provisioning, what a CheckRecorded row holds (content bytes per check): ${contentNote(probed)}.`,
        'Packed records (issue 31): the SQLite log stores a CheckRecorded\'s data and every commit\'s metadata as a JSON array of values under a key list kept once (event_shapes), read back byte for byte: data 194 -> 55 B and commit metadata 62 -> 41 B per probed check; 616 -> 467 and 639 -> 492 B per probed check in two alternating pairs of builds (docs/benchmarks.md, "Write path before and after").',
        'Issue 31, second step (docs/benchmarks.md, "Disk per probed check, second step"): event ids derived from the position (no bytes per event), metadata naming only its actor interned once (a check\'s commit metadata 40 -> 2 B; the check append no longer repeats the job id as its correlation id), occurred_at offsets as integers (8 -> 2 B), CheckRecorded v3 keeping a scheduled job id as its due time\'s lag (about 19 -> 3 B), and the checks view v4 (source and response_excerpt_omitted as boolean columns: about 35 B less a row).',
        'Issue 31, third step (docs/benchmarks.md, "Disk per probed check, third step"): appends with the same metadata share a commit row (a check\'s 18-byte commit row becomes a one- or two-byte recorded_at offset in event_id), the checks view v6 keeps the check id once (the row key; the list index ends at checked_at), CheckRecorded v4 leaves out the endpoint id its stream names, and alert_status keeps no recent job ids.',
        'Issue 31, fourth step (docs/benchmarks.md, "Disk per probed check, fourth step"): analytics\' raw rows keyed by their check id (the rowid; their indexes end at checked_at_ms), and no team index on them (a team\'s raw rows are read through its projects\'): raw rows with their indexes 105 -> 62 B a probed check.',
      );
      probedSteady.objects.forEach(([name, bytes]) => log(`steady state: ${name} ${bytes.toFixed(1)} B per check`));
      afterFill?.objects.forEach(([name, bytes]) => log(`after the fills: ${name} ${bytes.toFixed(1)} B per check`));
    }

    if (parts.has('imported')) {
      const checks = quick ? 10_000 : 100_000;
      const bytes = await bytesPerCheck(workDir, checks, log);
      figures.push({ name: `bytes per check on disk (${checks} imported, 10 endpoints, events + views)`, value: bytes.perCheck, unit: 'B', aim: '<= 400' });
      figures.push({ name: 'of which event log', value: bytes.events, unit: 'B' });
      figures.push({ name: 'of which views', value: bytes.views, unit: 'B' });
      notes.push(...bytes.where);
      bytes.where.forEach(log);
      notes.push(
        'Bytes per check: a fresh DATA_DIR, checks imported over the admin import route into 10 endpoints (one in 20 failing), the service stopped cleanly, the files summed (provisioning subtracted).',
        "Before this work (main at 2089d85, same command): 1,849 B per check (event log 843 B: CheckRecorded with every null and default, metadata with null fields; views 1,006 B: the checks view's full document 410 B and three indexes 140 B). Then CheckRecorded v2 without defaults and nulls, metadata without nulls, checks view compact with one index: 1,164 B (event log 478 B: the events table 458 B and its (stream_id, revision) index 22 B; views 685 B, of which the checks view 244 B with its index).",
        "Compact storage (issue 12 item 1, this run): the event log's compact layout (stream and type interned as integers, the event id as 16 bytes, occurred_at as ms before recorded_at, one commit row per append carrying recorded_at and the shared metadata) takes the log from 478 to about 220 B per check: event_log about 206 B, of which the CheckRecorded data JSON is about 150 B, and its (stream, revision) index about 14 B. Typed columns in the read store take the checks view from 244 to about 63 B (41 B row, 22 B index).",
        "Where the bytes still go (the lines above, per check): the event's data JSON (~150 B, kept readable), the 16-byte event id and the row's few integers; the checks view (~63 B); the analytics views (raw analytics rows ~29 B + two indexes ~49 B, rollups ~20 B at 30 s per check, about 98 B together, after project rollups and four raw-row indexes went and their columns were declared). The last step (this run): the raw rows' `minute` column and its two indexes (~35 B) went, range edges being read by checked_at_ms through the (scope, success, checked_at_ms, check_id) indexes p95 uses (`success IN (0, 1)`: two index ranges per scope); 417 B before it (views 198 B).",
      );
    }

    if (parts.has('steady')) {
      // 100 endpoints as the issue asks. Every 5 minutes (a common probe interval) in the full run,
      // 3.5 M checks; every 15 minutes in the quick one, 1.2 M checks. What a check leaves behind
      // for ever (its share of the hour's rollup row and summary) weighs more the fewer checks an
      // hour holds, so the quick run is the harder case of the two.
      const intervalMinutes = quick ? 15 : 5;
      const endpointCount = 100;
      const steady = await steadyState(workDir, endpointCount, intervalMinutes * 60_000, log);
      const grown = steady.day120 - steady.day60;
      figures.push({
        name: `data dir after 120 simulated days (${endpointCount} endpoints, a check every ${intervalMinutes} min, retention 30)`,
        value: steady.day120 / MB,
        unit: 'MB',
        baseline: { name: 'after day 60', value: steady.day60 / MB },
        aim: 'ratio <= 1.1',
      });
      // Checks imported between day 60 and day 120 leave this much behind each (rollups, summaries).
      figures.push({ name: 'bytes left per check once it is older than the horizon (growth from day 60 to 120 / checks imported)', value: grown / (steady.checks / 2), unit: 'B' });
      const endpointHours = endpointCount * 60 * 24;
      const objectsGrown = steady.objectsGrown
        .filter(([, bytes]) => bytes >= 0.05 * MB)
        .map(([name, bytes]) => `${name} ${(bytes / MB).toFixed(1)} MB (${(bytes / endpointHours).toFixed(1)} B an endpoint-hour)`)
        .join(', ');
      notes.push(
        'Steady state: checks imported 10 simulated days at a time with old checked_at, one retention pass after each step with the simulated day as the clock; sizes measured with the service stopped.',
        `Steady state, what grows past the horizon: what retention keeps of a pruned check, its share of its endpoint-hour's summary and rollup rows. A ChecksSummarized event (v3) holds the hour sums a column per field (the hours as runs; the project, the check count, the minutes and the region as [value, count] repeats; the failures and three latency figures as plain arrays), stored packed (the SQLite log keeps its top-level key list once); the rollups keep the endpoint's hour packed into its day row (rollups v12: its five sums, about 8 characters) and a 24th of that day row, the project's and team's rows shared by their endpoints. From day 60 to day 120 (this run: ${endpointCount} endpoints, a check every ${intervalMinutes} min, ${endpointHours} endpoint-hours) the data dir grew ${(grown / MB).toFixed(2)} MB (${((100 * grown) / steady.day60).toFixed(1)} % of day 60's size; the aim is 10 %), of which, per table and index (dbstat pages): ${objectsGrown}. A summary here covers 10 simulated days of an endpoint (one retention pass a step); the service's hourly pass makes one an endpoint a day. The share falls with more checks per hour.`,
      );
    }

    if (parts.has('rebuild')) {
      const rebuild = await rebuildBeforeAfter(workDir, quick ? 2 * 3_600_000 : 600_000, log);
      figures.push({
        name: `full rebuild of every view after a prune to 30 of 120 days (${rebuild.checks} checks, 10 endpoints)`,
        value: rebuild.after,
        unit: 'ms',
        baseline: { name: 'before the prune', value: rebuild.before },
      });
      notes.push('Rebuild: a fresh DATA_DIR, 120 days of checks imported into 10 endpoints, every view rebuilt (the baseline), then one retention pass at 30 days and every view rebuilt again; wall-clock time of the same run, so the ratio, not the milliseconds, is the figure on a shared machine.');
    }

    return { title: 'Check life cycle: bytes per check, retention, rebuild', figures, notes };
  },
};

export default bench;
