/**
 * Coded records (issue 31): the SQLite event log stores the `data` of a packed event whose
 * values are all scalars (a probed check's) as U+0003 and `[shape, value, ...]` in a 7-bit code
 * (src/platform/event-store/sqlite/record-codec.ts) instead of U+0001 and JSON text; for shapes
 * 1-20, the mark U+0003 + shape and the values alone. Every event
 * must read back byte for byte as appended (the hash chain is computed above the adapter over the
 * logical event), records stored as packed JSON before must read as they did, and a stored form
 * this version does not know must be refused, not read as something else.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { chainedEventStore } from '../../src/platform/event-store/chained-event-store.js';
import { chainedFieldsOf, chainOf } from '../../src/platform/event-store/chain.js';
import { makeTempDir } from '../support/event-store-fixtures.js';

/** Byte for byte, key order included: what a projection or an API answer would serialise. */
function serialised(events: RecordedEvent[]): string[] {
  return events.map((event) => JSON.stringify(event));
}

/** A probed check's stored data as the checks context appends it (v4: defaults, endpoint id and timings left out). */
const PROBED = { success: true, status_code: 200, latency_ms: 17, job_due_lag_ms: 79, response_excerpt: 'ok', region: 3, a: 1, b: 1, c: 1, d: 69 };

/** Every kind of scalar at the edges of the code's forms, each as JSON would give it back. */
const SCALARS: Array<Record<string, unknown>> = [
  PROBED,
  { success: false, status_code: 0, failure_reason: 'timeout: \u0001 "quoted" \\ \n', latency_ms: 1000, response_excerpt: null },
  { '10': 'integer-like keys first', zero: 0, minus_zero: -0, one_char: 79, two_chars: 80, two_top: 2365, three: 2366, digit: 16128, digits: 16129, u32: 4294967295, ms: 1795699533568, safe: Number.MAX_SAFE_INTEGER, unsafe: 2 ** 53 + 2 },
  { negative: -1, one_digit: -127, two_digits: -128, i32: -2147483648, below: -2147483649, min: Number.MIN_SAFE_INTEGER, far: -1e300 },
  { half: 4.5, tenth: 0.1, big: 1e21, tiny: 5e-324, max: Number.MAX_VALUE, third: -1 / 3 },
  { empty: '', seven: 'sevench', eight: 'eight ch', accent: 'é', emoji: '😀 and 🇫🇷', controls: '\u0001\u0002\u0003\u007f\t', long: 'x'.repeat(79), longer: 'y'.repeat(300), longest: 'z'.repeat(70_000) },
  { only_null: null, f: false },
];

/** Values the code would not give back as JSON does: these records stay packed JSON text. */
const NOT_SCALAR: Array<Record<string, unknown>> = [
  { not_a_number: Number.NaN, status_code: 200 },
  { infinite: Number.POSITIVE_INFINITY },
  { lone: 'a\ud800b' },
  { low: '\udc00' },
  { nul: 'a\u0000b' },
  { nested: { a: [1, null, { '2': 'x' }] } },
  { list: [1, 'two'] },
  { when: new Date('2026-01-01T00:00:00.000Z') },
];

describe('SQLite event log: coded records', () => {
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
  });
  afterEach(() => temp.remove());

  it("stores a probed check's record in 14 bytes (35 as packed JSON) and reads every record back byte for byte: live, by stream, in pages and after reopening", async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    const all = [...SCALARS, ...NOT_SCALAR];
    const seen: RecordedEvent[] = [];
    const subscription = store.subscribeToAll({ after: null });
    const reading = (async () => {
      for await (const event of subscription) {
        seen.push(event);
        if (seen.length === all.length) break;
      }
    })();
    // One append of several events, then one event per append (grouped, as probed checks are).
    await store.append('checks-1', all.slice(0, 3).map((data) => ({ type: 'CheckRecorded', schemaVersion: 4, data, packed: true, metadata: { actor: 'system:prober' } })), { expectedRevision: 'no_stream' });
    await Promise.all(
      all.slice(3).map((data, i) =>
        store.append('checks-1', [{ type: 'CheckRecorded', schemaVersion: 4, data, packed: true, metadata: { actor: 'system:prober' } }], { expectedRevision: 2 + i, groupCommit: true }),
      ),
    );
    await reading;
    const expected = all.map((data) => JSON.stringify(data));
    const events = await store.readStream('checks-1');
    expect(events.map((e) => JSON.stringify(e.data))).toEqual(expected);
    // Each value is what JSON.parse gives (NaN and a Date as JSON turns them, -0 as 0).
    expect(events.map((e) => e.data)).toEqual(expected.map((text) => JSON.parse(text)));
    expect(serialised(seen)).toEqual(serialised(events));
    const again = new SqliteEventStore(file);
    expect(serialised(await again.readStream('checks-1'))).toEqual(serialised(events));
    expect(serialised(await again.readAll({ maxCount: 100 }))).toEqual(serialised(events));
    const pages: RecordedEvent[] = [];
    for (let after: number | null = null; ; ) {
      const page = await again.readAll({ after, maxCount: 3 });
      if (page.length === 0) break;
      pages.push(...page);
      after = page[page.length - 1].position;
    }
    expect(serialised(pages)).toEqual(serialised(events));

    const raw = new Database(file, { readonly: true });
    const stored = raw.prepare('SELECT data, length(CAST(data AS BLOB)) AS bytes FROM event_log ORDER BY position').all() as Array<{ data: string; bytes: number }>;
    // Shapes 1-20 go in the mark (U+0003 + shape), the record's values after it.
    const shapes = raw.prepare('SELECT id FROM event_shapes ORDER BY id').pluck().all() as number[];
    raw.close();
    expect(shapes.length).toBeLessThanOrEqual(20);
    expect(stored.map((row) => row.data.slice(0, 1))).toEqual([...SCALARS.map((_, i) => String.fromCharCode(3 + shapes[i])), ...NOT_SCALAR.map(() => '\u0001')]);
    // The mark holding shape 1, then true, 200, 17, 79, "ok", 3, 1, 1, 1, 69: against `\u0001[1,true,200,17,79,"ok",3,1,1,1,69]`.
    expect(stored[0].bytes).toBe(14);
    await Promise.all([store.close(), again.close()]);
  });

  it('keeps the hash chain verifying over coded records, read by stream and from the whole log', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = chainedEventStore(new SqliteEventStore(file));
    for (let i = 0; i < SCALARS.length; i++) {
      await store.append('checks-2', [{ type: 'CheckRecorded', schemaVersion: 4, data: SCALARS[i], packed: true, metadata: { actor: 'system:prober' } }], { expectedRevision: i - 1 === -1 ? 'no_stream' : i - 1 });
    }
    await store.close();
    const reader = new SqliteEventStore(file);
    for (const read of [await reader.readStream('checks-2'), await reader.readAll({ maxCount: 100 })]) {
      expect(read).toHaveLength(SCALARS.length);
      // The whole hash at revision 0 (an anchor), its 16-hex prefix after (docs/audit.md).
      for (let i = 0; i < read.length; i++) expect(read[i].metadata.hash).toBe(chainOf(read.slice(0, i + 1).map(chainedFieldsOf)).slice(0, i === 0 ? 64 : 16));
    }
    await reader.close();
  });

  it('codes the shape as a value after U+0003 from shape 21 on, and reads records of either form', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    // 21 key lists, one record of each: the 21st shape no longer fits in a mark.
    const records = Array.from({ length: 21 }, (_, i) => ({ [`key${i}`]: i, ok: true }));
    await store.append('checks-1', records.map((data) => ({ type: 'CheckRecorded', data, packed: true })), { expectedRevision: 'no_stream' });
    const raw = new Database(file, { readonly: true });
    const stored = raw.prepare('SELECT data FROM event_log ORDER BY position').pluck().all() as string[];
    raw.close();
    expect(stored.slice(0, 20).map((data) => data.charCodeAt(0))).toEqual(records.slice(0, 20).map((_, i) => 4 + i));
    expect(stored[20].slice(0, 1)).toBe('\u0003');
    const events = await store.readStream('checks-1');
    expect(events.map((e) => JSON.stringify(e.data))).toEqual(records.map((data) => JSON.stringify(data)));
    await store.close();
    // A shape 1-20 record stored as U+0003 and the shape as a value (as the session before wrote it) reads the same.
    const rewrite = new Database(file);
    expect(rewrite.prepare('UPDATE event_log SET data = char(3) || char(48 + unicode(data) - 3) || substr(data, 2) WHERE unicode(data) BETWEEN 4 AND 23').run().changes).toBe(20);
    rewrite.close();
    const again = new SqliteEventStore(file);
    expect(serialised(await again.readStream('checks-1'))).toEqual(serialised(events));
    expect(serialised(await again.readAll({ maxCount: 100 }))).toEqual(serialised(events));
    await again.close();
  });

  it('reads records stored as packed JSON before coded records, and appends coded ones beside them', async () => {
    const file = join(temp.path, 'events.sqlite');
    const before = new SqliteEventStore(file);
    await before.append('checks-1', [{ type: 'CheckRecorded', data: PROBED, packed: true }], { expectedRevision: 'no_stream' });
    await before.close();
    // As the version before stored it: U+0001 and the JSON array of the shape and the values.
    const raw = new Database(file);
    const shape = raw.prepare('SELECT id FROM event_shapes WHERE keys = ?').pluck().get(JSON.stringify(Object.keys(PROBED))) as number;
    raw.prepare('UPDATE event_log SET data = ?').run(`\u0001${JSON.stringify([shape, ...Object.values(PROBED)])}`);
    raw.close();
    const store = new SqliteEventStore(file);
    await store.append('checks-1', [{ type: 'CheckRecorded', data: { ...PROBED, latency_ms: 18 }, packed: true }], { expectedRevision: 0 });
    const events = await store.readStream('checks-1');
    expect(events.map((e) => JSON.stringify(e.data))).toEqual([JSON.stringify(PROBED), JSON.stringify({ ...PROBED, latency_ms: 18 })]);
    expect(serialised(await store.readAll({ maxCount: 10 }))).toEqual(serialised(events));
    const check = new Database(file, { readonly: true });
    expect((check.prepare('SELECT data FROM event_log ORDER BY position').pluck().all() as string[]).map((data) => data.slice(0, 1))).toEqual(['\u0001', String.fromCharCode(3 + shape)]);
    check.close();
    await store.close();
  });

  it('refuses a stored form it does not know, or a coded record it cannot read, instead of reading something else', async () => {
    const file = join(temp.path, 'events.sqlite');
    const writer = new SqliteEventStore(file);
    await writer.append('checks-1', [{ type: 'CheckRecorded', data: { a: 1, b: 'x' }, packed: true }], { expectedRevision: 'no_stream' });
    await writer.close();
    const check = new Database(file, { readonly: true });
    const coded = check.prepare('SELECT data FROM event_log').pluck().get() as string;
    check.close();
    const cases: Array<[stored: string | Buffer, error: RegExp]> = [
      // Forms a later version might write: another mark, or a blob.
      ['\u0018[1,2]', /stored form this version does not know/],
      ['\u001f', /stored form this version does not know/],
      // A shape in the mark that the log does not hold, or a record not of its shape.
      [`\u0017${coded.slice(1)}`, /does not hold/],
      [`${coded}\u0030`, /values for shape/],
      ['', /stored form this version does not know/],
      [Buffer.from(coded.slice(1)), /stored form this version does not know/],
      // Coded records cut short, with a character no value starts with, or a value too many.
      [coded.slice(0, -1), /cannot read|values for shape/],
      [`${coded.slice(0, 2)}\u0001`, /cannot read/],
      [`${coded}\u0000`, /cannot read/],
      [`${coded}\u0030`, /values for shape/],
    ];
    for (const [stored, error] of cases) {
      const raw = new Database(file);
      raw.prepare('UPDATE event_log SET data = ?').run(stored);
      raw.close();
      const store = new SqliteEventStore(file);
      await expect(store.readStream('checks-1')).rejects.toThrow(error);
      await expect(store.readAll({ maxCount: 10 })).rejects.toThrow(error);
      await store.close();
    }
  });

  it('gives the first packed kind of a file the id 0, which the row keeps in its header alone, and reads every kind back by name', async () => {
    const file = join(temp.path, 'events.sqlite');
    const store = new SqliteEventStore(file);
    // A kind that is not packed first (it takes 1), then the checks (0), then another packed kind and another version of the checks (ids from 2 on).
    await store.append('ids', [{ type: 'IdsReserved', data: { first: 1 } }], { expectedRevision: 'no_stream' });
    await store.append('checks-1', [PROBED, PROBED].map((data) => ({ type: 'CheckRecorded', schemaVersion: 4, data, packed: true, metadata: { actor: 'system:prober' } })), { expectedRevision: 'no_stream' });
    await store.append('checks-1', [{ type: 'ChecksSummarized', data: { through: 1 }, packed: true }, { type: 'CheckRecorded', schemaVersion: 5, data: PROBED, packed: true }], { expectedRevision: 1 });
    const kinds = (events: RecordedEvent[]) => events.map((e) => `${e.type} ${e.schemaVersion}`);
    const expected = ['IdsReserved 1', 'CheckRecorded 4', 'CheckRecorded 4', 'ChecksSummarized 1', 'CheckRecorded 5'];
    expect(kinds(await store.readAll({ maxCount: 10 }))).toEqual(expected);
    await store.close();
    const raw = new Database(file, { readonly: true });
    const ids = raw.prepare('SELECT name, schema_version AS version, id FROM event_types ORDER BY id').all();
    const typeBytes = raw.prepare("SELECT type, typeof(type) AS kind FROM event_log ORDER BY position").all() as Array<{ type: number; kind: string }>;
    raw.close();
    expect(ids).toEqual([
      { name: 'CheckRecorded', version: 4, id: 0 },
      { name: 'IdsReserved', version: 1, id: 1 },
      { name: 'ChecksSummarized', version: 1, id: 2 },
      { name: 'CheckRecorded', version: 5, id: 3 },
    ]);
    expect(typeBytes.map((row) => [row.type, row.kind])).toEqual([[1, 'integer'], [0, 'integer'], [0, 'integer'], [2, 'integer'], [3, 'integer']]);
    // Reopened: the kinds are read from the file, by name, and a new append of the checks takes 0 again.
    const again = new SqliteEventStore(file);
    await again.append('checks-2', [{ type: 'CheckRecorded', schemaVersion: 4, data: PROBED, packed: true }], { expectedRevision: 'no_stream' });
    const events = await again.readAll({ maxCount: 10 });
    expect(kinds(events)).toEqual([...expected, 'CheckRecorded 4']);
    await again.close();
  });
});
