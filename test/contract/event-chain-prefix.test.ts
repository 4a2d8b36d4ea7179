/**
 * The chain hash's stored form (docs/decisions.md "The event row's chain hash", docs/audit.md):
 * each event stores the 16-hex prefix of its hash, an anchor (revision 0, every 64th revision, a
 * stored prev_hash) the whole hash. Over the SQLite log as every process opens it: the column
 * holds 8 or 32 bytes, an edit is found at its revision and past it, a new process reads back to
 * the newest anchor, and retention cuts only just before an anchor.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import { chainedEventStore } from '../../src/platform/event-store/chained-event-store.js';
import { DelegatingEventStore } from '../../src/platform/event-store/delegating-event-store.js';
import type { EventStore, ReadStreamOptions, RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { chainedFieldsOf, chainHash, chainOf } from '../../src/platform/event-store/chain.js';
import { verifyHistory } from '../../src/audit/application/verify.js';
import { exportHistory } from '../../src/audit/application/export.js';
import { verifyExport } from '../../src/audit/domain/verify-export.js';
import { CheckRetention } from '../../src/checks/application/retention.js';
import { checkSummariesStream } from '../../src/checks/domain/check-summary.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { IDS_RESERVED, sequenceStream } from '../../src/platform/ids/id-allocator.js';
import { makeTempDir, streamRow, tamperWithLog } from '../support/event-store-fixtures.js';

const DAY = 86_400_000;

async function appendNoted(store: EventStore, stream: string, from: number, count: number): Promise<void> {
  for (let n = from; n < from + count; n++) {
    await store.append(stream, [{ type: 'Noted', data: { team_id: 1, n } }], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
  }
}

/** Counts the events the chained store reads from the adapter. */
class CountingReads extends DelegatingEventStore {
  eventsRead = 0;

  override async readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    const events = await this.inner.readStream(streamId, options);
    this.eventsRead += events.length;
    return events;
  }
}

describe('the chain hash stored as a prefix, whole at anchors', () => {
  const dir = makeTempDir('chain-prefix-');
  afterAll(() => dir.remove());

  it('keeps a 16-digit prefix in 8 bytes of the SQLite hash column and a whole hash in 32, neither in the metadata', async () => {
    const file = join(dir.path, 'bytes.sqlite');
    const store = new SqliteEventStore(file);
    const whole = 'ab'.repeat(32);
    await store.append(
      's',
      [
        { type: 'Noted', data: { n: 0 }, metadata: { hash: whole }, chainHashed: true },
        { type: 'Noted', data: { n: 1 }, metadata: { hash: whole.slice(0, 16) }, chainHashed: true },
      ],
      { expectedRevision: 'no_stream' },
    );
    expect((await store.readStream('s')).map((e) => e.metadata.hash)).toEqual([whole, whole.slice(0, 16)]);
    await store.close();
    const db = new Database(file, { readonly: true });
    try {
      const rows = db.prepare('SELECT length(hash) AS bytes, metadata FROM event_log ORDER BY revision').all() as Array<{ bytes: number; metadata: string | null }>;
      expect(rows.map((r) => r.bytes)).toEqual([32, 8]);
      expect(rows.some((r) => r.metadata?.includes(whole.slice(0, 16)))).toBe(false);
    } finally {
      db.close();
    }
    const reopened = new SqliteEventStore(file);
    expect((await reopened.readStream('s')).map((e) => e.metadata.hash)).toEqual([whole, whole.slice(0, 16)]);
    await reopened.close();
  });

  it('finds an edit at its revision, and one that rewrites the stored prefixes after it at the next anchor', async () => {
    const file = join(dir.path, 'edit.sqlite');
    const store = chainedEventStore(new SqliteEventStore(file));
    await appendNoted(store, 's', 0, 150);
    expect(await verifyHistory(store)).toMatchObject({ intact: true, events_checked: 150 });
    await store.close();

    // The content of revision 70 changed: its stored prefix no longer matches.
    tamperWithLog(file, `UPDATE event_log SET data = replace(data, '"n":70', '"n":71') WHERE ${streamRow('s')} AND revision = 70`);
    const plain = new SqliteEventStore(file);
    expect((await verifyHistory(plain)).broken).toEqual([expect.objectContaining({ stream: 's', revision: 70, problem: 'altered' })]);

    // The editor also writes the prefix the new content gives: every later event links to the
    // new full hash, so revision 71 no longer matches.
    const events = await plain.readStream('s');
    const edited = chainOf(events.slice(0, 71).map(chainedFieldsOf));
    const setHash = (revision: number, hash: string) => tamperWithLog(file, `UPDATE event_log SET hash = unhex('${hash}') WHERE ${streamRow('s')} AND revision = ${revision}`);
    await plain.close();
    setHash(70, edited.slice(0, 16));
    let reopened = new SqliteEventStore(file);
    expect((await verifyHistory(reopened)).broken).toEqual([expect.objectContaining({ revision: 71, problem: 'altered' })]);
    await reopened.close();

    // Every later prefix rewritten up to the anchor at 128: the anchor's whole hash gives it away.
    let full = edited;
    for (let r = 71; r < 128; r++) {
      full = chainHash(full, chainedFieldsOf(events[r]));
      setHash(r, full.slice(0, 16));
    }
    reopened = new SqliteEventStore(file);
    expect((await verifyHistory(reopened)).broken).toEqual([expect.objectContaining({ revision: 128, problem: 'altered' })]);
    await reopened.close();
  });

  it('exports full hashes, but an event whose content no longer gives its stored prefix with that prefix, which verify-export refuses at its line', async () => {
    const file = join(dir.path, 'export.sqlite');
    const store = chainedEventStore(new SqliteEventStore(file));
    await appendNoted(store, 's', 0, 6);
    await store.close();
    const exported = async () => {
      const plain = new SqliteEventStore(file);
      let text = '';
      for await (const chunk of exportHistory(plain, { stream: 's' })) text += chunk;
      await plain.close();
      const lines = text.trimEnd().split('\n');
      return { lines, verified: await verifyExport(lines, { text: lines[lines.length - 1], number: lines.length }, null) };
    };
    const intact = await exported();
    expect(intact.lines.slice(0, 6).map((l) => JSON.parse(l).hash)).toEqual(Array(6).fill(expect.stringMatching(/^[0-9a-f]{64}$/)));
    expect(intact.verified).toMatchObject({ ok: true });

    tamperWithLog(file, `UPDATE event_log SET data = replace(data, '"n":3', '"n":9') WHERE ${streamRow('s')} AND revision = 3`);
    const edited = await exported();
    expect(JSON.parse(edited.lines[3])).toMatchObject({ revision: 3, hash: expect.stringMatching(/^[0-9a-f]{16}$/) });
    expect(edited.verified).toMatchObject({ ok: false, line: 4 });
  });

  it('reads back to the newest anchor in a new process, and links its appends to the full hash', async () => {
    const file = join(dir.path, 'restart.sqlite');
    const first = chainedEventStore(new SqliteEventStore(file));
    await appendNoted(first, 's', 0, 100);
    await first.close();

    const counting = new CountingReads(new SqliteEventStore(file));
    const second = chainedEventStore(counting);
    await appendNoted(second, 's', 100, 5);
    // The last event, then revisions 64 (the anchor) to 99.
    expect(counting.eventsRead).toBeLessThanOrEqual(1 + 36);
    const events = await counting.readStream('s');
    expect(events.map((e) => e.metadata.prev_hash)).toEqual(Array(105).fill(undefined));
    const full = chainOf(events.map(chainedFieldsOf));
    expect(events[104].metadata.hash).toBe(full.slice(0, 16));
    expect(await verifyHistory(second)).toMatchObject({ intact: true, events_checked: 105 });
    await second.close();
  });

  it('still appends to a stream whose anchor was deleted behind its back, and verification names the deleted revision', async () => {
    const file = join(dir.path, 'no-anchor.sqlite');
    const first = chainedEventStore(new SqliteEventStore(file));
    await appendNoted(first, 's', 0, 100);
    await first.close();
    tamperWithLog(file, `DELETE FROM event_log WHERE ${streamRow('s')} AND revision = 64`);

    const second = chainedEventStore(new SqliteEventStore(file));
    await appendNoted(second, 's', 100, 2);
    // No full hash to link to: the chain restarts from '' with prev_hash stored (an anchor).
    const [restart] = await second.readStream('s', { fromRevision: 100, maxCount: 1 });
    expect(restart.metadata).toMatchObject({ prev_hash: '', hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await verifyHistory(second)).broken).toEqual([expect.objectContaining({ stream: 's', revision: 64, problem: 'missing' })]);
    await second.close();
  });

  describe('retention', () => {
    const now = Date.now();
    const check = (n: number, age: number) => {
      const checkedAt = new Date(now - age * DAY - (200 - n) * 60_000).toISOString();
      return {
        type: 'CheckRecorded',
        data: { check_id: n + 1, team_id: 1, project_id: 1, endpoint_id: 1, configuration_version: 1, source: 'scheduled', job_id: `job-${n}`, alert_suppressed: false, latency_anomaly: false, latency_threshold_ms: null, imported: false, checked_at: checkedAt, success: true, status_code: 200, latency_ms: 40 + n, failure_reason: null },
        metadata: { actor: 'system:prober', occurred_at: checkedAt },
      };
    };
    async function withChecks(name: string, ages: number[]): Promise<EventStore> {
      const store = createEventStore({ dataDir: join(dir.path, name), eventStoreUrl: null });
      await store.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: 1 } }], { expectedRevision: 'no_stream' });
      for (const [n, age] of ages.entries()) await store.append(checksStream(1), [check(n, age)], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
      return store;
    }

    it('removes old checks only through the revision just before an anchor, and links the anchor to the summary', async () => {
      // 100 checks from 40 days ago, 5 from today: revisions 0-63 go, 64-99 wait for the anchor at 128.
      const store = await withChecks('cut', [...Array(100).fill(40), ...Array(5).fill(0)]);
      const retention = new CheckRetention(store, { days: 30 });
      expect((await retention.status(now)).endpoints).toEqual([expect.objectContaining({ endpoint_id: 1, removable: 64 })]);
      expect(await retention.apply(now)).toMatchObject({ summaries: 1, removed: 64 });
      const remaining = await store.readStream(checksStream(1));
      expect(remaining[0]).toMatchObject({ revision: 64, metadata: expect.objectContaining({ hash: expect.stringMatching(/^[0-9a-f]{64}$/) }) });
      expect(remaining).toHaveLength(41);
      const [summary] = await store.readStream(checkSummariesStream(1));
      expect(summary.data).toMatchObject({ from_revision: 0, through_revision: 63 });
      // The full hash of revision 63, which stored only its prefix: revision 64 links to it.
      const throughHash = (summary.data as { through_hash: string }).through_hash;
      expect(chainHash(throughHash, chainedFieldsOf(remaining[0]))).toBe(remaining[0].metadata.hash);
      expect(await verifyHistory(store)).toMatchObject({ intact: true });
      // Nothing more goes until the anchor at 128 exists.
      expect(await retention.apply(now)).toMatchObject({ summaries: 0, removed: 0 });
      await store.close();
    });

    it('keeps a stream whose old checks end before its first anchor after revision 0', async () => {
      const store = await withChecks('short', [...Array(10).fill(40), 0]);
      const retention = new CheckRetention(store, { days: 30 });
      expect(await retention.apply(now)).toMatchObject({ summaries: 0, removed: 0 });
      expect(await store.readStream(checksStream(1))).toHaveLength(11);
      await store.close();
    });
  });
});
