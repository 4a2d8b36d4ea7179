import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { chainedEventStore } from '../src/platform/event-store/chained-event-store.js';
import type { EventStore, NewEvent } from '../src/platform/event-store/event-store.port.js';
import {
  SQLITE_EVENTS_SCHEMA,
  SqliteEventStore,
  applySqliteEventLogPragmas,
} from '../src/platform/event-store/sqlite/sqlite-event-store.js';
import { type BenchFigure, type BenchModule, ratio } from './bench.js';

const STREAMS = 50;
const ROUNDS = 4;
/**
 * The hash chain's comparison: more, shorter rounds than the adapter's, each side's order swapped
 * every round, after one round per side that is not counted. With four rounds and no warm-up,
 * the chained side alone paid for compiling the chain's code (the adapter's was compiled by the
 * adapter-against-raw runs before it), and one garbage collection landing in one side's
 * 15 ms round moved the ratio by a tenth: on a quiet machine the same build read 0.72 to 1.03.
 */
const CHAIN_ROUNDS = 12;

function sampleEvent(n: number): NewEvent {
  return {
    type: 'CheckRecorded',
    data: { endpoint_id: n % STREAMS, status: 200, duration_ms: 87 + (n % 13), region: 'eu-west' },
    metadata: { actor: 'system:prober', request_id: `req-${n}` },
  };
}

/** The exact row the adapter would write, serialised up front: the floor the adapter can reach. */
function rawRow(event: NewEvent, streamId: string, revision: number): unknown[] {
  const now = new Date().toISOString();
  const metadata = { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: now, ...event.metadata };
  return [randomUUID(), streamId, revision, event.type, 1, JSON.stringify(event.data), JSON.stringify(metadata), now];
}

class RawLog {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement<unknown[]>;
  private readonly insertBatch: (rows: unknown[][]) => void;

  constructor(file: string) {
    this.db = new Database(file);
    applySqliteEventLogPragmas(this.db, 5000);
    this.db.exec(SQLITE_EVENTS_SCHEMA);
    this.insert = this.db.prepare(
      `INSERT INTO events (event_id, stream_id, revision, type, schema_version, data, metadata, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.insertBatch = this.db.transaction((rows: unknown[][]) => {
      for (const row of rows) this.insert.run(...row);
    });
  }

  write(rows: unknown[][]): void {
    this.insertBatch(rows);
  }

  /** Every row in pages, parsed as a reader needs it (data and metadata JSON). */
  readAll(pageSize: number): number {
    const page = this.db.prepare('SELECT * FROM events WHERE position > ? ORDER BY position LIMIT ?');
    let after = 0;
    let count = 0;
    for (;;) {
      const rows = page.all(after, pageSize) as Array<{ position: number; data: string; metadata: string }>;
      for (const row of rows) {
        JSON.parse(row.data);
        JSON.parse(row.metadata);
      }
      count += rows.length;
      if (rows.length < pageSize) return count;
      after = rows[rows.length - 1].position;
    }
  }

  close(): void {
    this.db.close();
  }
}

interface Workload {
  appends: number;
  perAppend: number;
}

/** Events/s through the adapter and through raw inserts, alternating rounds to share disk noise. */
async function measure(dir: string, load: Workload): Promise<{ adapter: number; raw: number; read?: { adapter: number; raw: number } }> {
  const store = new SqliteEventStore(join(dir, `adapter-${load.perAppend}.sqlite`));
  const raw = new RawLog(join(dir, `raw-${load.perAppend}.sqlite`));
  const storeRevisions = new Map<string, number>();
  const rawRevisions = new Map<string, number>();
  const perRound = Math.max(1, Math.floor(load.appends / ROUNDS));
  let adapterMs = 0;
  let rawMs = 0;
  let n = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const batches = Array.from({ length: perRound }, () => Array.from({ length: load.perAppend }, () => sampleEvent(n++)));
    const rawBatches = batches.map((events, i) => {
      const streamId = `stream-${i % STREAMS}`;
      const base = rawRevisions.get(streamId) ?? -1;
      rawRevisions.set(streamId, base + events.length);
      return events.map((e, k) => rawRow(e, streamId, base + 1 + k));
    });

    let started = performance.now();
    for (const rows of rawBatches) raw.write(rows);
    rawMs += performance.now() - started;

    started = performance.now();
    for (let i = 0; i < batches.length; i++) {
      const streamId = `stream-${i % STREAMS}`;
      const expectedRevision = storeRevisions.get(streamId) ?? 'no_stream';
      const result = await store.append(streamId, batches[i], { expectedRevision });
      storeRevisions.set(streamId, result.nextExpectedRevision);
    }
    adapterMs += performance.now() - started;
  }
  const read = await measureReads(store, raw);
  await store.close();
  raw.close();
  const events = perRound * ROUNDS * load.perAppend;
  return { adapter: Math.round(events / (adapterMs / 1000)), raw: Math.round(events / (rawMs / 1000)), read };
}

/** Events/s reading the whole log in pages of 500 (what a catching-up projection does), alternating sides. */
async function measureReads(store: SqliteEventStore, raw: RawLog): Promise<{ adapter: number; raw: number }> {
  let adapterMs = 0;
  let rawMs = 0;
  let adapterEvents = 0;
  let rawEvents = 0;
  for (let round = 0; round < ROUNDS; round++) {
    let started = performance.now();
    rawEvents += raw.readAll(500);
    rawMs += performance.now() - started;
    started = performance.now();
    for (let after: number | null = null; ; ) {
      const page = await store.readAll({ after, maxCount: 500 });
      adapterEvents += page.length;
      if (page.length < 500) break;
      after = page[page.length - 1].position;
    }
    adapterMs += performance.now() - started;
  }
  return { adapter: Math.round(adapterEvents / (adapterMs / 1000)), raw: Math.round(rawEvents / (rawMs / 1000)) };
}

/**
 * The cost of the hash chain (docs/audit.md): the same appends through the adapter alone and
 * through the chained store every process uses, alternating rounds, in events per CPU second of
 * this process; and the size of the file each ends with.
 */
async function measureChain(dir: string, load: Workload): Promise<{ adapter: number; raw: number; bytesPerEvent: number }> {
  const plainFile = join(dir, `plain-${load.perAppend}.sqlite`);
  const chainedFile = join(dir, `chained-${load.perAppend}.sqlite`);
  const sides: Array<{ store: EventStore; revisions: Map<string, number>; ms: number }> = [
    { store: new SqliteEventStore(plainFile), revisions: new Map(), ms: 0 },
    { store: chainedEventStore(new SqliteEventStore(chainedFile)), revisions: new Map(), ms: 0 },
  ];
  const perRound = Math.max(1, Math.floor(load.appends / CHAIN_ROUNDS));
  let n = 0;
  // Round -1 warms both sides up and is not counted.
  for (let round = -1; round < CHAIN_ROUNDS; round++) {
    const batches = Array.from({ length: perRound }, () => Array.from({ length: load.perAppend }, () => sampleEvent(n++)));
    for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
      // CPU time (user + system) of this process: what the chain adds, less blurred by other work on a shared machine than wall time.
      const started = process.cpuUsage();
      for (let i = 0; i < batches.length; i++) {
        const streamId = `stream-${i % STREAMS}`;
        const result = await side.store.append(streamId, batches[i], { expectedRevision: side.revisions.get(streamId) ?? 'no_stream' });
        side.revisions.set(streamId, result.nextExpectedRevision);
      }
      const used = process.cpuUsage(started);
      if (round >= 0) side.ms += (used.user + used.system) / 1000;
    }
  }
  for (const side of sides) await side.store.close();
  const events = perRound * CHAIN_ROUNDS * load.perAppend;
  const size = (file: string) => {
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    return statSync(file).size;
  };
  return {
    adapter: Math.round(events / (sides[1].ms / 1000)),
    raw: Math.round(events / (sides[0].ms / 1000)),
    bytesPerEvent: (size(chainedFile) - size(plainFile)) / n,
  };
}

function figure(name: string, baselineName: string, result: { adapter: number; raw: number }): BenchFigure {
  return {
    name,
    value: result.adapter,
    unit: 'events/s',
    baseline: { name: baselineName, value: result.raw },
    ratio: ratio(result.adapter, result.raw),
    aim: '>= 0.5',
  };
}

const eventStoreBench: BenchModule = {
  name: 'event-store',
  async run({ quick, workDir, log }) {
    const dir = join(workDir, `event-store-${randomUUID().slice(0, 8)}`);
    mkdirSync(dir, { recursive: true });
    try {
      const single = { appends: quick ? 200 : 2000, perAppend: 1 };
      const hundred = { appends: quick ? 20 : 200, perAppend: 100 };
      log(`event-store: ${single.appends} single-event appends`);
      const singleResult = await measure(dir, single);
      log(`event-store: ${hundred.appends} appends of 100 events`);
      const hundredResult = await measure(dir, hundred);
      log(`event-store: hash chain, ${single.appends} single-event appends`);
      const chainSingle = await measureChain(dir, single);
      log(`event-store: hash chain, ${hundred.appends} appends of 100 events`);
      const chainHundred = await measureChain(dir, hundred);
      const chainFigure = (name: string, result: { adapter: number; raw: number }): BenchFigure => ({
        ...figure(name, 'the same SQLite adapter without the chain', result),
        unit: 'events per CPU second',
        aim: '>= 0.9',
      });
      return {
        title: 'Event store (SQLite) append throughput',
        figures: [
          figure('SQLite adapter, 1 event per append', 'raw better-sqlite3, 1 row per transaction', singleResult),
          figure('SQLite adapter, 100 events per append', 'raw better-sqlite3, 100 rows per transaction', hundredResult),
          figure('SQLite adapter, readAll in pages of 500 (after the 100-per-append run)', 'raw better-sqlite3 SELECT of first-layout rows, data and metadata parsed', hundredResult.read!),
          chainFigure('Hash-chained SQLite store, 1 event per append', chainSingle),
          chainFigure('Hash-chained SQLite store, 100 events per append', chainHundred),
        ],
        notes: [
          'Both sides use WAL, synchronous=NORMAL (the default; SQLITE_SYNCHRONOUS=FULL fsyncs every commit); every append is one transaction.',
          "The raw side inserts pre-serialised rows of the log's first layout (one self-contained row per event, the floor of the adapter before issue 12). The adapter writes the compact layout: it adds the expected-revision check, interning of stream and type, one commit row per append, event ids, timestamps and JSON serialisation.",
          'Reads: the adapter joins stream, type and commit and rebuilds each envelope; the raw side reads the first-layout rows as they are.',
          `Hash chain (docs/audit.md): SHA-256 over each event's RFC 8785 form, the previous hash from the store's per-stream cache; file grew by ${chainSingle.bytesPerEvent.toFixed(1)} bytes per event (1 per append) and ${chainHundred.bytesPerEvent.toFixed(1)} (100 per append) against the same events unchained (an 8-byte hash column, 32 bytes at anchors: revision 0 and every 64th).`,
          `Appends round-robin over ${STREAMS} streams with exact expected revisions; adapter and raw alternate in ${ROUNDS} rounds; plain and chained in ${CHAIN_ROUNDS}, after one round each that is not counted.`,
          'Hash chain cost (issue 28, 2026-11-26), on a machine shared with six other engineers (load average 15-19 on 2 cores), so read the ratios, not the rates. `npm run bench -- event-store`, three runs each, the builds alternating (before: main with the four chain commits 3ebbb2b, 5af3719, d268552, 629c1d9 reverted; after: main at 629c1d9): 1 event per append, before 0.731/0.787/0.95, after 0.842/1.001/1.076; 100 events per append, before 0.639/0.641/0.683, after 0.678/0.707/0.751. Both builds in one process, plain and chained, 60 alternating rounds of 500 events, CPU time per event (min/median): chained, 100 per append, 8.78/13.63 -> 7.81/12.15 us (plain 5.6-6.1/7.4-8.7); 1 per append, median 105.5 -> 99.7 us (plain 77). User-space instructions per event (cachegrind, the difference between runs of 5,000 and 25,000 events, 100 per append): plain 48,200; chained 82,200 before; after, 75,300 (the first three commits) and 78,600 (all four, main at 629c1d9: repeated runs differ by a few thousand, from garbage collection and compilation). The cuts: a known head taken without an await and stamped events as literals, the sort and quoting of a repeated key list and of repeated fields done once, the hash bound as hex for SQLite\'s unhex() instead of a Buffer decoded in JavaScript, and its check a search for one non-hex character instead of an anchored 64-digit pattern (1,800 -> 800 instructions). What is left is mostly the definition itself: one SHA-256 call per event (crypto.hash on the ~300-byte input, 0.4 us on this machine; 14,000 instructions under cachegrind, which hides SHA-NI) and the 32-byte column (+0.35 us per row, about 12 %, in raw better-sqlite3 with 100 rows per transaction: rows a third longer fill pages sooner). Those two alone are about 10 % of a 7 us append, so the >= 0.9 aim at 100 events per append sits at the floor of the chain as defined (docs/audit.md); at 1 event per append it is met in two of three runs. Earlier (session 8): a dictionary-mode metadata spread cut, 0.42-0.48 -> 0.68-0.75 at 100 per append.',
          'Hash chain floor (issue 28, session 10, 2026-11-26), on a machine shared with five other engineers (load average 5-13 on 2 cores). The aim >= 0.9 at 100 events per append sits below the floor of the chain as defined. Method: one process appends through the plain adapter, the chained store and three variants of the chained build, 100 alternating rounds of 500 events (100 per append), CPU time per event (`node cmp.mjs 100 5 100 plain=ROOT:plain chained=ROOT:chained C=ROOT_C:chained D=ROOT_D:chained E=ROOT_E:chained`, the script kept with the session notes). The variants are built by editing the compiled chain: C hashes an input of the same length without building the canonical form; D stores a constant hash with no canonical form and no SHA-256; E is D with the hash column left NULL. First quartiles over three runs of main at 8ad7448, in us per event: plain 4.85-5.22, chained 6.84-8.35, C 6.07-6.66, D 5.38-5.89, E 5.02-5.55 (at 6380278, before the hex check was skipped: plain 4.97-5.30, chained 7.30-8.07, C 6.92-7.19, D 5.77-5.94, E 5.29-5.47). So the SHA-256 call and the 32-byte column alone (C against E) cost 1.05-1.3 us per event, 20-25 % of the plain append, twice what the aim allows before any canonical form is built; the SHA-256 call costs 0.6-1.3 us inside the append against 0.4-0.5 us in a loop of its own. This session: the canonical form is built from seven pieces, the text around data, request_id and revision kept whole for a run of equal fields (6380278; microbenchmark `node canon3.mjs BEFORE AFTER`: canonicalEvent 398 -> 306 ns, chainHash 1,366 -> 1,247 ns; within the noise in the append), and the chained store marks its appends (NewEvent.chainHashed) so the SQLite adapter stores their hashes without its per-event hex pattern test (8ad7448; 0.3-0.5 us per event in the same-process comparison, chained/plain medians 0.69-0.70 -> 0.73-0.75). `npm run bench -- event-store`, three runs per build, alternating (before: main at 46efc9a, the start of this session; after: main at 8ad7448, which also holds changes to the adapter by other engineers): 100 per append 0.581/0.704/0.683 before, 0.806/0.847/0.782 after; 1 per append 0.952/0.946/0.978 before, 0.917/0.938/0.9 after.',
          'Compact layout (issue 12), on a machine shared with other work (load average about 11 on 2 cores): eight runs gave ratios of 0.47-0.92 for 1 event per append, 0.52-0.93 for 100, and 0.55-1.24 for reads (the table is the last run); before it (2026-11-22, same baseline) 0.785 and 0.753. A single-event append now also writes its commit row.',
        ],
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default eventStoreBench;
