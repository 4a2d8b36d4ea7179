/**
 * `verifyHistory` of the whole log walks it in one pass and reads again only the streams that do
 * not link as an append writes them (src/audit/application/verify.ts): its report must be the
 * one the stream-by-stream verification gives, for intact, prefix-hashed, altered, missing,
 * reordered and retention-pruned streams alike.
 */
import { join } from 'node:path';
import { verifyHistory, type VerificationReport } from '../../../src/audit/application/verify.js';
import { CheckRetention } from '../../../src/checks/application/retention.js';
import { checksStream } from '../../../src/checks/domain/check.js';
import { createEventStore } from '../../../src/platform/event-store/create-event-store.js';
import { IDS_RESERVED, sequenceStream } from '../../../src/platform/ids/id-allocator.js';
import type { EventStore } from '../../../src/platform/event-store/event-store.port.js';
import { makeTempDir, streamRow, tamperWithLog } from '../../support/event-store-fixtures.js';

const DAY = 86_400_000;

async function appendIncident(store: EventStore, stream: string, count: number): Promise<void> {
  for (let n = 0; n < count; n += 10) {
    const events = Array.from({ length: Math.min(10, count - n) }, (_, i) => ({ type: 'IncidentCommented', data: { team_id: 1, body: 'Looking', n: n + i } }));
    await store.append(stream, events, { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
  }
}

/** Every stream of the log, in order of first appearance. */
async function everyStream(store: EventStore): Promise<string[]> {
  const seen = new Set<string>();
  for (let after: number | null = null; ; ) {
    const page = await store.readAll({ after, maxCount: 1000 });
    for (const event of page) seen.add(event.streamId);
    if (page.length < 1000) return [...seen];
    after = page[page.length - 1].position;
  }
}

/** The stream-by-stream verification of every stream, added up as one report. */
async function streamByStream(store: EventStore): Promise<VerificationReport> {
  const total: VerificationReport = { intact: true, streams_checked: 0, events_checked: 0, broken: [], pruned: [] };
  for (const stream of await everyStream(store)) {
    const one = await verifyHistory(store, { stream });
    total.streams_checked += one.streams_checked;
    total.events_checked += one.events_checked;
    total.broken.push(...one.broken);
    total.pruned.push(...one.pruned);
  }
  total.intact = total.broken.length === 0;
  return total;
}

describe('verifyHistory of the whole log', () => {
  const dir = makeTempDir('audit-whole-log-');
  const open = () => createEventStore({ dataDir: dir.path, eventStoreUrl: null });
  afterAll(() => dir.remove());

  it('reports what the stream-by-stream verification reports', async () => {
    const now = Date.now();
    let store = open();
    // 70 events: prefixes, and a whole hash at the anchor (revision 64).
    for (const stream of ['incident-1', 'incident-2', 'incident-3', 'incident-4', 'incident-5']) await appendIncident(store, stream, 70);
    // Retention walks the endpoints the id sequence reserved.
    await store.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: 1 } }], { expectedRevision: 'no_stream' });
    for (const [n, age] of [...Array(70).fill(40), 0, 0].entries()) {
      const checkedAt = new Date(now - age * DAY - (100 - n) * 60_000).toISOString();
      const check = { check_id: n + 1, team_id: 1, project_id: 1, endpoint_id: 1, configuration_version: 1, source: 'scheduled', job_id: `job-${n}`, alert_suppressed: false, latency_anomaly: false, latency_threshold_ms: null, imported: false, checked_at: checkedAt, success: true, status_code: 200, latency_ms: 40 + n, failure_reason: null };
      await store.append(checksStream(1), [{ type: 'CheckRecorded', data: check, metadata: { actor: 'system:prober', occurred_at: checkedAt } }], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
    }
    expect(await new CheckRetention(store, { days: 30 }).apply(now)).toMatchObject({ removed: 64 });
    const intact = await verifyHistory(store, {});
    expect(intact).toEqual(await streamByStream(store));
    expect(intact).toMatchObject({ intact: true, streams_checked: 8, broken: [], pruned: [{ stream: checksStream(1), events: 64 }] });
    await store.close();

    const file = join(dir.path, 'events.sqlite');
    tamperWithLog(file, `UPDATE event_log SET data = replace(data, 'Looking', 'Lookinh') WHERE ${streamRow('incident-2')} AND revision = 66`);
    tamperWithLog(file, `DELETE FROM event_log WHERE ${streamRow('incident-3')} AND revision = 3`);
    tamperWithLog(
      file,
      `UPDATE event_log SET revision = -1 WHERE ${streamRow('incident-4')} AND revision = 10;
       UPDATE event_log SET revision = 10 WHERE ${streamRow('incident-4')} AND revision = 11;
       UPDATE event_log SET revision = 11 WHERE ${streamRow('incident-4')} AND revision = -1;`,
    );
    store = open();
    try {
      const broken = await verifyHistory(store, {});
      expect(broken).toEqual(await streamByStream(store));
      expect(broken.broken.map(({ stream, revision, problem }) => `${stream} ${revision} ${problem}`)).toEqual(['incident-2 66 altered', 'incident-3 3 missing', 'incident-4 10 reordered']);
    } finally {
      await store.close();
    }
  });
});
