/**
 * `npm run history -- verify` (docs/audit.md) run as a real child process against a data dir whose
 * events.sqlite was edited behind the service's back: a changed byte, a deleted row, two rows
 * whose revisions were swapped. Each is named with its stream and first bad revision. And a data
 * dir written before chaining: its streams anchor the chain on their earlier events, which stay
 * covered.
 */
import { join } from 'node:path';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { CheckRetention } from '../../src/checks/application/retention.js';
import { checkSummariesStream } from '../../src/checks/domain/check-summary.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { IDS_RESERVED, sequenceStream } from '../../src/platform/ids/id-allocator.js';
import { runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir, streamRow, tamperWithLog, transpileForChildProcess } from '../support/event-store-fixtures.js';

const CLI = 'src/cli/history.ts';

async function appendIncident(store: EventStore, stream: string, teamId: number, count: number, from = 0): Promise<void> {
  for (let n = from; n < from + count; n++) {
    await store.append(stream, [{ type: n === 0 ? 'IncidentCreated' : 'IncidentCommented', data: { team_id: teamId, title: 'Checkout down', n }, metadata: { actor: 'token:7', request_id: `req-${stream}-${n}` } }], {
      expectedRevision: n === 0 ? 'no_stream' : n - 1,
    });
  }
}

/** Runs SQL on the data dir's stored log, the service stopped. */
const tamper = (dataDir: string, sql: string) => tamperWithLog(join(dataDir, 'events.sqlite'), sql);

describe('npm run history -- verify', () => {
  const compiled = makeTempDir('audit-cli-js-');
  let script: string;
  const verify = (dataDir: string, args: string[] = []): Promise<ChildResult> =>
    runNode(script, ['verify', ...args], { env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent' } });

  beforeAll(async () => {
    await transpileForChildProcess([CLI], compiled.path);
    script = join(compiled.path, CLI.replace(/\.ts$/, '.js'));
  }, 60_000);
  afterAll(() => compiled.remove());

  describe('a log edited in events.sqlite', () => {
    const dir = makeTempDir('audit-verify-');
    beforeAll(async () => {
      const store = createEventStore({ dataDir: dir.path, eventStoreUrl: null });
      for (const stream of ['incident-1', 'incident-2', 'incident-3']) await appendIncident(store, stream, 1, 5);
      await appendIncident(store, 'incident-9', 2, 3);
      // An append with expected revision `any` links to the real head too.
      await store.append('incident-9', [{ type: 'IncidentCommented', data: { team_id: 2, n: 3 } }], { expectedRevision: 'any' });
      await store.close();
    });
    afterAll(() => dir.remove());

    it('is intact as written, and names each stream and revision once edited', async () => {
      const intact = await verify(dir.path);
      expect(intact).toMatchObject({ code: 0, stdout: 'Intact: 4 streams, 19 events verified, 0 broken.\n' });
      // Progress on stderr, its first line at the start: the whole log in log positions, a scope in streams.
      expect(intact.stderr).toMatch(/^verify: 0 events, position 0 of \d+$/m);
      expect((await verify(dir.path, ['--stream', 'incident-1'])).stderr.split('\n')).toContain('verify: 0 events, stream 0 of 1');

      tamper(dir.path, `UPDATE event_log SET data = replace(data, 'Checkout', 'Checkouu') WHERE ${streamRow('incident-1')} AND revision = 2`);
      tamper(dir.path, `DELETE FROM event_log WHERE ${streamRow('incident-2')} AND revision = 2`);
      tamper(
        dir.path,
        `UPDATE event_log SET revision = -1 WHERE ${streamRow('incident-3')} AND revision = 2;
         UPDATE event_log SET revision = 2 WHERE ${streamRow('incident-3')} AND revision = 3;
         UPDATE event_log SET revision = 3 WHERE ${streamRow('incident-3')} AND revision = -1;`,
      );

      const broken = await verify(dir.path);
      expect(broken.code).toBe(1);
      const lines = broken.stdout.trim().split('\n');
      expect(lines.map((line) => line.replace(/ \(expected .*\)$/, ''))).toEqual([
        'BROKEN incident-1 at revision 2: altered',
        'BROKEN incident-2 at revision 2: missing',
        'BROKEN incident-3 at revision 2: reordered',
        'Broken: 4 streams, 10 events verified, 3 broken.',
      ]);
      // The altered event: the hash its content gives now, and the 16-digit prefix stored.
      expect(lines[0]).toMatch(/\(expected [0-9a-f]{64}, found [0-9a-f]{16}\)$/);
      expect(lines[1]).toContain('(expected revision 2, found revision 3)');

      // Scoped: team 2 owns only the untouched stream.
      expect(await verify(dir.path, ['--team', '2'])).toMatchObject({ code: 0, stdout: 'Intact: 1 streams, 4 events verified, 0 broken.\n' });
      expect(await verify(dir.path, ['--stream', 'incident-2'])).toMatchObject({ code: 1 });
      expect(await verify(dir.path, ['--team', 'x'])).toMatchObject({ code: 2 });
      // A mistyped id verifies nothing: said, and not a success.
      expect(await verify(dir.path, ['--team', '7'])).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('Team 7 has no events in this log: nothing verified') });
      expect(await verify(dir.path, ['--stream', 'incident-77'])).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('Stream incident-77 has no events in this log: nothing verified') });
    }, 60_000);
  });

  describe('a data dir written before chaining', () => {
    const dir = makeTempDir('audit-upgrade-');
    beforeAll(async () => {
      // The previous version: no chain, and no hash column in the compact layout.
      const old = new SqliteEventStore(join(dir.path, 'events.sqlite'));
      await appendIncident(old, 'incident-1', 1, 3);
      await appendIncident(old, 'incident-2', 1, 2);
      await old.close();
      tamper(dir.path, 'ALTER TABLE event_log DROP COLUMN hash');

      const store = createEventStore({ dataDir: dir.path, eventStoreUrl: null });
      await appendIncident(store, 'incident-1', 1, 2, 3);
      await appendIncident(store, 'incident-3', 1, 2);
      const [anchored] = await store.readStream('incident-1', { fromRevision: 3, maxCount: 1 });
      expect(anchored.metadata).toEqual(expect.objectContaining({ prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/), hash: expect.stringMatching(/^[0-9a-f]{64}$/) }));
      const [next] = await store.readStream('incident-1', { fromRevision: 4, maxCount: 1 });
      expect(next.metadata.prev_hash).toBeUndefined();
      await store.close();
    });
    afterAll(() => dir.remove());

    it('anchors the chain on the earlier events, so an edit of one of them is caught', async () => {
      expect(await verify(dir.path)).toMatchObject({ code: 0, stdout: 'Intact: 3 streams, 9 events verified, 0 broken.\n' });

      tamper(dir.path, `UPDATE event_log SET data = replace(data, '"n":1', '"n":7') WHERE ${streamRow('incident-1')} AND revision = 1`);
      const broken = await verify(dir.path);
      expect(broken.code).toBe(1);
      expect(broken.stdout).toContain('BROKEN incident-1 at revision 0: altered');
    }, 60_000);
  });

  describe('a checks stream pruned by retention', () => {
    const dir = makeTempDir('audit-prune-');
    const DAY = 86_400_000;
    const now = Date.now();
    beforeAll(async () => {
      const store = createEventStore({ dataDir: dir.path, eventStoreUrl: null });
      await store.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: 1 } }], { expectedRevision: 'no_stream' });
      // 70 checks from 40 days ago, four from today: retention cuts just before the anchor at 64.
      const ages = [...Array(70).fill(40), 0, 0, 0, 0];
      for (const [n, age] of ages.entries()) {
        const checkedAt = new Date(now - age * DAY - (100 - n) * 60_000).toISOString();
        const check = { check_id: n + 1, team_id: 1, project_id: 1, endpoint_id: 1, configuration_version: 1, source: 'scheduled', job_id: `job-${n}`, alert_suppressed: false, latency_anomaly: false, latency_threshold_ms: null, imported: false, checked_at: checkedAt, success: true, status_code: 200, latency_ms: 40 + n, failure_reason: null };
        await store.append(checksStream(1), [{ type: 'CheckRecorded', data: check, metadata: { actor: 'system:prober', occurred_at: checkedAt } }], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
      }
      const result = await new CheckRetention(store, { days: 30 }).apply(now);
      expect(result).toMatchObject({ summaries: 1, removed: 64 });
      const [summary] = await store.readStream(checkSummariesStream(1));
      expect((summary.data as { through_hash?: string }).through_hash).toMatch(/^[0-9a-f]{64}$/);
      expect((await store.readStream(checksStream(1))).map((e) => e.revision)).toEqual(Array.from({ length: 10 }, (_, i) => 64 + i));
      await store.close();
    });
    afterAll(() => dir.remove());

    it('verifies across the prune, links the first remaining check to the summary, and still sees a deletion', async () => {
      // Intact, and says what retention cut: an auditor sees the 64 removed checks were accounted for.
      expect(await verify(dir.path)).toMatchObject({
        code: 0,
        stdout: 'Pruned by retention: checks-1 revisions 0-63 (64 events), covered by 1 summary.\nIntact: 3 streams, 12 events verified, 0 broken.\n',
      });

      const cut = makeTempDir('audit-prune-cut-');
      try {
        // A remaining check deleted: the prune does not hide it.
        tamper(dir.path, `VACUUM INTO '${join(cut.path, 'events.sqlite')}'`);
        tamper(cut.path, `DELETE FROM event_log WHERE ${streamRow('checks-1')} AND revision = 65`);
        const missing = await verify(cut.path, ['--stream', 'checks-1']);
        expect(missing.code).toBe(1);
        expect(missing.stdout).toContain('BROKEN checks-1 at revision 65: missing');
      } finally {
        cut.remove();
      }

      // The summary's hash of the last removed check is what the first remaining one links to.
      tamper(dir.path, `UPDATE event_log SET data = json_set(data, '$.through_hash', '${'0'.repeat(64)}') WHERE ${streamRow('check-summaries-1')}`);
      const relinked = await verify(dir.path, ['--stream', 'checks-1']);
      expect(relinked.code).toBe(1);
      expect(relinked.stdout).toContain('BROKEN checks-1 at revision 64: altered');
    }, 60_000);
  });
});
