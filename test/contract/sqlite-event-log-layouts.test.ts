/**
 * The SQLite event log keeps new events in a compact layout (interned streams and types, one
 * commit row per append). Files written before it hold their events in the first layout
 * (`events`, one self-contained row per event): they must open and read exactly as before,
 * and go on working (appends, subscriptions, retention) without any stored event being rewritten.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { chainedEventStore } from '../../src/platform/event-store/chained-event-store.js';
import { chainedFieldsOf, chainOf } from '../../src/platform/event-store/chain.js';
import { makeTempDir } from '../support/event-store-fixtures.js';

/** The first layout, as `git show main:src/platform/event-store/sqlite/sqlite-event-store.ts` created it. */
const FIRST_LAYOUT = `
  CREATE TABLE IF NOT EXISTS events (
    position       INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id       TEXT    NOT NULL,
    stream_id      TEXT    NOT NULL,
    revision       INTEGER NOT NULL,
    type           TEXT    NOT NULL,
    schema_version INTEGER NOT NULL,
    data           TEXT    NOT NULL,
    metadata       TEXT    NOT NULL,
    recorded_at    TEXT    NOT NULL,
    UNIQUE (stream_id, revision)
  )`;

type FirstLayoutRow = [eventId: string, streamId: string, revision: number, type: string, schemaVersion: number, data: string, metadata: string, recordedAt: string];

/** Rows as earlier versions wrote them: metadata with and without nulls, idempotency keys, v1 and v2 data. */
const OLD_ROWS: FirstLayoutRow[] = [
  ['0b7c6a52-8f0e-4d1a-9c3e-6f1d2a3b4c5d', 'endpoint-1', 0, 'EndpointRegistered', 1, '{"name":"a","url":"https://a.example"}', '{"actor":"admin","request_id":"req-1","correlation_id":"req-1","causation_id":null,"occurred_at":"2026-01-01T00:00:00.000Z"}', '2026-01-01T00:00:00.000Z'],
  ['1c8d7b63-9f1f-4e2b-8d4f-7a2e3b4c5d6e', 'checks-1', 0, 'CheckRecorded', 1, '{"check_id":1,"success":true,"status_code":200,"failure_reason":null}', '{"actor":"system:prober","correlation_id":"job-1","occurred_at":"2026-01-01T00:00:30.000Z"}', '2026-01-01T00:00:30.120Z'],
  ['2d9e8c74-a020-4f3c-9e50-8b3f4c5d6e7f', 'checks-1', 1, 'CheckRecorded', 2, '{"check_id":2,"success":false,"status_code":503}', '{"actor":"admin","request_id":"req-2","correlation_id":"req-2","occurred_at":"2026-01-01T00:01:00Z"}', '2026-01-02T08:00:00.000Z'],
  ['not-a-uuid', 'endpoint-1', 1, 'EndpointUpdated', 1, '{"name":"b"}', '{"actor":"token:7","request_id":"req-3","correlation_id":"req-3","occurred_at":"2026-01-03T00:00:00.000Z","idempotency_key":"team:1:k","idempotency_step":0}', '2026-01-03T00:00:00.000Z'],
  ['3eaf9d85-b131-4a4d-8f61-9c404d5e6f80', 'checks-1', 2, 'CheckRecorded', 2, '{"check_id":3,"success":true,"status_code":200}', '{"actor":"system:prober","correlation_id":"job-3","occurred_at":"2026-01-03T00:00:30.000Z"}', '2026-01-03T00:00:30.050Z'],
];

/** What the first layout's reader gave for a row (nulls put back in front, stored keys after). */
function expectedOldEvent(row: FirstLayoutRow, position: number): RecordedEvent {
  const [id, streamId, revision, type, schemaVersion, data, metadata, recordedAt] = row;
  return {
    id,
    streamId,
    type,
    schemaVersion,
    data: JSON.parse(data),
    metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, ...JSON.parse(metadata) },
    revision,
    position,
    recordedAt,
  };
}

/** A file of the first layout holding OLD_ROWS at positions 1-5, and a sixth event that was removed (its position stays used). */
function writeFirstLayoutFile(file: string): RecordedEvent[] {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(FIRST_LAYOUT);
  const insert = db.prepare('INSERT INTO events (event_id, stream_id, revision, type, schema_version, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  for (const row of OLD_ROWS) insert.run(...row);
  insert.run('4fb0ae96-c242-4b5e-9072-ad515e6f7081', 'gone', 0, 'Gone', 1, '{}', '{"occurred_at":"2026-01-04T00:00:00.000Z"}', '2026-01-04T00:00:00.000Z');
  db.prepare(`DELETE FROM events WHERE stream_id = 'gone'`).run();
  db.close();
  return OLD_ROWS.map((row, i) => expectedOldEvent(row, i + 1));
}

/** Byte for byte, key order included: what a projection or an API answer would serialise. */
function serialised(events: RecordedEvent[]): string[] {
  return events.map((event) => JSON.stringify(event));
}

describe('SQLite event log written in the first layout', () => {
  let temp: ReturnType<typeof makeTempDir>;
  let file: string;
  let expected: RecordedEvent[];
  beforeEach(() => {
    temp = makeTempDir();
    file = join(temp.path, 'events.sqlite');
    expected = writeFirstLayoutFile(file);
  });
  afterEach(() => temp.remove());

  it('opens and reads every stored event exactly as before, through every read', async () => {
    const store = new SqliteEventStore(file);
    expect(serialised(await store.readAll({ maxCount: 100 }))).toEqual(serialised(expected));
    expect(serialised(await store.readAll({ after: 2, maxCount: 2 }))).toEqual(serialised(expected.slice(2, 4)));
    expect(serialised(await store.readStream('checks-1'))).toEqual(serialised([expected[1], expected[2], expected[4]]));
    expect(serialised(await store.readStream('checks-1', { direction: 'backwards', fromRevision: 1, maxCount: 1 }))).toEqual(serialised([expected[2]]));
    expect(await store.headPosition()).toBe(5);
    await store.close();
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT event_id, stream_id, revision, type, schema_version, data, metadata, recorded_at FROM events ORDER BY position').raw().all()).toEqual(OLD_ROWS);
    raw.close();
  });

  it('appends after the stored events: revisions and positions go on, reads span both layouts', async () => {
    const store = new SqliteEventStore(file);
    await expect(store.append('checks-1', [{ type: 'CheckRecorded', data: { check_id: 4 } }], { expectedRevision: 1 })).rejects.toMatchObject({ name: 'WrongExpectedRevisionError', actual: 2 });
    const appended = await store.append('checks-1', [{ type: 'CheckRecorded', data: { check_id: 4 }, metadata: { actor: 'system:prober', correlation_id: 'job-4', occurred_at: '2026-01-05T00:00:00.000Z' } }], { expectedRevision: 2 });
    // Position 6 was taken by the removed event: positions are never reused.
    expect(appended).toEqual({ nextExpectedRevision: 3, position: 7 });
    const stream = await store.readStream('checks-1');
    expect(stream.map((e) => [e.revision, e.position])).toEqual([[0, 2], [1, 3], [2, 5], [3, 7]]);
    expect(serialised(stream.slice(0, 3))).toEqual(serialised([expected[1], expected[2], expected[4]]));
    expect((await store.readStream('checks-1', { direction: 'backwards', maxCount: 2 })).map((e) => e.revision)).toEqual([3, 2]);
    expect((await store.readStream('checks-1', { fromRevision: 2, maxCount: 2 })).map((e) => e.revision)).toEqual([2, 3]);
    expect((await store.readAll({ after: 4, maxCount: 10 })).map((e) => e.position)).toEqual([5, 7]);
    // A selected read filters both layouts, and still fills its pages across them.
    const onlyChecks = { only: new Set(['checks-1']) };
    expect((await store.readAll({ maxCount: 3, streams: onlyChecks })).map((e) => e.position)).toEqual([2, 3, 5]);
    expect((await store.readAll({ after: 3, maxCount: 2, streams: onlyChecks })).map((e) => e.position)).toEqual([5, 7]);
    expect(serialised(await store.readAll({ maxCount: 100, streams: { except: new Set(['checks-1']) } }))).toEqual(serialised([expected[0], expected[3]]));
    expect(await store.headPosition()).toBe(7);

    const subscription = store.subscribeToAll({ after: 3 });
    const seen: number[] = [];
    for await (const event of subscription) {
      seen.push(event.position);
      if (event.position === 7) break;
    }
    expect(seen).toEqual([4, 5, 7]);
    await store.close();
  });

  it('removes events of either layout for retention and keeps the stream appendable at its revision', async () => {
    const store = new SqliteEventStore(file);
    await store.append('checks-1', [{ type: 'CheckRecorded', data: { check_id: 4 } }, { type: 'ChecksSummarized', data: { through: 3 } }], { expectedRevision: 2 });
    expect(await store.removeEvents('checks-1', { throughRevision: 3, types: ['CheckRecorded'] })).toEqual({ removed: 4 });
    expect((await store.readStream('checks-1')).map((e) => e.type)).toEqual(['ChecksSummarized']);
    await store.append('checks-1', [{ type: 'CheckRecorded', data: { check_id: 5 } }], { expectedRevision: 4 });
    expect((await store.readAll({ maxCount: 100 })).map((e) => e.streamId)).toEqual(['endpoint-1', 'endpoint-1', 'checks-1', 'checks-1']);
    await store.close();
  });
});

describe('SQLite event log in the compact layout', () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(() => temp.remove());

  it('reads every event back the same, byte for byte, through every read and after reopening, whatever the events of one append share', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const appended = await store.append(
      'mixed',
      [
        { type: 'A', data: { n: 1 }, metadata: { actor: 'admin', request_id: 'r1', correlation_id: 'r1', occurred_at: '2026-01-01T00:00:00.000Z' } },
        { type: 'B', schemaVersion: 2, data: { n: 2 }, metadata: { actor: 'admin', request_id: 'r1', correlation_id: 'r1', occurred_at: '2026-01-01T00:00:00Z' } },
        { type: 'A', data: null, metadata: { actor: 'admin', request_id: 'r1', correlation_id: 'r1', causation_id: 'c9', idempotency_key: 'team:1:k', idempotency_step: 2 } },
        { type: 'C', data: [1, 'two'] },
      ],
      { expectedRevision: 'no_stream' },
    );
    await store.append('other', [{ type: 'A', data: {}, metadata: { occurred_at: '2099-12-31T23:59:59.999Z' } }], { expectedRevision: 'no_stream' });
    const events = await store.readStream('mixed');
    expect(events).toHaveLength(4);
    const again = new SqliteEventStore(file);
    for (const reader of [store, again]) {
      expect(serialised(await reader.readStream('mixed'))).toEqual(serialised(events));
      expect(serialised((await reader.readAll({ maxCount: 10 })).slice(0, 4))).toEqual(serialised(events));
    }
    expect(appended.position).toBe(4);
    expect(events.map((e) => e.metadata)).toEqual([
      { actor: 'admin', request_id: 'r1', correlation_id: 'r1', causation_id: null, occurred_at: '2026-01-01T00:00:00.000Z' },
      { actor: 'admin', request_id: 'r1', correlation_id: 'r1', causation_id: null, occurred_at: '2026-01-01T00:00:00Z' },
      { actor: 'admin', request_id: 'r1', correlation_id: 'r1', causation_id: 'c9', occurred_at: events[2].recordedAt, idempotency_key: 'team:1:k', idempotency_step: 2 },
      { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: events[3].recordedAt },
    ]);
    expect(Object.keys(events[2].metadata)).toEqual(['actor', 'request_id', 'correlation_id', 'causation_id', 'occurred_at', 'idempotency_key', 'idempotency_step']);
    expect(events.map((e) => e.id)).toEqual(events.map((e) => expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)));
    expect((await again.readStream('other'))[0].metadata.occurred_at).toBe('2099-12-31T23:59:59.999Z');
    await Promise.all([store.close(), again.close()]);
  });

  it('drops a commit once retention removed all of its events, and keeps those still referred to', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    // Three appends of several events with other metadata: three commits (see the shared commits below).
    await store.append('s', [{ type: 'Check', data: { n: 0 } }, { type: 'Check', data: { n: 1 } }], { expectedRevision: 'no_stream', });
    await store.append('s', [{ type: 'Check', data: { n: 2 }, metadata: { actor: 'a' } }, { type: 'Keep', data: { n: 3 }, metadata: { actor: 'a' } }], { expectedRevision: 1 });
    await store.append('s', [{ type: 'Check', data: { n: 4 }, metadata: { actor: 'b' } }, { type: 'Keep', data: { n: 5 }, metadata: { actor: 'b' } }], { expectedRevision: 3 });
    const before = await store.readStream('s');
    await store.removeEvents('s', { throughRevision: 3, types: ['Check'] });
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT id FROM event_commits ORDER BY id').pluck().all()).toEqual([3, 5]);
    raw.close();
    expect(serialised(await store.readStream('s'))).toEqual(serialised([before[3], before[4], before[5]]));
    await store.close();
  });

  it('never gives a position twice, also after retention removed the newest events: in this process, another connection and after reopening', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    await store.append('kept', [{ type: 'Keep', data: { n: 0 } }], { expectedRevision: 'no_stream' });
    await store.append('old', [0, 1, 2].map((n) => ({ type: 'Check', data: { n } })), { expectedRevision: 'no_stream' });
    // A subscriber that has seen position 4 must be given every later event.
    await store.removeEvents('old', { throughRevision: 2, types: ['Check'] });
    expect((await store.append('next', [{ type: 'Keep', data: {} }], { expectedRevision: 'no_stream' })).position).toBe(5);
    await store.removeEvents('next', { throughRevision: 0, types: ['Keep'] });
    const another = new SqliteEventStore(file);
    expect((await another.append('other', [{ type: 'Keep', data: {} }, { type: 'Keep', data: {} }], { expectedRevision: 'no_stream' })).position).toBe(7);
    await another.removeEvents('other', { throughRevision: 1, types: ['Keep'] });
    await another.close();
    await store.close();
    const reopened = new SqliteEventStore(file);
    expect((await reopened.append('last', [{ type: 'Keep', data: {} }], { expectedRevision: 'no_stream' })).position).toBe(8);
    expect((await reopened.readAll({ maxCount: 10 })).map((e) => [e.streamId, e.position])).toEqual([['kept', 1], ['last', 8]]);
    await reopened.close();
  });

  it('stores packed records with their key lists once and reads them back byte for byte, live, after reopening and after retention', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: null });
    const reading = (async () => {
      for await (const event of subscription) {
        seen.push(event);
        if (seen.length === 5) break;
      }
    })();
    const records = [
      { success: true, status_code: 200, latency_ms: 4.5, job_id: '65:1795699533568', nested: { a: [1, null, { '2': 'x' }] } },
      { success: false, status_code: 0, failure_reason: 'timeout: \u0001 "quoted"', latency_ms: 1000 },
      { '10': 'integer-like keys first', b: null, a: -0, big: 1e21 },
      { success: true, status_code: 200, latency_ms: 4.5, job_id: '66:1795699533569', nested: { a: [] } },
    ];
    await store.append('checks-1', records.slice(0, 2).map((data) => ({ type: 'CheckRecorded', data, packed: true, metadata: { actor: 'system:prober', correlation_id: `job-${data.status_code}` } })), { expectedRevision: 'no_stream' });
    await store.append('checks-1', [{ type: 'CheckRecorded', data: records[2], packed: true }], { expectedRevision: 1 });
    await store.append('checks-1', [{ type: 'CheckRecorded', data: records[3], packed: true, metadata: { actor: 'system:prober', correlation_id: 'job-3' } }], { expectedRevision: 2 });
    // Not a plain object: stored as it is even when marked.
    await store.append('checks-1', [{ type: 'CheckRecorded', data: [1, 2], packed: true }], { expectedRevision: 3 });
    await reading;
    const events = await store.readStream('checks-1');
    expect(events.map((e) => JSON.stringify(e.data))).toEqual([...records, [1, 2]].map((r) => JSON.stringify(r)));
    expect(serialised(seen)).toEqual(serialised(events));
    const again = new SqliteEventStore(file);
    expect(serialised(await again.readStream('checks-1'))).toEqual(serialised(events));
    expect(serialised(await again.readAll({ maxCount: 10 }))).toEqual(serialised(events));

    const raw = new Database(file, { readonly: true });
    const rows = raw.prepare('SELECT data FROM event_log ORDER BY position').pluck().all() as string[];
    // Records of scalars only are coded (sqlite-event-log-coded-records.test.ts), their shapes (3
    // and 4: the metadata's is 1) in the mark; nested ones packed JSON.
    expect(rows.slice(0, 4).map((data) => data.slice(0, 1))).toEqual(['\u0001', '\u0006', '\u0007', '\u0001']);
    expect(rows[4]).toBe('[1,2]');
    // Records 0 and 3 share a key list: three shapes for the data, and the metadata's.
    expect(raw.prepare('SELECT count(*) FROM event_shapes').pluck().get()).toBe(4);
    // The one-event appends join the first append's commit, each with its own metadata.
    expect((raw.prepare('SELECT metadata FROM event_commits ORDER BY id').pluck().all() as string[])).toEqual([expect.stringMatching(/^\u0001\[/)]);
    expect((raw.prepare('SELECT metadata FROM event_log ORDER BY position').pluck().all() as string[])).toEqual([null, expect.stringMatching(/^\u0001\[/), '{}', expect.stringMatching(/^\u0001\[/), '{}']);
    raw.close();

    await store.removeEvents('checks-1', { throughRevision: 1, types: ['CheckRecorded'] });
    expect(serialised(await again.readStream('checks-1'))).toEqual(serialised(events.slice(2)));
    await Promise.all([store.close(), again.close()]);
  });

  it('opens a compact file written before packed records and appends them to it', async () => {
    const file = join(temp.path, 'events.sqlite');
    const before = new SqliteEventStore(file);
    await before.append('s', [{ type: 'A', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    await before.close();
    const raw = new Database(file);
    raw.exec(`UPDATE event_commits SET metadata = '{"actor":"admin"}'; DROP TABLE event_shapes`);
    raw.close();
    const store = new SqliteEventStore(file);
    await store.append('s', [{ type: 'A', data: { n: 2 }, packed: true, metadata: { actor: 'admin' } }], { expectedRevision: 0 });
    const events = await store.readStream('s');
    expect(events.map((e) => [e.data, e.metadata.actor])).toEqual([[{ n: 1 }, 'admin'], [{ n: 2 }, 'admin']]);
    await store.close();
  });

  it('derives each event id from its position: the same through every read and after reopening, unique across files', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: null });
    const reading = (async () => {
      for await (const event of subscription) {
        seen.push(event);
        if (seen.length === 4) break;
      }
    })();
    await store.append('a', [{ type: 'A', data: { n: 1 } }, { type: 'A', data: { n: 2 } }], { expectedRevision: 'no_stream' });
    await store.append('b', [{ type: 'B', data: { n: 3 } }], { expectedRevision: 'no_stream' });
    await store.append('a', [{ type: 'A', data: { n: 4 }, metadata: { occurred_at: '2026-01-01T00:00:00.000Z' } }], { expectedRevision: 1 });
    await reading;
    // Integers, not 8-byte REALs: a derived id's 0 takes no byte, occurred_at's offset a few.
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT typeof(event_id), typeof(occurred_at) FROM event_log ORDER BY position').raw().all()).toEqual([
      ['integer', 'null'],
      ['integer', 'null'],
      ['integer', 'null'],
      ['integer', 'integer'],
    ]);
    raw.close();
    const ids = (await store.readAll({ maxCount: 10 })).map((e) => e.id);
    expect(ids).toEqual(ids.map(() => expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)));
    expect(new Set(ids).size).toBe(4);
    // The last group is the position; the rest is the file's.
    expect(ids.map((id) => id.slice(24))).toEqual(['000000000001', '000000000002', '000000000003', '000000000004']);
    expect(new Set(ids.map((id) => id.slice(0, 24))).size).toBe(1);
    expect(seen.map((e) => e.id)).toEqual(ids);
    expect((await store.readStream('a')).map((e) => e.id)).toEqual([ids[0], ids[1], ids[3]]);
    await store.close();
    const again = new SqliteEventStore(file);
    expect((await again.readAll({ maxCount: 10 })).map((e) => e.id)).toEqual(ids);
    await again.close();

    const other = new SqliteEventStore(join(temp.path, 'other.sqlite'));
    await other.append('a', [{ type: 'A', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    const [first] = await other.readAll({ maxCount: 1 });
    expect(first.position).toBe(1);
    expect(first.id).not.toBe(ids[0]);
    await other.close();
  });

  it('opens a compact file written before derived ids and interned metadata, keeps its stored ids, and appends in the new forms', async () => {
    const file = join(temp.path, 'events.sqlite');
    const before = new SqliteEventStore(file);
    await before.append('s', [{ type: 'A', data: { n: 1 }, metadata: { actor: 'system:prober' } }], { expectedRevision: 'no_stream' });
    await before.close();
    // As the version before wrote it: a random id's 16 bytes, the metadata packed, no texts or prefix.
    const raw = new Database(file);
    raw.exec(`UPDATE event_log SET event_id = X'0b7c6a528f0e4d1a9c3e6f1d2a3b4c5d'; DROP TABLE event_texts; DROP TABLE event_log_file; DELETE FROM event_shapes`);
    raw.prepare(`INSERT INTO event_shapes (id, keys) VALUES (1, '["actor"]')`).run();
    raw.prepare(`UPDATE event_commits SET metadata = ?`).run('\u0001[1,"system:prober"]');
    raw.close();
    const store = new SqliteEventStore(file);
    await store.append('s', [{ type: 'A', data: { n: 2 }, metadata: { actor: 'system:prober' } }], { expectedRevision: 0 });
    const events = await store.readStream('s');
    expect(events.map((e) => [e.id, e.data, e.metadata.actor])).toEqual([
      ['0b7c6a52-8f0e-4d1a-9c3e-6f1d2a3b4c5d', { n: 1 }, 'system:prober'],
      [expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-000000000002$/), { n: 2 }, 'system:prober'],
    ]);
    await store.close();
  });

  it('interns a type with its schema version as one kind, with no schema_version column, and reads every version back', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    await store.append('checks-1', [{ type: 'CheckRecorded', schemaVersion: 3, data: { n: 1 } }, { type: 'CheckRecorded', schemaVersion: 4, data: { n: 2 } }, { type: 'ChecksSummarized', data: { through: 1 } }], { expectedRevision: 'no_stream' });
    await store.append('checks-1', [{ type: 'CheckRecorded', schemaVersion: 4, data: { n: 3 } }], { expectedRevision: 2, groupCommit: true });
    const events = await store.readStream('checks-1');
    expect(events.map((e) => [e.type, e.schemaVersion, e.data])).toEqual([
      ['CheckRecorded', 3, { n: 1 }],
      ['CheckRecorded', 4, { n: 2 }],
      ['ChecksSummarized', 1, { through: 1 }],
      ['CheckRecorded', 4, { n: 3 }],
    ]);
    const again = new SqliteEventStore(file);
    expect(serialised(await again.readStream('checks-1'))).toEqual(serialised(events));
    expect(serialised(await again.readAll({ maxCount: 10 }))).toEqual(serialised(events));
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare(`SELECT name FROM pragma_table_info('event_log')`).pluck().all()).not.toContain('schema_version');
    expect(raw.prepare('SELECT name, schema_version FROM event_types ORDER BY id').raw().all()).toEqual([['CheckRecorded', 3], ['CheckRecorded', 4], ['ChecksSummarized', 1]]);
    raw.close();
    // Retention by type takes every version of it.
    expect(await again.removeEvents('checks-1', { throughRevision: 3, types: ['CheckRecorded'] })).toEqual({ removed: 3 });
    expect((await again.readStream('checks-1')).map((e) => e.type)).toEqual(['ChecksSummarized']);
    await Promise.all([store.close(), again.close()]);
  });

  it('opens a compact file written before kinds (a schema_version column, a type row per name), and reads and appends in it as before', async () => {
    const file = join(temp.path, 'events.sqlite');
    // The compact layout as the version before created it, with one event of type A at version 2.
    const raw = new Database(file);
    raw.pragma('journal_mode = WAL');
    raw.exec(`
      CREATE TABLE event_streams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
      CREATE TABLE event_types (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
      CREATE TABLE event_commits (id INTEGER PRIMARY KEY, recorded_at INTEGER NOT NULL, metadata TEXT NOT NULL);
      CREATE TABLE event_shapes (id INTEGER PRIMARY KEY, keys TEXT NOT NULL UNIQUE);
      CREATE TABLE event_texts (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE);
      CREATE TABLE event_log_file (id INTEGER PRIMARY KEY CHECK (id = 1), event_id_prefix BLOB NOT NULL, position_floor INTEGER);
      CREATE TABLE event_log (
        position       INTEGER PRIMARY KEY,
        stream         INTEGER NOT NULL,
        revision       INTEGER NOT NULL,
        type           INTEGER NOT NULL,
        schema_version INTEGER NOT NULL,
        event_id       BLOB    NOT NULL,
        occurred_at,
        metadata       TEXT,
        data           TEXT    NOT NULL,
        hash           BLOB,
        UNIQUE (stream, revision)
      );
      INSERT INTO event_log_file (id, event_id_prefix) VALUES (1, X'0b7c6a528f0e8d1a9c3e');
      INSERT INTO event_streams (id, name) VALUES (1, 's');
      INSERT INTO event_types (id, name) VALUES (1, 'A');
      INSERT INTO event_commits (id, recorded_at, metadata) VALUES (1, 1767225600000, '{}');
      INSERT INTO event_log (position, stream, revision, type, schema_version, event_id, occurred_at, metadata, data, hash) VALUES (1, 1, 0, 1, 2, 0, NULL, NULL, '{"n":1}', NULL);
    `);
    raw.close();
    const store = new SqliteEventStore(file);
    await store.append('s', [{ type: 'A', schemaVersion: 3, data: { n: 2 } }, { type: 'B', data: { n: 3 } }], { expectedRevision: 0 });
    const events = await store.readStream('s');
    expect(events.map((e) => [e.type, e.schemaVersion, e.data, e.id])).toEqual([
      ['A', 2, { n: 1 }, '0b7c6a52-8f0e-8d1a-9c3e-000000000001'],
      ['A', 3, { n: 2 }, expect.stringMatching(/-000000000002$/)],
      ['B', 1, { n: 3 }, expect.stringMatching(/-000000000003$/)],
    ]);
    expect(events[0].recordedAt).toBe('2026-01-01T00:00:00.000Z');
    const again = new SqliteEventStore(file);
    expect(serialised(await again.readAll({ maxCount: 10 }))).toEqual(serialised(events));
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT type, schema_version FROM event_log ORDER BY position').raw().all()).toEqual([[1, 2], [1, 3], [2, 1]]);
    expect(check.prepare('SELECT id, name FROM event_types ORDER BY id').raw().all()).toEqual([[1, 'A'], [2, 'B']]);
    check.close();
    await Promise.all([store.close(), again.close()]);
  });

  it('keeps metadata that names only its actor once for the whole log, and reads it back in every process', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    for (let i = 0; i < 20; i++) {
      await store.append(`checks-${i % 3}`, [{ type: 'CheckRecorded', data: { n: i }, packed: true, metadata: { actor: 'system:prober', occurred_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z` } }], { expectedRevision: 'any' });
    }
    await store.append('endpoint-1', [{ type: 'EndpointUpdated', data: { n: 1 }, metadata: { actor: 'token:7', request_id: 'r1', correlation_id: 'r1' } }], { expectedRevision: 'no_stream' });
    await store.append('endpoint-1', [{ type: 'EndpointUpdated', data: { n: 2 }, metadata: { actor: 'token:7' } }], { expectedRevision: 0 });
    const elsewhere = new SqliteEventStore(file);
    for (const reader of [store, elsewhere]) {
      const events = await reader.readAll({ maxCount: 100 });
      expect(events.slice(0, 20).map((e) => e.metadata)).toEqual(
        events.slice(0, 20).map((_, i) => ({ actor: 'system:prober', request_id: null, correlation_id: null, causation_id: null, occurred_at: `2026-01-01T00:00:${String(i).padStart(2, '0')}.000Z` })),
      );
      expect(events.slice(20).map((e) => [e.metadata.actor, e.metadata.request_id, e.metadata.correlation_id])).toEqual([['token:7', 'r1', 'r1'], ['token:7', null, null]]);
    }
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT text FROM event_texts ORDER BY id').pluck().all()).toEqual(['{"actor":"system:prober"}', '{"actor":"token:7"}']);
    // All 22 one-event appends share the prober's commit (see the next case); the last two keep their own metadata.
    expect(raw.prepare('SELECT metadata FROM event_commits ORDER BY id').pluck().all()).toEqual(['\u00021']);
    expect(raw.prepare('SELECT metadata FROM event_log ORDER BY position').pluck().all().slice(19)).toEqual([null, expect.stringMatching(/^\u0001\[/), '\u00022']);
    raw.close();
    await Promise.all([store.close(), elsewhere.close()]);
  });
  /** Returns once Date.now() has moved past `ms` (a few microseconds of spinning). */
  function afterMs(ms: number): void {
    while (Date.now() <= ms) {
      /* spin */
    }
  }

  it('lets appends with the same metadata, or of one event, share a commit, each event keeping its own recording time and metadata through every read', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: null });
    const reading = (async () => {
      for await (const event of subscription) {
        seen.push(event);
        if (seen.length === 8) break;
      }
    })();
    const prober = { actor: 'system:prober' };
    const occurred: string[] = [];
    for (let i = 0; i < 4; i++) {
      afterMs(Date.now());
      occurred.push(new Date(Date.now() - 5).toISOString());
      await store.append(`checks-${i}`, [{ type: 'CheckRecorded', data: { n: i }, packed: true, metadata: { ...prober, occurred_at: occurred[i] } }], { expectedRevision: 'no_stream' });
    }
    afterMs(Date.now());
    await store.append('endpoint-1', [{ type: 'EndpointUpdated', data: { n: 4 }, metadata: { actor: 'token:7', request_id: 'r1' } }, { type: 'EndpointUpdated', data: { n: 5 }, metadata: { actor: 'token:7', request_id: 'r1' } }], { expectedRevision: 'no_stream' });
    afterMs(Date.now());
    await store.append('checks-0', [{ type: 'CheckRecorded', data: { n: 6 }, metadata: prober }], { expectedRevision: 0 });
    afterMs(Date.now());
    await store.append('checks-0', [{ type: 'CheckRecorded', data: { n: 7 }, metadata: prober }], { expectedRevision: 1 });
    await reading;

    const events = await store.readAll({ maxCount: 100 });
    expect(events.map((e) => (e.data as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    // Each append's own recording time, as its subscribers got it live, whatever commit it joined.
    expect(serialised(events)).toEqual(serialised(seen));
    const times = events.map((e) => Date.parse(e.recordedAt));
    expect(times.slice(1).map((t, i) => (i === 4 ? t === times[i] : t > times[i]))).toEqual([true, true, true, true, true, true, true]);
    expect(events.slice(0, 4).map((e) => e.metadata.occurred_at)).toEqual(occurred);
    expect(events.map((e) => e.metadata.actor)).toEqual(['system:prober', 'system:prober', 'system:prober', 'system:prober', 'token:7', 'token:7', 'system:prober', 'system:prober']);
    expect(events[4].metadata.request_id).toBe('r1');
    const again = new SqliteEventStore(file);
    for (const reader of [store, again]) {
      expect(serialised(await reader.readAll({ maxCount: 100 }))).toEqual(serialised(events));
      expect(serialised(await reader.readStream('checks-0'))).toEqual(serialised([events[0], events[6], events[7]]));
      expect(serialised(await reader.readStream('checks-0', { direction: 'backwards', maxCount: 2 }))).toEqual(serialised([events[7], events[6]]));
    }
    await again.close();

    // Two commits where there were six appends: the two-event append with other metadata starts one,
    // which the prober's next one-event appends join with their own metadata; each joining event
    // keeps its offset from the commit.
    const raw = new Database(file, { readonly: true });
    const commits = raw.prepare('SELECT id, recorded_at FROM event_commits ORDER BY id').raw().all() as Array<[number, number]>;
    expect(commits.map(([id]) => id)).toEqual([1, 5]);
    expect(raw.prepare('SELECT event_id FROM event_log ORDER BY position').pluck().all()).toEqual([0, times[1] - times[0], times[2] - times[0], times[3] - times[0], 0, 0, times[6] - times[4], times[7] - times[4]]);
    expect(raw.prepare('SELECT metadata FROM event_log ORDER BY position').pluck().all()).toEqual([null, null, null, null, null, null, '\u00021', '\u00021']);
    raw.close();

    // Retention: the commit stays while any of its events does.
    await store.removeEvents('checks-1', { throughRevision: 0, types: ['CheckRecorded'] });
    await store.removeEvents('checks-0', { throughRevision: 1, types: ['CheckRecorded'] });
    expect(serialised(await store.readAll({ maxCount: 100 }))).toEqual(serialised([events[2], events[3], events[4], events[5], events[7]]));
    await store.removeEvents('checks-2', { throughRevision: 0, types: ['CheckRecorded'] });
    await store.removeEvents('checks-3', { throughRevision: 0, types: ['CheckRecorded'] });
    const after = new Database(file, { readonly: true });
    expect(after.prepare('SELECT id FROM event_commits ORDER BY id').pluck().all()).toEqual([5]);
    after.close();
    expect(serialised(await store.readAll({ maxCount: 100 }))).toEqual(serialised([events[4], events[5], events[7]]));
    await store.close();
  });

  it('starts a commit of its own for an append over 32,767 ms after the last commit, or before it', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const prober = { actor: 'system:prober' };
    await store.append('checks-1', [{ type: 'CheckRecorded', data: { n: 0 }, metadata: prober }], { expectedRevision: 'no_stream' });
    const raw = new Database(file);
    // As if the commit had been made 32,768 ms ago, then (a clock stepped back) a minute from now.
    raw.prepare('UPDATE event_commits SET recorded_at = ?').run(Date.now() - 32_768);
    await store.append('checks-1', [{ type: 'CheckRecorded', data: { n: 1 }, metadata: prober }], { expectedRevision: 0 });
    raw.prepare('UPDATE event_commits SET recorded_at = ? WHERE id = 2').run(Date.now() + 60_000);
    await store.append('checks-1', [{ type: 'CheckRecorded', data: { n: 2 }, metadata: prober }], { expectedRevision: 1 });
    raw.prepare('UPDATE event_commits SET recorded_at = ? WHERE id = 3').run(Date.now() - 20_000);
    await store.append('checks-1', [{ type: 'CheckRecorded', data: { n: 3 }, metadata: prober }], { expectedRevision: 2 });
    expect(raw.prepare('SELECT id FROM event_commits ORDER BY id').pluck().all()).toEqual([1, 2, 3]);
    const [offset] = raw.prepare('SELECT event_id FROM event_log WHERE position = 4').pluck().all() as number[];
    expect(offset).toBeGreaterThanOrEqual(20_000);
    raw.close();
    const events = await store.readStream('checks-1');
    const commit3 = Date.parse(events[2].recordedAt);
    expect(Date.parse(events[3].recordedAt)).toBe(commit3 + offset);
    await store.close();
  });
  it("stores each chained event's hash as its bytes (32 at revision 0, an anchor; the 8 of its prefix otherwise), out of the metadata JSON, and reads it back as the chain computes it", async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = chainedEventStore(new SqliteEventStore(file));
    const batch = [0, 1, 2].map((n) => ({ type: 'CheckRecorded', data: { status: 200, endpoint_id: n }, metadata: { actor: 'system:prober', request_id: `req-${n}` } }));
    await store.append('checks-1', batch, { expectedRevision: 'no_stream' });
    await store.append('checks-1', batch.slice(0, 1), { expectedRevision: 2 });
    const read = await store.readStream('checks-1');
    expect(read).toHaveLength(4);
    for (let i = 0; i < read.length; i++) expect(read[i].metadata.hash).toBe(chainOf(read.slice(0, i + 1).map(chainedFieldsOf)).slice(0, i === 0 ? 64 : 16));
    await store.close();
    const db = new Database(file, { readonly: true });
    const rows = db.prepare('SELECT typeof(hash) AS kind, hex(hash) AS hex, metadata FROM event_log ORDER BY position').all() as Array<{ kind: string; hex: string; metadata: string | null }>;
    db.close();
    expect(rows.map((row) => row.kind)).toEqual(['blob', 'blob', 'blob', 'blob']);
    expect(rows.map((row) => row.hex.toLowerCase())).toEqual(read.map((event) => event.metadata.hash));
    for (const row of rows) expect(row.metadata ?? '').not.toContain('hash');
  });

  it('reads the same events page by page as in one page, whatever form each was stored in', async () => {
    const file = join(temp.path, 'events.sqlite');
    const before = new SqliteEventStore(file);
    await before.append('old', [{ type: 'A', data: { n: 1 }, metadata: { actor: 'token:1' } }], { expectedRevision: 'no_stream' });
    await before.close();
    // One event as an older version stored it: its random id's 16 bytes.
    const raw = new Database(file);
    raw.exec(`UPDATE event_log SET event_id = X'0b7c6a528f0e4d1a9c3e6f1d2a3b4c5d'`);
    raw.close();
    const writer = chainedEventStore(new SqliteEventStore(file));
    for (let i = 0; i < 12; i++) {
      // Packed records, interned prober metadata, shared commits, hashes, events of one append.
      await writer.append(`checks-${i % 3}`, [{ type: 'CheckRecorded', data: { n: i, ok: i % 2 === 0 }, packed: true, metadata: { actor: 'system:prober' } }], { expectedRevision: 'any' });
      const metadata = { actor: 'token:7', request_id: `r${i}` };
      if (i % 4 === 0) await writer.append(`endpoint-${i}`, [{ type: 'B', data: { i }, metadata }, { type: 'C', data: { s: 'x\u0001"y' }, metadata }], { expectedRevision: 'no_stream' });
    }
    await writer.close();
    const reader = new SqliteEventStore(file);
    const all = await reader.readAll({ maxCount: 100 });
    expect(all.length).toBe(1 + 12 + 6);
    expect(all[0].id).toBe('0b7c6a52-8f0e-4d1a-9c3e-6f1d2a3b4c5d');
    expect(all.filter((e) => e.metadata.hash !== undefined).length).toBe(18);
    for (const size of [1, 4, 7]) {
      const pages: RecordedEvent[] = [];
      for (let after: number | null = null; ; ) {
        const page = await reader.readAll({ after, maxCount: size });
        if (page.length === 0) break;
        pages.push(...page);
        after = page[page.length - 1].position;
      }
      expect(pages).toEqual(all);
    }
    await reader.close();
  });
});
