import { existsSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { AnalyticsQuery } from '../src/analytics/views/rollups/queries.js';
import { Slices } from '../src/analytics/application/slices.js';
import { ViewAnalyticsFacts } from '../src/analytics/views/endpoints/queries.js';
import { bucketRange, makeWindow, type AnalyticsWindow } from '../src/analytics/domain/window.js';
import { rawCheckRow, rollupId, rollupKeysOf, withCheck } from '../src/analytics/domain/rollup.js';
import { CHECK_MINUTES_COLLECTION, RAW_CHECKS_COLLECTION, ROLLUPS_COLLECTION, ROLLUP_MEMBERS_COLLECTION, checkMinuteOf, storedTeamId, teamDocId, widenedCheckMinute, type CheckMinuteRow, type RollupRow, type TeamDoc } from '../src/analytics/views/rollups/view.js';
import {
  ANALYTICS_ENDPOINTS_COLLECTION,
  ANALYTICS_PROJECT_HEALTH_COLLECTION,
  ANALYTICS_PROJECTS_COLLECTION,
  healthShareOf,
  withHealthShare,
  type AnalyticsEndpointDoc,
  type AnalyticsProjectHealthDoc,
} from '../src/analytics/views/endpoints/view.js';
import type { CheckRecordedData } from '../src/checks/domain/check.js';
import { physicalCollection } from '../src/platform/projections/registry.js';
import { ViewReader } from '../src/platform/projections/views.js';
import type { Doc, ViewWrite } from '../src/platform/read-store/read-store.port.js';
import { SqliteReadStore } from '../src/platform/read-store/sqlite/sqlite-read-store.js';
import { analyticsEndpointsProjection } from '../src/analytics/views/endpoints/projection.js';
import { analyticsRollupsProjection } from '../src/analytics/views/rollups/projection.js';
import { CHECKS_SUMMARIZED, checkSummariesStream, retentionHorizon, summarizeChecks, type ChecksSummarizedData } from '../src/checks/domain/check-summary.js';
import type { RecordedEvent } from '../src/platform/event-store/event-store.port.js';
import type { ProjectionHandler } from '../src/platform/projections/projection.js';
import { BatchViewTransaction } from '../src/platform/projections/view-transaction.js';
import type { BenchFigure } from './bench.js';
import { syntheticCheck, type CheckSpread } from './synthetic-checks.js';

/**
 * Issue 32's case: 2,000 (and 10,000) endpoints in one project of one team, 100 applicable checks each over 7
 * days (200,000 checks). Team, project and endpoint analytics for windows of 24 h, 7 d and 90 d
 * (48 buckets, `to` off the minute grid), one request at a time, with the longest event-loop
 * stall seen while each figure's timed requests ran, after its warm-up (perf_hooks.monitorEventLoopDelay,
 * 1 ms resolution: a query that holds the loop for 12 s shows as a 12 s stall; and the main
 * thread's CPU time between two turns of a 1 ms timer), and per request kind the longest
 * main-thread stretch of any window.
 *
 * The views (generation 1 of analytics_rollups and analytics_endpoints) are written directly with
 * the projection's domain functions, as the other analytics case does; queried through the
 * service's AnalyticsQuery and ViewAnalyticsFacts (the HTTP layer is left out).
 */
const TEAM = 1;
const PROJECT = 1;
/** Projects the team's endpoints are split into (ANALYTICS_TEAM_PROJECTS, default 1), in equal consecutive runs; project 1 holds endpoint 1. */
const PROJECTS = Math.max(1, Number(process.env.ANALYTICS_TEAM_PROJECTS ?? 1));
const CHECKS_PER_ENDPOINT = 100;
const DAY = 86_400_000;
const SPAN = 7 * DAY;
const COMMIT_ROWS = 50_000;
/** Timed requests per figure: at least MIN_RUNS, then up to MAX_RUNS while under BUDGET_MS. */
const MIN_RUNS = 5;
const MAX_RUNS = 30;
const BUDGET_MS = 15_000;

/**
 * CHECK_RETENTION_DAYS of the case (ANALYTICS_RETENTION_DAYS; `none`: no horizon, every check
 * kept raw, as before session 20). Default 3: the horizon is the UTC midnight 3 days before
 * `to` (2026-01-28T00:00Z), inside the 7d and 90d windows, so those reach past it into hours
 * retention summarized and packed into their day rows (rollups v12), as a deployment's do.
 */
const RETENTION_DAYS = process.env.ANALYTICS_RETENTION_DAYS === 'none' ? null : Math.max(1, Number(process.env.ANALYTICS_RETENTION_DAYS ?? 3));
/** Endpoints whose summaries one view transaction applies (one commit). */
const SUMMARIES_PER_COMMIT = 500;

const WINDOWS: Array<[string, number]> = [
  ['24h', DAY],
  ['7d', 7 * DAY],
  ['90d', 90 * DAY],
];


/**
 * Writes the views the two analytics projections would hold after these checks (generation 1):
 * raw rows and final rollups computed with the projection's domain functions, each endpoint's
 * current project, the project and the endpoints with their latest check, and the project's
 * health counts. With a `horizon` (epoch ms), retention then summarizes every endpoint's checks
 * before it (`summarizeChecks`, as a retention pass does) and both projections apply the
 * summaries with their own handlers: the raw rows and minute rows of those checks leave, and
 * their hour rows move into their day rows' packed hours.
 */
export async function build(store: SqliteReadStore, endpoints: number, to: number, horizon: number | null = null): Promise<{ checkedAtMs: Float64Array }> {
  const spread: CheckSpread = { team: TEAM, endpoints, spanMs: SPAN, projectOf: (e) => projectOfEndpoint(e, endpoints) };
  const projectIds = Array.from({ length: PROJECTS }, (_, i) => PROJECT + i);
  const rollupsName = (c: string) => physicalCollection(analyticsRollupsProjection.name, 1, c);
  const endpointsName = (c: string) => physicalCollection(analyticsEndpointsProjection.name, 1, c);
  for (const spec of analyticsRollupsProjection.collections) await store.ensureCollection({ ...spec, name: rollupsName(spec.name) });
  for (const spec of analyticsEndpointsProjection.collections) await store.ensureCollection({ ...spec, name: endpointsName(spec.name) });
  let writes: ViewWrite[] = [];
  const put = async (collection: string, doc: object) => {
    writes.push({ op: 'put', collection, doc: doc as Doc });
    if (writes.length >= COMMIT_ROWS) {
      await store.commit(writes);
      writes = [];
    }
  };
  for (const p of projectIds) await put(endpointsName(ANALYTICS_PROJECTS_COLLECTION), { id: String(p), project_id: p, team_id: TEAM, name: `Many ${p}` });
  // As the projection keeps them: the team's primary project (its first endpoint's, project 1's)
  // has its rows without their team id (read by key range, `RawSpans`), the others with it.
  const team: TeamDoc = { id: teamDocId(TEAM), team_id: TEAM, primary_project_id: PROJECT };
  await put(rollupsName(ROLLUP_MEMBERS_COLLECTION), team);
  const total = endpoints * CHECKS_PER_ENDPOINT;
  const rollups = new Map<string, RollupRow>();
  /** The raw rows' time -> key map (rollups v15), as the projection widens it. */
  const minutes = new Map<number, CheckMinuteRow>();
  const latest = new Map<number, CheckRecordedData>();
  /** Per endpoint, the `n` of its checks before the horizon, in stream order. */
  const old: number[][] = Array.from({ length: endpoints + 1 }, () => []);
  const checkedAtMs = new Float64Array(total);
  for (let n = 0; n < total; n++) {
    const data = syntheticCheck(spread, n, total, to);
    checkedAtMs[n] = Date.parse(data.checked_at);
    if (horizon !== null && Date.parse(data.checked_at) < horizon) old[data.endpoint_id].push(n);
    const row = rawCheckRow(data, data.project_id, storedTeamId(team, data.project_id));
    await put(rollupsName(RAW_CHECKS_COLLECTION), row);
    const minute = checkMinuteOf(row.checked_at_ms);
    const widened = widenedCheckMinute(minutes.get(minute) ?? null, row);
    if (widened) minutes.set(minute, widened);
    for (const key of rollupKeysOf({ ...row, team_id: data.team_id })) rollups.set(key.id, withCheck(rollups.get(key.id) ?? null, key.id, row, key.scope));
    latest.set(data.endpoint_id, data);
  }
  for (const row of rollups.values()) await put(rollupsName(ROLLUPS_COLLECTION), row);
  for (const row of minutes.values()) await put(rollupsName(CHECK_MINUTES_COLLECTION), row);
  const health = new Map<number, AnalyticsProjectHealthDoc | null>();
  for (let e = 1; e <= endpoints; e++) {
    const last = latest.get(e)!;
    await put(rollupsName(ROLLUP_MEMBERS_COLLECTION), { id: String(e), endpoint_id: e, project_id: projectOfEndpoint(e, endpoints) });
    const doc: AnalyticsEndpointDoc = {
      id: String(e),
      endpoint_id: e,
      team_id: TEAM,
      project_id: projectOfEndpoint(e, endpoints),
      name: `endpoint ${e}`,
      enabled: true,
      latest_check_id: last.check_id,
      latest_checked_at: last.checked_at,
      latest_checked_at_ms: Date.parse(last.checked_at),
      latest_success: last.success,
      latest_status_code: last.status_code,
      latest_latency_ms: last.latency_ms,
    };
    await put(endpointsName(ANALYTICS_ENDPOINTS_COLLECTION), doc);
    const share = healthShareOf(doc);
    if (share) health.set(doc.project_id, withHealthShare(health.get(doc.project_id) ?? null, share, 1));
  }
  for (const h of health.values()) if (h) await put(endpointsName(ANALYTICS_PROJECT_HEALTH_COLLECTION), h);
  await store.commit(writes);
  if (horizon === null) return { checkedAtMs };
  const summarizedBy = [
    { handler: analyticsRollupsProjection.handlers[CHECKS_SUMMARIZED], resolve: rollupsName },
    { handler: analyticsEndpointsProjection.handlers[CHECKS_SUMMARIZED], resolve: endpointsName },
  ];
  for (let first = 1; first <= endpoints; first += SUMMARIES_PER_COMMIT) {
    const transactions = summarizedBy.map(({ handler, resolve }) => ({ handler: handler as ProjectionHandler, views: new BatchViewTransaction(store, resolve) }));
    const summaries: ChecksSummarizedData[] = [];
    for (let e = first; e < Math.min(first + SUMMARIES_PER_COMMIT, endpoints + 1); e++) {
      if (old[e].length === 0) continue;
      const checks = old[e].map((n, revision) => ({ revision, check: syntheticCheck(spread, n, total, to) }));
      summaries.push(summarizeChecks(e, TEAM, checks, new Date(horizon).toISOString()));
    }
    // What the handler reads by id (the summarized checks' raw rows, the endpoints' hour and day
    // rows), read at once rather than one get each.
    const rawIds = new Set(summaries.flatMap((summary) => summary.check_ids.map(String)));
    const rollupIds = new Set(
      summaries.flatMap(({ endpoint_id, hours }) => hours.flatMap(([hour]) => [rollupId('endpoint', endpoint_id, 'hour', hour), rollupId('endpoint', endpoint_id, 'day', hour - (hour % 86_400))])),
    );
    await transactions[0].views.prefetch(new Map([[RAW_CHECKS_COLLECTION, rawIds], [ROLLUPS_COLLECTION, rollupIds]]));
    for (const summary of summaries) {
      const event = summaryEvent(summary, horizon);
      for (const { handler, views } of transactions) await handler(event, views);
    }
    await store.commit(transactions.flatMap(({ views }) => views.writes()));
  }
  return { checkedAtMs };
}

/**
 * The check times (check `n` is endpoint `n % endpoints + 1`'s) of the endpoints `inScope`
 * accepts (all when null), ascending, for `countedChecks`.
 */
function timesOf(checkedAtMs: Float64Array, endpoints: number, inScope: ((e: number) => boolean) | null): Float64Array {
  const times = inScope ? checkedAtMs.filter((_, n) => inScope((n % endpoints) + 1)) : Float64Array.from(checkedAtMs);
  return times.sort();
}

/**
 * How many of the checks at `times` (ascending) a window's totals count with this horizon: the
 * sum of its buckets, each counting the part of its range before the horizon in whole hours, its
 * edges rounded inward (`AnalyticsQueryOptions.rawHorizon`).
 */
function countedChecks(times: Float64Array, window: AnalyticsWindow, horizon: number): number {
  const hour = 3_600_000;
  const before = (at: number) => {
    let low = 0;
    let high = times.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (times[middle] < at) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const inRange = (from: number, to: number) => (from < to ? before(to) - before(from) : 0);
  let count = 0;
  for (let i = 0; i < window.buckets; i++) {
    const { start, end } = bucketRange(window, i);
    if (start >= end) continue;
    if (start < horizon) count += inRange(Math.ceil(start / hour) * hour, Math.floor(Math.min(end, horizon) / hour) * hour);
    if (end > horizon) count += inRange(Math.max(start, horizon), end);
  }
  return count;
}

/** The summary as the log hands it to the projections. */
function summaryEvent(summary: ChecksSummarizedData, horizon: number): RecordedEvent<ChecksSummarizedData> {
  const at = new Date(horizon).toISOString();
  return { id: `summary-${summary.endpoint_id}`, streamId: checkSummariesStream(summary.endpoint_id), type: CHECKS_SUMMARIZED, schemaVersion: 1, data: summary, metadata: { actor: 'system:retention', request_id: null, correlation_id: null, causation_id: null, occurred_at: at }, revision: 0, position: 0, recordedAt: at };
}

function projectOfEndpoint(endpointId: number, endpoints: number): number {
  return PROJECT + Math.floor(((endpointId - 1) * PROJECTS) / endpoints);
}

/**
 * One full garbage collection before the queries. The build makes a gigabyte of short-lived
 * objects (every rollup row of a million checks) in this process; V8 sizes its next full
 * collection by that, so without this the queries ran beside ~1 GB of dead old space that no
 * collection had reclaimed, and each young-generation collection during a project request
 * took 15-30 ms instead of a few (measured: `--trace-gc`, 10,000 endpoints). A service's views
 * are written by its projections a batch at a time; its heap never holds such a burst.
 */
function collectTheBuildsGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Measured {
  p50: number;
  p99: number;
  stall: number;
  /** The same in CPU time of this process (user + system), which other processes on a shared machine barely change. */
  cpuP50: number;
  cpuP99: number;
  /** The most CPU time the main thread spent between two turns of a 1 ms timer: the longest hold of the loop, less descheduling. */
  cpuStall: number;
  /** The same over the warm-up request alone (outside the timed window: see `measure`). */
  warmUpCpuStall: number;
  runs: number;
  checks: number;
}

const cpuMs = (since?: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/**
 * CPU time of the main thread alone, in ms: Linux's per-thread scheduler statistics (the first
 * field of /proc/self/task/<pid>/schedstat is the thread's time on a CPU, in ns; the main
 * thread's id is the process id). Reads that run on a worker thread (the read store's off-thread
 * connection) do not hold the event loop and are not counted. Elsewhere: process.cpuUsage, every
 * thread of the process, which can only overstate a stall.
 */
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const perThread = existsSync(SCHEDSTAT);
const schedstat = perThread ? openSync(SCHEDSTAT, 'r') : -1;
const schedstatBuffer = Buffer.alloc(128);
/** One read of an open file at offset 0 (about 35 us on a loaded machine; the 1 ms timer's cost). */
const mainThreadCpuMs = perThread
  ? () => Number(schedstatBuffer.toString('latin1', 0, readSync(schedstat, schedstatBuffer, 0, schedstatBuffer.length, 0)).split(' ')[0]) / 1e6
  : () => cpuMs();

/**
 * The longest stretch of the main thread's CPU time between two turns of a 1 ms interval timer.
 * On a machine shared with other processes, wall-clock stalls mostly measure descheduling (an
 * idle process sees stalls of 100 ms and more at a load average of 15 on 2 cores); CPU time
 * between turns does not.
 */
function cpuStallMonitor(): { stop: () => number } {
  let last = mainThreadCpuMs();
  let longest = 0;
  const timer = setInterval(() => {
    const now = mainThreadCpuMs();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  return {
    stop: () => {
      clearInterval(timer);
      return longest;
    },
  };
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One warm-up, then timed requests one at a time. The stall monitors (loop-delay histogram and
 * main-thread CPU between timer turns) start after the warm-up: the first request after the
 * views were built in this process pays for collecting the build's garbage and for first
 * compilation (0.3-3 s in one stretch), which no later request does, so it is reported apart
 * (`warmUpCpuStall`), not as a request's stall. The histogram's timer fires once before the
 * first timed request, so a stall can be recorded from it on; a timer turn after each request
 * records that request's stall on its own. A warm-up slower than a third of the budget is the
 * only sample (the code before issue 32 took tens of seconds per project request).
 */
async function measure(read: () => Promise<{ totals: { checks: number } } | null>): Promise<Measured> {
  const warmUpStalls = stallMonitors();
  await tick(10);
  const started = performance.now();
  const cpuStarted = process.cpuUsage();
  const first = await read();
  const warmUp = performance.now() - started;
  const warmUpCpu = cpuMs(cpuStarted);
  await tick(2);
  const warmUpStall = warmUpStalls.stop();
  // The warm-up alone is the sample when it was that slow: its stalls are the request's.
  if (warmUp > BUDGET_MS / 3) {
    return { p50: warmUp, p99: warmUp, stall: warmUpStall.wall, cpuP50: warmUpCpu, cpuP99: warmUpCpu, cpuStall: warmUpStall.cpu, warmUpCpuStall: warmUpStall.cpu, runs: 1, checks: first?.totals.checks ?? 0 };
  }
  const stalls = stallMonitors();
  await tick(10);
  const timed = performance.now();
  const times: number[] = [];
  const cpuTimes: number[] = [];
  while (times.length < MIN_RUNS || (times.length < MAX_RUNS && performance.now() - timed < BUDGET_MS)) {
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    await read();
    times.push(performance.now() - t0);
    cpuTimes.push(cpuMs(c0));
    await tick(2);
  }
  const stall = stalls.stop();
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    stall: stall.wall,
    cpuP50: percentile(cpuTimes, 50),
    cpuP99: percentile(cpuTimes, 99),
    cpuStall: stall.cpu,
    warmUpCpuStall: warmUpStall.cpu,
    runs: times.length,
    checks: first?.totals.checks ?? 0,
  };
}

/** Both stall monitors over one stretch of the bench: the loop-delay histogram (wall, ms) and the main thread's CPU between timer turns (ms). */
function stallMonitors(): { stop: () => { wall: number; cpu: number } } {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const cpu = cpuStallMonitor();
  return {
    stop: () => {
      histogram.disable();
      return { wall: histogram.max / 1e6, cpu: cpu.stop() };
    },
  };
}

/**
 * `aim`: the issue's p50/p99 bounds for team and project analytics at this size (2,000
 * endpoints: 100/250 ms; 10,000: within 3x of that).
 */
export async function manyEndpoints(
  dir: string,
  log: (line: string) => void,
  endpoints = 2_000,
  aim = { p50: 100, p99: 250 },
): Promise<{ figures: BenchFigure[]; notes: string[] }> {
  const size = endpoints.toLocaleString('en-US');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const store = new SqliteReadStore(join(dir, 'views.sqlite'));
  const to = Date.parse('2026-01-31T12:34:56.789Z');
  const horizon = RETENTION_DAYS === null ? null : retentionHorizon(to, RETENTION_DAYS);
  const buildStarted = performance.now();
  const { checkedAtMs } = await build(store, endpoints, to, horizon);
  const buildMs = performance.now() - buildStarted;
  collectTheBuildsGarbage();
  log(`analytics ${size} endpoints: built in ${(buildMs / 1000).toFixed(1)} s`);
  // Wired as the analytics controller does: reads through the store's off-thread connection (a
  // worker thread), and the facts and the query share one Slices.
  const views = store.offThread?.() ?? store;
  const reader = new ViewReader(views);
  const slices = new Slices();
  const facts = new ViewAnalyticsFacts(reader, views, slices);
  // The horizon as the controller gives it (its CHECK_RETENTION_DAYS back from now; `to` is now).
  const query = new AnalyticsQuery(views, facts, () => facts.collections(), horizon === null ? {} : { rawHorizon: () => horizon }, slices);
  const figures: BenchFigure[] = [];
  const runs: string[] = [];
  const scopes: Array<[string, (w: ReturnType<typeof makeWindow>) => Promise<{ totals: { checks: number } } | null>]> = [
    ['team', (w) => query.teamAnalytics(TEAM, w)],
    ['project', (w) => query.projectAnalytics(TEAM, PROJECT, w)],
    ['endpoint', (w) => query.endpointAnalytics(TEAM, 1, w)],
  ];
  let firstRequest: number | null = null;
  const longestByKind: string[] = [];
  for (const [scope, read] of scopes) {
    let longest = 0;
    const times = timesOf(checkedAtMs, endpoints, scope === 'endpoint' ? (e) => e === 1 : scope === 'project' ? (e) => projectOfEndpoint(e, endpoints) === PROJECT : null);
    for (const [name, length] of WINDOWS) {
      const window = makeWindow(to - length, to, 48);
      const m = await measure(() => read(window));
      firstRequest ??= m.warmUpCpuStall;
      longest = Math.max(longest, m.cpuStall);
      const expected = countedChecks(times, window, horizon ?? -Infinity);
      if (m.checks !== expected) throw new Error(`${scope} ${name}: expected ${expected} checks, the query counted ${m.checks}`);
      log(
        `analytics ${size} endpoints: ${scope} ${name} p50 ${m.p50.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, longest stall ${m.stall.toFixed(1)} ms; ` +
          `CPU p50 ${m.cpuP50.toFixed(1)} ms, p99 ${m.cpuP99.toFixed(1)} ms, longest stall ${m.cpuStall.toFixed(1)} ms (${m.runs} runs; warm-up ${m.warmUpCpuStall.toFixed(1)} ms)`,
      );
      runs.push(`${scope} ${name}: ${m.runs}`);
      const aims = scope === 'endpoint' ? undefined : { p50: `<= ${aim.p50} ms`, p99: `<= ${aim.p99} ms` };
      figures.push(
        { name: `${size} endpoints: ${scope} analytics ${name}, p50`, value: m.p50, unit: 'ms', aim: aims?.p50 },
        { name: `${size} endpoints: ${scope} analytics ${name}, p99`, value: m.p99, unit: 'ms', aim: aims?.p99 },
        { name: `${size} endpoints: ${scope} analytics ${name}, longest event-loop stall`, value: m.stall, unit: 'ms', aim: '<= 20 ms' },
        { name: `${size} endpoints: ${scope} analytics ${name}, CPU time p50`, value: m.cpuP50, unit: 'ms' },
        { name: `${size} endpoints: ${scope} analytics ${name}, CPU time p99`, value: m.cpuP99, unit: 'ms' },
        { name: `${size} endpoints: ${scope} analytics ${name}, longest event-loop stall in CPU time`, value: m.cpuStall, unit: 'ms', aim: '<= 20 ms' },
      );
    }
    // Per request kind: the longest main-thread stretch of any of its timed requests (every window).
    figures.push({ name: `${size} endpoints: ${scope} analytics, longest main-thread stretch of any window (CPU time)`, value: longest, unit: 'ms', aim: '<= 20 ms' });
    longestByKind.push(`${scope} ${longest.toFixed(1)} ms`);
  }
  log(`analytics ${size} endpoints: longest main-thread stretch per request kind: ${longestByKind.join(', ')}; first request after the build ${firstRequest!.toFixed(1)} ms (not a request's stall)`);
  figures.push({ name: `${size} endpoints: first request after the build (team 24h warm-up), longest main-thread stretch (CPU time; not counted as a request's)`, value: firstRequest!, unit: 'ms' });
  figures.push({ name: `${size} endpoints: build ${(endpoints * CHECKS_PER_ENDPOINT).toLocaleString('en-US')} checks (views written directly)`, value: buildMs / 1000, unit: 's' });
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    figures,
    notes: [
      `${size} endpoints: one team, ${PROJECTS === 1 ? 'one project' : `${PROJECTS} projects of ${endpoints / PROJECTS} endpoints (project analytics of project 1)`}, ${CHECKS_PER_ENDPOINT} applicable checks per endpoint over the 7 days before \`to\` (${(endpoints * CHECKS_PER_ENDPOINT).toLocaleString('en-US')} checks, 1 in 50 failed); ${horizon === null ? 'no retention horizon (every check raw)' : `retention horizon ${new Date(horizon).toISOString()} (CHECK_RETENTION_DAYS=${RETENTION_DAYS} back from \`to\`, inside the 7d and 90d windows): the checks before it summarized as a retention pass does (\`summarizeChecks\`) and the summaries applied by both analytics projections' own handlers (their raw and minute rows gone, their hour rows packed into their day rows), and the query given the horizon as the controller does`}; windows end at \`to\` (off the minute grid), 48 buckets; endpoint analytics of endpoint 1. Views written directly with the projection's domain functions, in this process, then one full garbage collection of what the build left (see \`collectTheBuildsGarbage\`); queried through AnalyticsQuery over ViewAnalyticsFacts on SQLite (the store's off-thread connection, as the controller reads), one request at a time after one warm-up, ${MIN_RUNS} to ${MAX_RUNS} timed requests per figure within ${BUDGET_MS / 1000} s, or the warm-up alone when it took over ${BUDGET_MS / 3000} s (runs: ${runs.join(', ')}). p99 of so few runs is their maximum. Longest stall: perf_hooks.monitorEventLoopDelay (1 ms resolution) over the timed requests only: both stall monitors start after each figure's warm-up, because the first request after the views were built in this process pays for collecting the build's garbage and for first compilation (0.3-3 s in one stretch before this was split), which no later request does; that first stretch is reported on its own line. "Longest main-thread stretch of any window" is, per request kind, the largest CPU-time stall of its three windows. CPU time: process.cpuUsage around each request (every thread of the process, the read store's worker included); and the most CPU time the main thread spent between two turns of a 1 ms timer (the longest hold of the event loop without the descheduling a shared machine adds; ${perThread ? 'the main thread alone, from /proc/self/task/<pid>/schedstat' : 'process.cpuUsage, every thread: it can only overstate'}).`,
    ],
  };
}
