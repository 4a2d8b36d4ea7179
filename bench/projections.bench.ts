import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteEventStore } from '../src/platform/event-store/sqlite/sqlite-event-store.js';
import { silentLogger } from '../src/platform/logging/logger.js';
import { defineProjection } from '../src/platform/projections/projection.js';
import { ProjectionRunner } from '../src/platform/projections/projection-runner.js';
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

/** The floor: the same rows inserted straight into an indexed JSON table, in 500-row transactions. */
function rawInsertRate(file: string, total: number): number {
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
  for (let start = 0; start < total; start += 500) {
    insertMany(Array.from({ length: Math.min(500, total - start) }, (_, i) => ({ id: String(start + i + 1), ...checkData(start + i) })));
  }
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return total / seconds;
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
    const result = await runner.rebuild('bench_checks');
    const rebuildRate = result.applied / ((performance.now() - started) / 1000);
    await runner.stop();
    await views.close();
    await events.close();
    log('raw inserts');
    const raw = rawInsertRate(join(workDir, 'raw.sqlite'), total);
    return {
      title: `Projection rebuild over ${total.toLocaleString('en-US')} events (SQLite)`,
      figures: [
        { name: 'rebuild rate (read log, apply, commit view + checkpoint)', value: rebuildRate, unit: 'events/s', baseline: { name: 'raw better-sqlite3 inserts of the same rows', value: raw }, aim: '>= 0.3' },
      ],
      notes: ['Both sides write the same JSON rows with the same index, 500 rows per transaction, WAL, synchronous=NORMAL. The rebuild also reads every event from the log and commits a checkpoint per batch.'],
    };
  },
};

export default bench;
