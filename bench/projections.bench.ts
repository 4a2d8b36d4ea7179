import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../src/platform/event-store/sqlite/sqlite-event-store.js';
import { silentLogger } from '../src/platform/logging/logger.js';
import { defineProjection } from '../src/platform/projections/projection.js';
import { ProjectionRunner } from '../src/platform/projections/projection-runner.js';
import { ReadYourWrites, ViewReader } from '../src/platform/projections/views.js';
import { SqliteReadStore } from '../src/platform/read-store/sqlite/sqlite-read-store.js';
import type { BenchModule } from './bench.js';

const STREAMS = 1000;

/** One view row per event, like the checks view: the rebuild's work is read, apply, write. */
const checksLikeProjection = defineProjection({
  name: 'bench_checks',
  version: 1,
  collections: [{ name: 'checks', indexes: [{ fields: ['endpoint_id', 'checked_at'] }] }],
  handlers: {
    CheckRecorded: (event, views) => {
      const data = event.data as Record<string, unknown>;
      views.put('checks', { id: String(data.check_id), ...data });
    },
  },
});

function checkData(n: number) {
  return {
    check_id: n + 1,
    endpoint_id: n % STREAMS,
    success: n % 17 !== 0,
    status_code: n % 17 === 0 ? 503 : 200,
    latency_ms: 40 + (n % 90),
    checked_at: new Date(Date.UTC(2026, 10, 1) + n * 1000).toISOString(),
  };
}

async function fillLog(store: SqliteEventStore, total: number): Promise<void> {
  for (let start = 0; start < total; start += 500) {
    const events = Array.from({ length: Math.min(500, total - start) }, (_, i) => ({ type: 'CheckRecorded', data: checkData(start + i) }));
    await store.append(`checks-${(start / 500) % STREAMS}`, events, { expectedRevision: 'any' });
  }
}

/** CPU time of this process (user + system), in microseconds. */
function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/**
 * CPU time of the main thread alone (user + system, microseconds), from /proc (Linux; 100 clock
 * ticks a second): the event loop's share, without the worker threads'. Null elsewhere.
 */
function mainThreadCpuMicros(): number | null {
  try {
    const fields = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

/** The floor: the same rows inserted straight into an indexed JSON table, in 500-row transactions. */
function rawInsertRate(file: string, total: number): { rate: number; cpuPerSecond: number } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE checks (id TEXT PRIMARY KEY, doc BLOB NOT NULL);
    CREATE INDEX checks_endpoint ON checks (json_extract(doc, '$.endpoint_id'), json_extract(doc, '$.checked_at'))`);
  const insert = db.prepare('INSERT INTO checks (id, doc) VALUES (?, jsonb(?))');
  const insertMany = db.transaction((rows: Array<Record<string, unknown>>) => {
    for (const row of rows) insert.run(String(row.check_id), JSON.stringify(row));
  });
  const started = performance.now();
  const cpuStarted = cpuMicros();
  for (let start = 0; start < total; start += 500) {
    insertMany(Array.from({ length: Math.min(500, total - start) }, (_, i) => ({ id: String(start + i + 1), ...checkData(start + i) })));
  }
  const cpu = cpuMicros() - cpuStarted;
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return { rate: total / seconds, cpuPerSecond: total / (cpu / 1e6) };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Read-your-writes wait when the write follows another writer's event the view takes by 1 ms
 * (it falls in the gathering interval of that event's batch), then the wait until the view shows it. Rounds alternate between the runner
 * cutting its gathering for the waiting writer (as the service runs) and gathering only (the
 * writer's `want` switched off), in one process, so the machine's load weighs on both alike.
 */
async function ownWriteWait(workDir: string, commands: number, rounds: number): Promise<{ cut: number[]; gathered: number[] }> {
  const events = new SqliteEventStore(join(workDir, 'ryw-events.sqlite'));
  const views = new SqliteReadStore(join(workDir, 'ryw-views.sqlite'));
  const runner = new ProjectionRunner(events, views, [checksLikeProjection], { owner: 'bench-ryw', logger: silentLogger });
  await runner.start();
  const freshness = new ReadYourWrites(new ViewReader(views), runner, [checksLikeProjection]);
  const want = runner.want.bind(runner);
  const cut: number[] = [];
  const gathered: number[] = [];
  let n = 0;
  try {
    for (let round = 0; round < 2 * rounds; round++) {
      const cutting = round % 2 === 0;
      runner.want = cutting ? want : () => () => undefined;
      for (let i = 0; i < commands; i++, n++) {
        // Another writer's event the view takes, 1 ms before: its batch has started, and the
        // write falls in that batch's gathering interval.
        await events.append(`others-${n % STREAMS}`, [{ type: 'CheckRecorded', data: checkData(1_000_000 + n) }], { expectedRevision: 'any' });
        await new Promise((resolve) => setTimeout(resolve, 1));
        const write = await events.append(`checks-${n % STREAMS}`, [{ type: 'CheckRecorded', data: checkData(n) }], { expectedRevision: 'any' });
        const started = performance.now();
        await freshness.require({ append: write, appended: [{ type: 'CheckRecorded' }] });
        (cutting ? cut : gathered).push(performance.now() - started);
        // A client's think time: the next command starts after a quiet spell, as one client's do.
        await new Promise((resolve) => setTimeout(resolve, 6));
      }
    }
  } finally {
    await runner.stop();
    await views.close();
    await events.close();
  }
  return { cut, gathered };
}

const bench: BenchModule = {
  name: 'projections',
  async run({ quick, workDir, log }) {
    const total = quick ? 40_000 : 200_000;
    const events = new SqliteEventStore(join(workDir, 'events.sqlite'));
    log(`filling the log with ${total} events`);
    await fillLog(events, total);
    const views = new SqliteReadStore(join(workDir, 'views.sqlite'));
    const runner = new ProjectionRunner(events, views, [checksLikeProjection], { owner: 'bench', logger: silentLogger, batchSize: 500, dropDelayMs: 0 });
    log('rebuilding');
    const started = performance.now();
    const cpuStarted = cpuMicros();
    const mainStarted = mainThreadCpuMicros();
    const result = await runner.rebuild('bench_checks');
    const rebuildCpuPerSecond = result.applied / ((cpuMicros() - cpuStarted) / 1e6);
    const mainEnded = mainThreadCpuMicros();
    const rebuildMainCpuPerSecond = mainStarted === null || mainEnded === null ? null : result.applied / ((mainEnded - mainStarted) / 1e6);
    const rebuildRate = result.applied / ((performance.now() - started) / 1000);
    await runner.stop();
    await views.close();
    await events.close();
    log('raw inserts');
    const raw = rawInsertRate(join(workDir, 'raw.sqlite'), total);
    log('read-your-writes wait');
    const wait = await ownWriteWait(workDir, quick ? 100 : 300, 4);
    return {
      title: `Projection rebuild over ${total.toLocaleString('en-US')} events (SQLite)`,
      figures: [
        { name: 'rebuild rate (read log, apply, commit view + checkpoint)', value: rebuildRate, unit: 'events/s', baseline: { name: 'raw better-sqlite3 inserts of the same rows', value: raw.rate }, aim: '>= 0.8' },
        { name: 'rebuild events per CPU second (this process, user + system)', value: rebuildCpuPerSecond, unit: 'events/CPU s', baseline: { name: 'raw inserts per CPU second', value: raw.cpuPerSecond }, aim: '>= 0.8' },
        ...(rebuildMainCpuPerSecond === null
          ? []
          : [{ name: 'rebuild events per main-thread CPU second (the event loop; worker threads such as WAL checkpoints left out)', value: rebuildMainCpuPerSecond, unit: 'events/CPU s', baseline: { name: 'raw inserts per CPU second (one thread)', value: raw.cpuPerSecond } }]),
        { name: 'read-your-writes wait p50 (a write 1 ms after another writer\'s, then the wait)', value: percentile(wait.cut, 50), unit: 'ms', baseline: { name: 'the same with gathering only (the writer does not cut it)', value: percentile(wait.gathered, 50) }, aim: '<= 0.5 ms' },
        { name: 'read-your-writes wait p99', value: percentile(wait.cut, 99), unit: 'ms', baseline: { name: 'gathering only', value: percentile(wait.gathered, 99) } },
      ],
      notes: [
        `Read-your-writes wait: one live projection (the rebuild's) in this process; another writer appends an event the view takes, 1 ms later the command appends its write (inside the gathering interval of the first one's batch), then waits (ReadYourWrites.require) until the view applied it, then 6 ms of quiet. ${wait.cut.length} commands with the writer cutting the runner's 5 ms gathering, ${wait.gathered.length} without (the runner's want() stubbed out), in 8 alternating rounds. An event the view does not take (a command's id append before its write) no longer starts a batch at all: the runner wakes a projection only for its event types.`,
        'Both sides end with the same JSON rows and the same index, 500 rows per transaction, WAL, synchronous=NORMAL. The raw side keeps its index up to date row by row; the rebuild reads every event from the log a page at a time (asking for the next page before it applies this one), commits a checkpoint per batch, and builds the view\'s lookup index once the generation is filled (included in its time). The machine may be shared: the CPU figure is the steadier one.'],
    };
  },
};

export default bench;
