/**
 * The steady case of issue 31: the embedded all-in-one service (ROLE=all, SQLite) probing 1,000
 * and then 2,000 endpoints at a 20 s interval against a local target (50 and 100 checks/s),
 * measured for what a long-running deployment pays: process CPU per check (most of it, at these
 * rates, fixed per-second work rather than the check) and how late the event loop runs its
 * callbacks (perf_hooks monitorEventLoopDelay: every probe's timing and every request wait on it).
 *
 * Baselines, measured in the same run and the same process before the service starts: raw
 * undici firing the same slots on the same schedule (CPU per request, event-loop delay), and the
 * service itself with no endpoint (its fixed CPU per second).
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { Agent } from 'undici';
import { spreadOffset, tickFor } from '../src/probing/application/scheduler.js';
import { type BenchFigure, type BenchModule, median, ratio } from './bench.js';
import {
  eventsBetween,
  projectionsCaughtUp,
  provisionEndpoints,
  startService,
  startTargetProcess,
  type Service,
  type TargetProcess,
} from './probing.bench.js';

const INTERVAL_SECONDS = 20;
const STEPS = [1000, 2000];
/** monitorEventLoopDelay's sampling timer (Node's default). */
const LOOP_RESOLUTION_MS = 10;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/** The idle service is measured in windows this long (see the notes: start-up collections). */
const IDLE_WINDOW_MS = 5000;

/** Process CPU per second of wall-clock time while `ms` pass. */
async function cpuPerSecond(ms: number): Promise<number> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await sleep(ms);
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / 1000 / ((performance.now() - started) / 1000);
}

interface Sample {
  /** Process CPU (user + system, all threads) over the window, ms. */
  cpuMs: number;
  wallMs: number;
  /** Event-loop delay, measured in a window of its own after the CPU window (`loopDelayWindow`). */
  loopP99: number;
  loopMax: number;
  /** Garbage collections on the main thread over the window: young-generation scavenges and the rest (mark-compact and its incremental steps). */
  gc: { scavenges: number; scavengeMs: number; others: number; othersMs: number };
}

/** The main thread's own CPU time between turns of a 1 ms timer, ms. */
interface Stretches {
  p99: number;
  p999: number;
  max: number;
  /** Stretches over 2 ms (the loop-delay aim) a minute. */
  over2PerMinute: number;
  over5PerMinute: number;
}

/** The main thread's scheduler statistics (Linux): its first field is the thread's CPU time in ns. */
const MAIN_THREAD_SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;

/**
 * The main thread's CPU time between two turns of a 1 ms timer while `ms` pass: how long this
 * process's own work held the event loop, whatever the load of the machine (wall-clock delay on a
 * shared machine mostly measures descheduling). Only the main thread counts: a checkpoint on a
 * worker thread does not hold the loop, while process.cpuUsage would count it. Reading the
 * statistics a thousand times a second costs CPU, so this runs in a window of its own, after the
 * CPU window. Null where the file is missing (not Linux).
 */
async function mainThreadStretches(ms: number): Promise<Stretches | null> {
  if (!existsSync(MAIN_THREAD_SCHEDSTAT)) return null;
  const fd = openSync(MAIN_THREAD_SCHEDSTAT, 'r');
  const buffer = Buffer.alloc(128);
  const runNs = () => {
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return Number(buffer.toString('latin1', 0, length).split(' ')[0]);
  };
  const stretches: number[] = [];
  let last = runNs();
  const timer = setInterval(() => {
    const now = runNs();
    stretches.push((now - last) / 1e6);
    last = runNs();
  }, 1);
  try {
    await sleep(ms);
  } finally {
    clearInterval(timer);
    closeSync(fd);
  }
  stretches.sort((a, b) => a - b);
  const at = (q: number) => stretches[Math.min(stretches.length - 1, Math.floor(q * stretches.length))] ?? 0;
  return { p99: at(0.99), p999: at(0.999), max: stretches[stretches.length - 1] ?? 0, over2PerMinute: stretches.filter((x) => x > 2).length / (ms / 60_000), over5PerMinute: stretches.filter((x) => x > 5).length / (ms / 60_000) };
}

/** CPU and garbage collections while `work` runs, with no loop-delay monitor (its 10 ms timer is the bench's work, not the service's). */
async function cpuWindow(work: () => Promise<void>): Promise<Omit<Sample, 'loopP99' | 'loopMax'>> {
  const gc = { scavenges: 0, scavengeMs: 0, others: 0, othersMs: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as unknown as { detail?: { kind?: number } }).detail?.kind;
      if (kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) {
        gc.scavenges++;
        gc.scavengeMs += entry.duration;
      } else {
        gc.others++;
        gc.othersMs += entry.duration;
      }
    }
  });
  const cpu = process.cpuUsage();
  const started = performance.now();
  gcObserver.observe({ entryTypes: ['gc'] });
  await work();
  gcObserver.disconnect();
  const used = process.cpuUsage(cpu);
  return { cpuMs: (used.user + used.system) / 1000, wallMs: performance.now() - started, gc };
}

/** Event-loop delay while `ms` pass, in a window of its own after the CPU window. */
async function loopDelayWindow(ms: number): Promise<Pick<Sample, 'loopP99' | 'loopMax'>> {
  const loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loop.enable();
  await sleep(ms);
  loop.disable();
  // The histogram holds the time between the sampling timer's runs: the delay is what exceeds its interval.
  const delay = (ns: number) => Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS);
  return { loopP99: delay(loop.percentile(99)), loopMax: delay(loop.max) };
}

/**
 * Raw undici on the service's schedule: `endpoints` slots per interval, each at the scheduler's
 * spread offset, fired on the scheduler's tick for that schedule (`tickFor`) over one keep-alive
 * Agent. Returns the measured window.
 */
async function rawOnSchedule(url: string, endpoints: number, warmupMs: number, measureMs: number, sideMs: number): Promise<Sample & { requests: number; stretch: Stretches | null }> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const origin = new URL(url).origin;
  const intervalMs = INTERVAL_SECONDS * 1000;
  const next = Array.from({ length: endpoints }, (_, i) => {
    const offset = spreadOffset(i + 1, intervalMs);
    return Math.ceil((Date.now() - offset) / intervalMs) * intervalMs + offset;
  });
  let requests = 0;
  let failures = 0;
  let counting = false;
  const fire = (i: number) => {
    void agent
      .request({ origin, path: `/health?n=${i}`, method: 'GET' })
      .then(async (response) => {
        await response.body.arrayBuffer();
        if (response.statusCode !== 200) failures++;
        if (counting) requests++;
      })
      .catch(() => failures++);
  };
  const tickMs = tickFor(endpoints / INTERVAL_SECONDS, INTERVAL_SECONDS * 1000);
  const timer = setInterval(() => {
    const now = Date.now();
    for (let i = 0; i < endpoints; i++) {
      if (next[i] > now) continue;
      next[i] += intervalMs;
      fire(i);
    }
  }, tickMs);
  try {
    await sleep(warmupMs);
    counting = true;
    const measured = await cpuWindow(() => sleep(measureMs));
    counting = false;
    const loop = await loopDelayWindow(sideMs);
    const stretch = await mainThreadStretches(sideMs);
    if (failures > 0) throw new Error(`raw undici: ${failures} failed requests`);
    return { ...measured, ...loop, requests, stretch };
  } finally {
    clearInterval(timer);
    await agent.close();
  }
}

interface Step {
  endpoints: number;
  checks: number;
  failures: number;
  sample: Sample;
  projectionLag: number;
  /** Measured after the CPU window, in a window of its own. */
  stretch: Stretches | null;
}

/** Checks recorded while `measureMs` passes, with the process's CPU; then the loop delay and the main thread's stretches, each in a window of its own. */
async function measureService(service: Service, endpoints: number, measureMs: number, sideMs: number): Promise<Step> {
  const { platform } = service;
  const from = await platform.events.headPosition();
  const cpu = await cpuWindow(() => sleep(measureMs));
  const to = await platform.events.headPosition();
  const checks = (await eventsBetween(platform, from, to)).filter((e) => e.type === 'CheckRecorded');
  const runner = platform.runner!;
  const projectionLag = Math.max(0, ...runner.projections.map((p) => (to ?? 0) - (runner.appliedPosition(p.name) ?? 0)));
  const loop = await loopDelayWindow(sideMs);
  const stretch = await mainThreadStretches(sideMs);
  return { endpoints, checks: checks.length, failures: checks.filter((e) => !e.data.success).length, sample: { ...cpu, ...loop }, projectionLag, stretch };
}

const perCheckMs = (step: Step) => step.sample.cpuMs / Math.max(1, step.checks);
const fixed = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

const steadyBench: BenchModule = {
  name: 'probing-steady',
  async run({ quick, workDir, log }) {
    const measureMs = quick ? 30_000 : 60_000;
    const warmupMs = INTERVAL_SECONDS * 1000;
    const idleMs = quick ? 20_000 : 40_000;
    /** The loop-delay window and the main-thread window, each this long, after a step's CPU window. */
    const sideMs = quick ? 15_000 : 30_000;
    const target: TargetProcess = await startTargetProcess();
    try {
      const raw: Array<Sample & { requests: number; stretch: Stretches | null }> = [];
      for (const endpoints of STEPS) {
        const result = await rawOnSchedule(target.url, endpoints, warmupMs / 4, measureMs, sideMs);
        raw.push(result);
        log(`raw undici, ${endpoints} slots at ${INTERVAL_SECONDS} s: ${result.requests} requests, CPU ${fixed(result.cpuMs / result.requests, 3)} ms each, loop delay p99 ${fixed(result.loopP99)} ms max ${fixed(result.loopMax)} ms`);
      }
      const dataDir = join(workDir, 'service');
      mkdirSync(dataDir, { recursive: true });
      const service = await startService(dataDir, null);
      try {
        await projectionsCaughtUp(service.platform, 60_000);
        await sleep(2000);
        // Without the loop-delay monitor of the other windows: its 10 ms timer is the bench's work, not the service's.
        const idleWindows: number[] = [];
        for (let i = 0; i < idleMs / IDLE_WINDOW_MS; i++) idleWindows.push(await cpuPerSecond(IDLE_WINDOW_MS));
        const idleMean = idleWindows.reduce((sum, w) => sum + w, 0) / idleWindows.length;
        const idleCpuPerSecond = median(idleWindows);
        log(`service with no endpoint: ${fixed(idleCpuPerSecond)} ms CPU per s (median of ${IDLE_WINDOW_MS / 1000} s windows: ${idleWindows.map((w) => fixed(w, 1)).join(', ')}; mean ${fixed(idleMean)})`);
        const steps: Step[] = [];
        let place: { teamId: number; projectId: number } | undefined;
        let provisioned = 0;
        for (const endpoints of STEPS) {
          const started = performance.now();
          place = await provisionEndpoints(service, target, { count: endpoints - provisioned, intervalSeconds: INTERVAL_SECONDS, from: provisioned, place });
          provisioned = endpoints;
          await projectionsCaughtUp(service.platform, 120_000);
          log(`provisioned ${endpoints} endpoints in ${((performance.now() - started) / 1000).toFixed(1)} s`);
          // One whole interval, so every endpoint's slot comes round before the window opens.
          await sleep(warmupMs);
          const step = await measureService(service, endpoints, measureMs, sideMs);
          steps.push(step);
          log(
            `${endpoints} endpoints at ${INTERVAL_SECONDS} s: ${step.checks} checks (${fixed(step.checks / (step.sample.wallMs / 1000), 1)}/s), ` +
              `CPU ${fixed(perCheckMs(step), 3)} ms per check, loop delay p99 ${fixed(step.sample.loopP99)} ms max ${fixed(step.sample.loopMax)} ms, ` +
              (step.stretch ? `main-thread CPU between loop turns p99 ${fixed(step.stretch.p99)} p99.9 ${fixed(step.stretch.p999)} max ${fixed(step.stretch.max)} ms, ${fixed(step.stretch.over2PerMinute, 1)} over 2 ms and ${fixed(step.stretch.over5PerMinute, 1)} over 5 ms a minute, ` : '') +
              `${step.failures} failed, projection lag ${step.projectionLag}, load ${loadavg()[0].toFixed(1)}`,
          );
        }
        const figures: BenchFigure[] = [];
        figures.push(
          { name: `service with no endpoint: process CPU per second (fixed work: median of ${IDLE_WINDOW_MS / 1000} s windows)`, value: fixed(idleCpuPerSecond), unit: 'ms/s' },
          { name: `service with no endpoint: process CPU per second, mean over the ${idleMs / 1000} s after start (start-up collections included)`, value: fixed(idleMean), unit: 'ms/s' },
        );
        steps.forEach((step, i) => {
          const base = raw[i];
          const offered = step.endpoints / INTERVAL_SECONDS;
          const label = `${step.endpoints.toLocaleString('en-US')} endpoints at ${INTERVAL_SECONDS} s`;
          const rawPerRequest = base.cpuMs / Math.max(1, base.requests);
          figures.push(
            { name: `${label}: checks/s vs offered`, value: fixed(step.checks / (step.sample.wallMs / 1000), 1), unit: '/s', baseline: { name: 'offered', value: offered }, ratio: ratio(step.checks / (step.sample.wallMs / 1000), offered) },
            {
              name: `${label}: process CPU per check`,
              value: fixed(perCheckMs(step), 3),
              unit: 'ms',
              baseline: { name: 'raw undici on the same schedule, per request', value: fixed(rawPerRequest, 3) },
              ratio: ratio(perCheckMs(step), rawPerRequest),
              ...(step.endpoints === 1000 ? { aim: '<= 0.8 ms' } : {}),
            },
            {
              name: `${label}: process CPU per check less the idle service's per-second work`,
              value: fixed((step.sample.cpuMs - idleCpuPerSecond * (step.sample.wallMs / 1000)) / Math.max(1, step.checks), 3),
              unit: 'ms',
            },
            {
              name: `${label}: event-loop delay p99`,
              value: fixed(step.sample.loopP99),
              unit: 'ms',
              baseline: { name: 'raw undici on the same schedule', value: fixed(base.loopP99) },
              ratio: ratio(step.sample.loopP99, base.loopP99),
              ...(step.endpoints === 2000 ? { aim: '<= 2 ms' } : {}),
            },
            { name: `${label}: event-loop delay max`, value: fixed(step.sample.loopMax), unit: 'ms', baseline: { name: 'raw undici on the same schedule', value: fixed(base.loopMax) }, ratio: ratio(step.sample.loopMax, base.loopMax) },
            { name: `${label}: young-generation scavenges per minute`, value: fixed(step.sample.gc.scavenges / (step.sample.wallMs / 60_000), 1), unit: '/min', baseline: { name: 'raw undici on the same schedule', value: fixed(base.gc.scavenges / (base.wallMs / 60_000), 1) } },
            { name: `${label}: scavenge pause, mean`, value: fixed(step.sample.gc.scavengeMs / Math.max(1, step.sample.gc.scavenges)), unit: 'ms' },
            { name: `${label}: mark-compact GCs (and incremental steps) per minute`, value: fixed(step.sample.gc.others / (step.sample.wallMs / 60_000), 1), unit: '/min' },
          );
          const stretch = step.stretch;
          if (stretch) {
            const rawStretch = base.stretch!;
            figures.push(
              { name: `${label}: main-thread CPU between event-loop turns, p99`, value: fixed(stretch.p99), unit: 'ms', baseline: { name: 'raw undici on the same schedule', value: fixed(rawStretch.p99) }, ratio: ratio(stretch.p99, rawStretch.p99) },
              { name: `${label}: main-thread CPU between event-loop turns, p99.9`, value: fixed(stretch.p999), unit: 'ms', baseline: { name: 'raw undici on the same schedule', value: fixed(rawStretch.p999) }, ratio: ratio(stretch.p999, rawStretch.p999) },
              { name: `${label}: main-thread CPU between event-loop turns, max`, value: fixed(stretch.max), unit: 'ms' },
              { name: `${label}: stretches of main-thread CPU over 2 ms, per minute`, value: fixed(stretch.over2PerMinute, 1), unit: '/min', baseline: { name: 'raw undici on the same schedule', value: fixed(rawStretch.over2PerMinute, 1) } },
              { name: `${label}: stretches of main-thread CPU over 5 ms, per minute`, value: fixed(stretch.over5PerMinute, 1), unit: '/min' },
            );
          }
        });
        const notes = [
          `Service: the whole embedded service in the bench process (ROLE=all: scheduler, in-process probe transport, prober worker, check recorder and alerting judge appending to the SQLite event log, every projection and reactor applying it to the SQLite views). Endpoints registered, verified and enabled through the admin routes, interval ${INTERVAL_SECONDS} s, timeout 1 s, against node:http in its own process answering 200 "ok". ${STEPS.map((n) => n.toLocaleString('en-US')).join(' then ')} endpoints (the second step adds to the first); each step waits one interval (${INTERVAL_SECONDS} s) after provisioning, then measures ${measureMs / 1000} s.`,
          'Process CPU per check: user + system time of the bench process (all its threads) over the window, divided by the checks the log gained in it (the target is another process). The idle figure is the same process with the service started and no endpoint, measured first; "less the idle service\'s per-second work" subtracts it to show what the checks themselves add.',
          `Idle: ${idleMs / 1000} s from 2 s after the service caught up, in ${IDLE_WINDOW_MS / 1000} s windows. The fixed work is their median: in the first minute after start V8's memory reducer shrinks the start-up heap with a few mark-compacts, once (single windows of 20-80 ms/s against about 6 steady), and a mean over them read 20-26 ms/s of work the service does not do every second. The mean is given too. No loop-delay monitor runs in these windows, nor in the steps' CPU windows (since session 22: its 10 ms timer costs 3.5-4 ms/s in a bare idle Node process on this machine, about 0.07 ms of a check at 50 checks/s, and is the bench's work; a service that Prometheus scrapes runs prom-client's own, docs/operations.md).`,
          `Event-loop delay: perf_hooks monitorEventLoopDelay, resolution ${LOOP_RESOLUTION_MS} ms, in a window of ${sideMs / 1000} s of its own right after the CPU window (its timer is kept out of the CPU figures); its histogram holds the time between runs of its ${LOOP_RESOLUTION_MS} ms timer, so ${LOOP_RESOLUTION_MS} ms is subtracted from each figure (an idle loop reads 0). The service's own periodic work runs in these windows as in a deployment: its first check retention pass, 5 minutes after start, usually falls in the ${STEPS[STEPS.length - 1].toLocaleString('en-US')}-endpoint step's loop-delay window (it reads every endpoint's streams, with nothing old enough to summarize; until session 23 it was one task of 0.5-1.2 s, the half-second stall of session 22's close, and it now yields between endpoints).`,
          `Garbage collection: perf_hooks 'gc' entries over the CPU window, on the main thread (wall-clock pauses: on a shared machine they include descheduling). A scavenge collects the young generation; its count per minute falls as the semi-space grows (\`--max-semi-space-size\`, in MB: pass it with NODE_OPTIONS to compare; the bench reports the flags it ran with: ${JSON.stringify(process.execArgv.concat(process.env.NODE_OPTIONS ? [`NODE_OPTIONS=${process.env.NODE_OPTIONS}`] : []))}).`,
          `Main-thread CPU between event-loop turns: the main thread's own CPU time (Linux /proc/self/task/<pid>/schedstat) between two runs of a 1 ms interval timer, in a window of ${sideMs / 1000} s right after the loop-delay window (reading the statistics a thousand times a second costs CPU, kept out of the CPU figures). On a shared machine the wall-clock delay mostly measures descheduling; this figure is what the process's own work holds the loop for (work on worker threads, such as the WAL checkpoints of the event log and the views, does not count).`,
          `Baseline: raw undici (one keep-alive Agent) in the same process before the service starts, firing the same number of slots at the scheduler's spread offsets on the scheduler's tick for that schedule (${STEPS.map((n) => `${tickFor(n / INTERVAL_SECONDS, INTERVAL_SECONDS * 1000)} ms`).join(', ')}), ${measureMs / 1000} s: ${raw.map((r, i) => `${STEPS[i]} slots, ${r.requests} requests, ${fixed(r.cpuMs / Math.max(1, r.requests), 3)} ms CPU each`).join('; ')}.`,
          `Service idle: ${fixed(idleCpuPerSecond)} ms CPU per s (windows ${idleWindows.map((w) => fixed(w, 1)).join(', ')}). ${steps.map((s) => `${s.endpoints}: ${s.failures} failed checks, projection lag after the window ${s.projectionLag} events`).join('; ')}.`,
        ];
        return { title: `Probing, steady: 1,000 and 2,000 endpoints at ${INTERVAL_SECONDS} s, all-in-one`, figures, notes };
      } finally {
        await service.close();
      }
    } finally {
      await target.close();
    }
  },
};

export default steadyBench;
