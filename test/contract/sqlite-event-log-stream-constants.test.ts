/**
 * Stream constants (issue 31, session 18): an append names keys of its packed records whose
 * values seldom change within the stream (`NewEvent.streamConstants`: a check's team, project
 * and configuration version). The SQLite log keeps their values once per stream, fixed by the
 * stream's first such record, and a coded record leaves out the first of them (in its key order)
 * that equal the stream's. Every event must read back byte for byte as appended (the hash chain
 * is computed above the adapter), whatever differs from the stream's constants, in a file made
 * before them too; and a shortened record must never read as something else.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { EventStore, NewEvent, RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import { WrongExpectedRevisionError } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { chainedEventStore } from '../../src/platform/event-store/chained-event-store.js';
import { chainedFieldsOf, chainOf } from '../../src/platform/event-store/chain.js';
import { UpcasterRegistry, withUpcasting } from '../../src/platform/event-store/upcasting.js';
import { CHECK_RECORDED, registerCheckUpcasters, recordedCheck, type CheckRecordedData } from '../../src/checks/domain/check.js';
import { makeTempDir } from '../support/event-store-fixtures.js';

const CONSTANT_KEYS = ['team_id', 'project_id', 'configuration_version'];

/** A probed check's stored form, as CheckRecorded v4 keeps it (its keys in their order). */
const check = (latency: number, ids: { team?: number; project?: number; version?: number } = {}): Record<string, unknown> => ({
  success: true,
  status_code: 200,
  latency_ms: latency,
  check_id: 1000 + latency,
  team_id: ids.team ?? 7,
  project_id: ids.project ?? 300,
  configuration_version: ids.version ?? 2,
  job_due_lag_ms: 3,
});

const hinted = (data: Record<string, unknown>): NewEvent => ({ type: 'CheckRecorded', schemaVersion: 4, data, packed: true, streamConstants: CONSTANT_KEYS, metadata: { actor: 'system:prober' } });

function serialised(events: RecordedEvent[]): string[] {
  return events.map((event) => JSON.stringify(event));
}

async function readAllInPages(store: EventStore, size: number): Promise<RecordedEvent[]> {
  const pages: RecordedEvent[] = [];
  for (let after: number | null = null; ; ) {
    const page = await store.readAll({ after, maxCount: size });
    if (page.length === 0) return pages;
    pages.push(...page);
    after = page[page.length - 1].position;
  }
}

const storedRows = (file: string) => {
  const raw = new Database(file, { readonly: true });
  const rows = raw.prepare('SELECT s.name AS stream, length(CAST(e.data AS BLOB)) AS bytes FROM event_log e JOIN event_streams s ON s.id = e.stream ORDER BY e.position').all() as Array<{ stream: string; bytes: number }>;
  const constants = Object.fromEntries((raw.prepare('SELECT name, constants FROM event_streams').raw().all() as Array<[string, string | null]>).map(([name, text]) => [name, text === null ? null : JSON.parse(text)]));
  raw.close();
  return { bytes: rows.map((row) => row.bytes), constants };
};

describe('SQLite event log: stream constants', () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(() => temp.remove());

  it("keeps a stream's constants once and leaves out of each record those it repeats, reading every record back byte for byte: live, by stream, in pages, after reopening", async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const records = [
      check(10),
      check(11),
      check(12, { version: 3 }), // configuration changed: team and project still left out
      check(13, { project: 301, version: 3 }), // moved: only the team left out
      check(14, { team: 8 }), // another team: nothing left out
      { ...check(15), failure_reason: 'timeout: slow' }, // another key list, the same constants
      { success: true, note: 'no constant keys' },
      { ...check(16), nested: { a: 1 } }, // not codable: packed JSON, whole
      check(17),
    ];
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: null });
    const reading = (async () => {
      for await (const event of subscription) {
        seen.push(event);
        if (seen.length === records.length + 2) break;
      }
    })();
    // Two in one append (the first fixes the constants, the second uses them), then one an append, grouped.
    await store.append('checks-1', records.slice(0, 2).map(hinted), { expectedRevision: 'no_stream' });
    await Promise.all(records.slice(2).map((data, i) => store.append('checks-1', [hinted(data)], { expectedRevision: 1 + i, groupCommit: true })));
    // A stream whose appends name no constant keys keeps every value.
    await store.append('checks-2', [check(10), check(11)].map((data) => ({ ...hinted(data), streamConstants: undefined })), { expectedRevision: 'no_stream' });
    await reading;

    const events = await store.readStream('checks-1');
    expect(events.map((e) => JSON.stringify(e.data))).toEqual(records.map((data) => JSON.stringify(data)));
    expect(serialised(seen)).toEqual(serialised(await store.readAll({ after: null, maxCount: 100 })));
    const again = new SqliteEventStore(file);
    expect(serialised(await again.readStream('checks-1'))).toEqual(serialised(events));
    expect(serialised(await again.readStream('checks-1', { fromRevision: 3, maxCount: 2 }))).toEqual(serialised(events.slice(3, 5)));
    expect(serialised(await readAllInPages(again, 3))).toEqual(serialised(seen));

    const { bytes, constants } = storedRows(file);
    expect(constants).toEqual({ 'checks-1': { team_id: 7, project_id: 300, configuration_version: 2 }, 'checks-2': null });
    const [first, second, configChanged, moved, otherTeam] = bytes;
    const whole = bytes[records.length];
    // Team 7 (1 character), project 300 (2) and version 2 (1) left out: 4 bytes less than whole.
    expect([first, second, bytes[records.length - 1]]).toEqual([whole - 4, whole - 4, whole - 4]);
    expect([configChanged, moved, otherTeam]).toEqual([whole - 3, whole - 1, whole]);
    await Promise.all([store.close(), again.close()]);
  });

  it('leaves the constant keys out in the order the append named them, not the record\'s: a later one that differs keeps the earlier ones out', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    // The excerpt comes before the ids in a check's keys, but last among its constants.
    const named = (data: Record<string, unknown>): NewEvent => ({ ...hinted(data), streamConstants: [...CONSTANT_KEYS, 'response_excerpt'] });
    const answered = (latency: number, excerpt: string | undefined, ids: { project?: number } = {}) => {
      const { success, status_code, latency_ms, ...rest } = check(latency, ids);
      return excerpt === undefined ? { success, status_code, latency_ms, ...rest } : { success, status_code, latency_ms, response_excerpt: excerpt, ...rest };
    };
    const records = [
      answered(10, '<!doctype html>'),
      answered(11, '<!doctype html>'), // everything left out
      answered(12, '{"now":1}'), // another answer: the ids still left out
      answered(13, undefined), // no excerpt (its shape has none): the ids left out
      answered(14, '<!doctype html>', { project: 301 }), // moved: only the team left out
    ];
    for (let i = 0; i < records.length; i++) await store.append('checks-1', [named(records[i])], { expectedRevision: i === 0 ? 'no_stream' : i - 1, groupCommit: true });
    const expected = records.map((data) => JSON.stringify(data));
    expect((await store.readStream('checks-1')).map((e) => JSON.stringify(e.data))).toEqual(expected);
    const again = new SqliteEventStore(file);
    expect((await again.readAll({ maxCount: 10 })).map((e) => JSON.stringify(e.data))).toEqual(expected);
    const { bytes, constants } = storedRows(file);
    expect(Object.keys(constants['checks-1'])).toEqual([...CONSTANT_KEYS, 'response_excerpt']);
    // Against the first: the other excerpt written (a string of 8 or more units: 2 characters
    // of length, then its 9 units); the moved check's project (2 characters), version (1) and
    // excerpt (2 + 15) written.
    expect(bytes).toEqual([bytes[0], bytes[0], bytes[0] + 11, bytes[0], bytes[0] + 20]);
    await Promise.all([store.close(), again.close()]);
  });

  it('keeps the hash chain verifying, and CheckRecorded appended through the upcasting registry names its constants', async () => {
    const file = join(temp.path, 'events.sqlite');
    const registry = new UpcasterRegistry();
    registerCheckUpcasters(registry);
    const store = withUpcasting(chainedEventStore(new SqliteEventStore(file)), registry);
    const checks: CheckRecordedData[] = [0, 1, 2, 3].map((i) =>
      recordedCheck(
        { success: i !== 2, status_code: i === 2 ? 503 : 200, latency_ms: 20 + i, time_to_first_byte_ms: 20 + i, duration_ms: 20 + i, body_complete: true, failure_reason: i === 2 ? 'status: 503' : null, response_excerpt: null, checked_at: `2026-11-27T10:00:0${i}.000Z` },
        { check_id: 500 + i, team_id: 4, project_id: 90, endpoint_id: 12, configuration_version: i === 3 ? 2 : 1, source: 'scheduled', job_id: `12:${Date.parse(`2026-11-27T10:00:0${i}.000Z`) - 5}`, alert_suppressed: false, imported: false },
        { latency_anomaly: false, latency_threshold_ms: null },
      ),
    );
    for (let i = 0; i < checks.length; i++) {
      await store.append('checks-12', [{ type: CHECK_RECORDED, data: checks[i], metadata: { occurred_at: checks[i].checked_at, actor: 'system:prober' } }], { expectedRevision: i === 0 ? 'no_stream' : i - 1, groupCommit: true });
    }
    expect((await store.readStream('checks-12')).map((e) => e.data)).toEqual(checks);
    await store.close();
    expect(storedRows(file).constants).toEqual({ 'checks-12': { team_id: 4, project_id: 90, configuration_version: 1 } });
    const reader = new SqliteEventStore(file);
    for (const read of [await reader.readStream('checks-12'), await reader.readAll({ maxCount: 100 })]) {
      expect(read).toHaveLength(checks.length);
      for (let i = 0; i < read.length; i++) expect(read[i].metadata.hash).toBe(chainOf(read.slice(0, i + 1).map(chainedFieldsOf)).slice(0, i === 0 ? 64 : 16));
    }
    await reader.close();
  });

  it("fixes a stream's constants once across connections: the second connection's records use the first's", async () => {
    const file = join(temp.path, 'events.sqlite');
    const first = new SqliteEventStore(file);
    const second = new SqliteEventStore(file);
    await first.append('checks-1', [hinted(check(10))], { expectedRevision: 'no_stream' });
    await second.append('checks-1', [hinted(check(11, { project: 301 }))], { expectedRevision: 0 });
    await first.append('checks-1', [hinted(check(12))], { expectedRevision: 1 });
    const expected = [check(10), check(11, { project: 301 }), check(12)].map((data) => JSON.stringify(data));
    for (const store of [first, second]) expect((await store.readStream('checks-1')).map((e) => JSON.stringify(e.data))).toEqual(expected);
    const { bytes, constants } = storedRows(file);
    expect(constants['checks-1']).toEqual({ team_id: 7, project_id: 300, configuration_version: 2 });
    expect(bytes).toEqual([bytes[0], bytes[0] + 3, bytes[0]]);
    await Promise.all([first.close(), second.close()]);
  });

  it('keeps no constants of an append that failed part-way: its stream fixes them from the next append that commits', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    await store.append('checks-1', [{ type: 'Registered', data: { n: 0 } }], { expectedRevision: 'no_stream' });
    const other = new Database(file);
    other.exec(`CREATE TRIGGER refuse BEFORE INSERT ON event_log WHEN NEW.type = (SELECT id FROM event_types WHERE name = 'Refused') BEGIN SELECT RAISE(ABORT, 'refused'); END`);
    const grouped = (expectedRevision: number) => ({ expectedRevision, groupCommit: true });
    const outcomes = await Promise.allSettled([
      store.append('checks-1', [hinted(check(10)), { type: 'Refused', data: {} }], grouped(0)),
      store.append('checks-1', [hinted(check(11, { team: 9 }))], grouped(0)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
    expect((outcomes[0] as PromiseRejectedResult).reason).not.toBeInstanceOf(WrongExpectedRevisionError);
    other.exec('DROP TRIGGER refuse');
    other.close();
    await store.append('checks-1', [hinted(check(12, { team: 9 }))], { expectedRevision: 1 });
    expect((await store.readStream('checks-1')).map((e) => JSON.stringify(e.data))).toEqual([{ n: 0 }, check(11, { team: 9 }), check(12, { team: 9 })].map((data) => JSON.stringify(data)));
    expect(storedRows(file).constants['checks-1']).toEqual({ team_id: 9, project_id: 300, configuration_version: 2 });
    await store.close();
  });

  it('opens a file made before stream constants: its events read as they were, and its streams fix constants at their next append', async () => {
    const file = join(temp.path, 'events.sqlite');
    const before = new SqliteEventStore(file);
    await before.append('checks-1', [check(10), check(11)].map((data) => ({ ...hinted(data), streamConstants: undefined })), { expectedRevision: 'no_stream' });
    const written = await before.readStream('checks-1');
    await before.close();
    // As the version before made the table: no constants column.
    const raw = new Database(file);
    raw.exec('ALTER TABLE event_streams DROP COLUMN constants');
    raw.close();
    const store = new SqliteEventStore(file);
    expect(serialised(await store.readStream('checks-1'))).toEqual(serialised(written));
    await store.append('checks-1', [hinted(check(12)), hinted(check(13))], { expectedRevision: 1 });
    const events = await store.readStream('checks-1');
    expect(events.map((e) => JSON.stringify(e.data))).toEqual([10, 11, 12, 13].map((latency) => JSON.stringify(check(latency))));
    expect(serialised(await store.readAll({ maxCount: 10 }))).toEqual(serialised(events));
    const { bytes, constants } = storedRows(file);
    expect(constants['checks-1']).toEqual({ team_id: 7, project_id: 300, configuration_version: 2 });
    expect(bytes).toEqual([bytes[0], bytes[0], bytes[0] - 4, bytes[0] - 4]);
    await store.close();
  });

  it("refuses a shortened record whose stream's constants are gone, or that is short of more values than it has constant keys, instead of reading something else", async () => {
    const file = join(temp.path, 'events.sqlite');
    const writer = new SqliteEventStore(file);
    await writer.append('checks-1', [hinted(check(10))], { expectedRevision: 'no_stream' });
    await writer.close();
    for (const constants of [null, '{"team_id":7,"project_id":300}', '{"team_id":7}']) {
      const raw = new Database(file);
      raw.prepare('UPDATE event_streams SET constants = ?').run(constants);
      raw.close();
      const store = new SqliteEventStore(file);
      await expect(store.readStream('checks-1')).rejects.toThrow(/values for shape/);
      await expect(store.readAll({ maxCount: 10 })).rejects.toThrow(/values for shape/);
      await store.close();
    }
  });
});
