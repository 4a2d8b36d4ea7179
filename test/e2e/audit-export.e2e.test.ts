/**
 * `npm run history -- export` and `verify-export` (docs/audit.md) run as real child processes:
 * a team's signed NDJSON export verifies offline (and with plain openssl), and the same export
 * with one line changed, removed or moved, its manifest edited, or checked with another key is
 * refused, naming the first bad line.
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';
import Database from 'better-sqlite3';
import { CheckRetention } from '../../src/checks/application/retention.js';
import { checkSummariesStream } from '../../src/checks/domain/check-summary.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { IDS_RESERVED, sequenceStream } from '../../src/platform/ids/id-allocator.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { chainHash } from '../../src/platform/event-store/chain.js';
import { runCommand, runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';

const CLI = 'src/cli/history.ts';

async function appendIncident(store: EventStore, stream: string, teamId: number, count: number): Promise<void> {
  for (let n = 0; n < count; n++) {
    await store.append(stream, [{ type: n === 0 ? 'IncidentCreated' : 'IncidentCommented', data: { team_id: teamId, title: 'Checkout down', n } }], {
      expectedRevision: n === 0 ? 'no_stream' : n - 1,
    });
  }
}

async function nextMillisecond(): Promise<void> {
  const start = Date.now();
  while (Date.now() === start) await new Promise((resolve) => setImmediate(resolve));
}

function keyPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

describe('npm run history -- export / verify-export', () => {
  const compiled = makeTempDir('audit-export-js-');
  const dir = makeTempDir('audit-export-');
  const files = makeTempDir('audit-export-files-');
  const signing = keyPair();
  const other = keyPair();
  let script: string;
  const signingPub = join(files.path, 'signing.pem');
  const otherPub = join(files.path, 'other.pem');
  const exported = join(files.path, 'team-1.ndjson');
  const history = (args: string[], env: Record<string, string> = {}): Promise<ChildResult> =>
    runNode(script, args, { env: { DATA_DIR: dir.path, LOG_LEVEL: 'silent', ...env } });
  const verifyExport = (file: string, key: string | null = signingPub) => history(['verify-export', file, ...(key ? ['--public-key', key] : [])]);
  const lines = () => readFileSync(exported, 'utf8').trimEnd().split('\n');
  /** A copy of the export with its lines changed by `edit`. */
  const variant = (name: string, edit: (lines: string[]) => string[]) => {
    const file = join(files.path, `${name}.ndjson`);
    writeFileSync(file, `${edit(lines()).join('\n')}\n`);
    return file;
  };
  const lineOf = (stream: string, revision: number) => lines().findIndex((l) => l.startsWith(`{"stream":"${stream}","revision":${revision},`));

  beforeAll(async () => {
    await transpileForChildProcess([CLI], compiled.path);
    script = join(compiled.path, CLI.replace(/\.ts$/, '.js'));
    writeFileSync(signingPub, signing.publicPem);
    writeFileSync(otherPub, other.publicPem);
    const store = createEventStore({ dataDir: dir.path, eventStoreUrl: null });
    // Interleaved in the log: two incidents of team 1, one of team 2.
    for (let n = 0; n < 4; n++) {
      // recorded_at has millisecond precision: each round starts on a later millisecond, so
      // `--from` a round's time cuts between rounds even on a machine fast enough to append
      // several rounds within one millisecond.
      await nextMillisecond();
      for (const [stream, team] of [['incident-1', 1], ['incident-2', 1], ['incident-3', 2]] as const) {
        await store.append(stream, [{ type: n === 0 ? 'IncidentCreated' : 'IncidentCommented', data: { team_id: team, title: 'Checkout down', n }, metadata: { actor: 'token:7' } }], {
          expectedRevision: n === 0 ? 'no_stream' : n - 1,
        });
      }
    }
    await appendIncident(store, 'incident-4', 1, 2);
    await store.close();
  }, 60_000);
  afterAll(() => {
    compiled.remove();
    dir.remove();
    files.remove();
  });

  it("exports a team's streams in log order with a signed manifest, which verify-export accepts", async () => {
    const result = await history(['export', '--team', '1', '--out', exported], { AUDIT_SIGNING_KEY: signing.privatePem });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/Exported 10 events to .*team-1\.ndjson, signed with key [0-9a-f]{64}\./);
    expect(result.stderr).not.toContain('PRIVATE KEY');

    const all = lines();
    expect(all).toHaveLength(11);
    const events = all.slice(0, 10).map((l) => JSON.parse(l));
    expect(Object.keys(events[0])).toEqual(['stream', 'revision', 'position', 'type', 'occurred_at', 'recorded_at', 'actor', 'request_id', 'data', 'prev_hash', 'hash']);
    expect(events.map((e) => e.stream)).not.toContain('incident-3');
    expect(events.map((e) => e.position)).toEqual([...events.map((e) => e.position)].sort((a, b) => a - b));
    expect(events[0]).toMatchObject({ stream: 'incident-1', revision: 0, prev_hash: '', actor: 'token:7', data: { team_id: 1, n: 0 } });
    const second = events.find((e) => e.stream === 'incident-1' && e.revision === 1);
    expect(second.prev_hash).toBe(events[0].hash);
    const { manifest } = JSON.parse(all[10]);
    expect(manifest).toMatchObject({
      team_id: 1,
      from: null,
      to: null,
      events: 10,
      streams: {
        'incident-1': { first_revision: 0, last_revision: 3, head_hash: events.filter((e) => e.stream === 'incident-1').pop().hash },
        'incident-2': { first_revision: 0, last_revision: 3 },
        'incident-4': { first_revision: 0, last_revision: 1 },
      },
      key_id: expect.stringMatching(/^[0-9a-f]{64}$/),
      signature: expect.any(String),
    });

    const verified = await verifyExport(exported);
    expect(verified).toMatchObject({ code: 0, stdout: `Verified: 10 events in 3 streams, every chain link holds, signature valid (key ${manifest.key_id}).\n` });
    // Progress on stderr, its first line at the start: the file's lines are counted first.
    expect(verified.stderr.split('\n')).toContain('verify-export: 0 events, line 0 of 11');
  });

  const shellTools = ['openssl', 'jq'].every((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0);
  (shellTools ? it : it.skip)(`is checked with plain openssl: the manifest signature, the key id and one line${shellTools ? '' : ' (skipped: openssl or jq is not installed)'}`, async () => {
    const script = `
      set -e
      line=$(tail -n 1 "$EXPORT")
      printf '%s' "$line" | sed -e 's/^{"manifest"://' -e 's/}$//' -e 's/"signature":"[^"]*",//' > "$DIR/signed.json"
      printf '%s' "$line" | sed -n 's/.*"signature":"\\([^"]*\\)".*/\\1/p' | base64 -d > "$DIR/signature.bin"
      openssl pkeyutl -verify -pubin -inkey "$PUB" -rawin -in "$DIR/signed.json" -sigfile "$DIR/signature.bin"
      openssl pkey -pubin -in "$PUB" -outform DER | openssl dgst -sha256 -r | cut -d' ' -f1
      first=$(sed -n 2p "$EXPORT")
      prev=$(printf '%s' "$first" | jq -j .prev_hash)
      printf '%s%s' "$prev" "$(printf '%s' "$first" | jq -cjS '{actor,data,occurred_at,request_id,revision,stream,type}')" | openssl dgst -sha256 -r | cut -d' ' -f1
      printf '%s' "$first" | jq -j .hash; echo
    `;
    const result = await runCommand('bash', ['-c', script], { env: { EXPORT: exported, DIR: files.path, PUB: signingPub } });
    expect(result.stderr).toBe('');
    const [verdict, keyId, computed, stored] = result.stdout.trim().split('\n');
    expect(verdict).toBe('Signature Verified Successfully');
    expect(keyId).toBe(JSON.parse(lines()[10]).manifest.key_id);
    expect(computed).toBe(stored);
  });

  it('refuses a changed, removed or moved line and names it', async () => {
    const altered = variant('altered', (l) => l.map((text, i) => (i === 4 ? text.replace('Checkout down', 'Checkout fine') : text)));
    expect(await verifyExport(altered)).toMatchObject({ code: 1, stdout: expect.stringMatching(/^BAD line 5: incident-\d revision \d: its hash does not match its content \(altered\)\n$/) });

    const removedAt = lineOf('incident-2', 1);
    const removed = variant('removed', (l) => l.filter((_, i) => i !== removedAt));
    const nextOfStream = lineOf('incident-2', 2); // in the original numbering; one line earlier once removed
    expect(await verifyExport(removed)).toMatchObject({ code: 1, stdout: `BAD line ${nextOfStream}: incident-2 revisions 1-1 are missing after incident-2 revision 0 (line ${lineOf('incident-2', 0) + 1})\n` });

    const a = lineOf('incident-1', 1);
    const b = lineOf('incident-1', 2);
    const swapped = variant('swapped', (l) => l.map((text, i) => (i === a ? l[b] : i === b ? l[a] : text)));
    expect(await verifyExport(swapped)).toMatchObject({ code: 1, stdout: expect.stringMatching(new RegExp(`^BAD line ${a + 1}: `)) });

    // The last line of a stream removed: only the (signed) manifest can tell.
    const tail = lineOf('incident-4', 1);
    const cut = variant('cut', (l) => l.filter((_, i) => i !== tail));
    expect(await verifyExport(cut)).toMatchObject({ code: 1, stdout: expect.stringMatching(/^BAD line 10: incident-4 ends at revision 0 \(line 9\), the manifest says revision 1 with head [0-9a-f]{64}/) });
  });

  it('refuses an edited manifest, another key, a truncated file; asks for the key of a signed export', async () => {
    const all = lines();
    const last = JSON.parse(all[10]).manifest;
    const forged = variant('forged', (l) => l.map((text, i) => (i === 10 ? text.replace(`"events":10`, `"events":10,"note":"x"`) : text)));
    expect(await verifyExport(forged)).toMatchObject({ code: 1, stdout: 'BAD line 11: the signature does not hold: the manifest was changed or signed by another key\n' });

    const wrongKey = await verifyExport(exported, otherPub);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stdout).toMatch(new RegExp(`^BAD line 11: signed by key ${last.key_id}, not by the given public key \\([0-9a-f]{64}\\)\n$`));

    const truncated = variant('truncated', (l) => l.slice(0, 10));
    expect(await verifyExport(truncated)).toMatchObject({ code: 1, stdout: 'BAD line 10: the export does not end with a manifest line (truncated?)\n' });

    const keyless = await verifyExport(exported, null);
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toContain(`signed by key ${last.key_id}: pass --public-key`);
  });

  it("exports one incident's stream to stdout from a time on, unsigned, linked to the event before it", async () => {
    const events = lines()
      .slice(0, 10)
      .map((l) => JSON.parse(l));
    const third = events.find((e) => e.stream === 'incident-2' && e.revision === 2);
    const result = await history(['export', '--incident', '2', '--from', third.recorded_at]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('AUDIT_SIGNING_KEY is not set: the export is not signed.');
    const out = result.stdout.trimEnd().split('\n');
    const first = JSON.parse(out[0]);
    expect(first.revision).toBe(2);
    expect(first.prev_hash).toBe(events.find((e) => e.stream === 'incident-2' && e.revision === first.revision - 1).hash);
    expect(JSON.parse(out[out.length - 1]).manifest).toMatchObject({ team_id: null, stream: 'incident-2', from: third.recorded_at, key_id: null, signature: null });

    const file = join(files.path, 'incident-2.ndjson');
    writeFileSync(file, result.stdout);
    expect(await verifyExport(file, null)).toMatchObject({ code: 0, stdout: expect.stringContaining('unsigned (no signature to check)') });
    // An unsigned export checked against a key is refused: the auditor expected a signature.
    expect((await verifyExport(file)).code).toBe(1);
  });

  it('refuses a scope with no events at all (a mistyped id), writing nothing; an empty range is exported', async () => {
    const file = join(files.path, 'team-7.ndjson');
    expect(await history(['export', '--team', '7', '--out', file], { AUDIT_SIGNING_KEY: signing.privatePem })).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('Team 7 has no events in this log: nothing exported. Check the id and the data dir.'),
    });
    expect(existsSync(file)).toBe(false);
    expect(await history(['export', '--stream', 'incident-404'])).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('Stream incident-404 has no events') });
    expect(await history(['export', '--incident', '404'])).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('Incident 404 has no events') });
    // A range the team has no events in is a legitimate (empty, signed) answer.
    const empty = await history(['export', '--team', '1', '--to', '2000-01-01T00:00:00Z'], { AUDIT_SIGNING_KEY: signing.privatePem });
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.stdout.trimEnd()).manifest).toMatchObject({ team_id: 1, events: 0, to: '2000-01-01T00:00:00Z' });
  });

  it('refuses a command line without exactly one scope', async () => {
    expect((await history(['export'])).code).toBe(2);
    expect((await history(['export', '--team', '1', '--stream', 'incident-1'])).code).toBe(2);
  });

  describe('history the chain covers in other ways', () => {
    const old = makeTempDir('audit-export-upgrade-');
    const pruned = makeTempDir('audit-export-prune-');
    const whole = makeTempDir('audit-export-whole-');
    /** When this version's second event was appended to the whole-hash log. */
    let secondAppend = '';
    const at = (dataDir: string) => (args: string[]) => runNode(script, args, { env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent' } });
    beforeAll(async () => {
      // Written before chaining (no hash column), then appended to by this version: the anchor.
      const before = new SqliteEventStore(join(old.path, 'events.sqlite'));
      await appendIncident(before, 'incident-1', 1, 3);
      await before.close();
      const db = new Database(join(old.path, 'events.sqlite'));
      db.exec('ALTER TABLE event_log DROP COLUMN hash');
      db.close();
      const store = createEventStore({ dataDir: old.path, eventStoreUrl: null });
      await store.append('incident-1', [{ type: 'IncidentCommented', data: { team_id: 1, n: 3 } }], { expectedRevision: 2 });
      await store.close();

      // A checks stream whose oldest checks retention summarized and removed.
      const DAY = 86_400_000;
      const now = Date.now();
      const checks = createEventStore({ dataDir: pruned.path, eventStoreUrl: null });
      await checks.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: 1 } }], { expectedRevision: 'no_stream' });
      // 66 old checks and two new: retention removes revisions 0-63, just before the anchor at 64.
      for (const [n, age] of [...Array(66).fill(40), 0, 0].entries()) {
        const checkedAt = new Date(now - age * DAY - (100 - n) * 60_000).toISOString();
        const check = { check_id: n + 1, team_id: 1, project_id: 1, endpoint_id: 1, configuration_version: 1, source: 'scheduled', job_id: `job-${n}`, alert_suppressed: false, latency_anomaly: false, latency_threshold_ms: null, imported: false, checked_at: checkedAt, success: true, status_code: 200, latency_ms: 40 + n, failure_reason: null };
        await checks.append(checksStream(1), [{ type: 'CheckRecorded', data: check, metadata: { actor: 'system:prober', occurred_at: checkedAt } }], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
      }
      expect(await new CheckRetention(checks, { days: 30 }).apply(now)).toMatchObject({ removed: 64 });
      await checks.close();

      // Written before hashes were stored as prefixes: every event stores its whole hash. This
      // version appends to it (its events store prefixes from there on, anchors whole).
      const wholeStore = new SqliteEventStore(join(whole.path, 'events.sqlite'));
      let prev = '';
      for (let n = 0; n < 70; n++) {
        const event = { type: n === 0 ? 'IncidentCreated' : 'IncidentCommented', data: { team_id: 1, title: 'Checkout down', n } };
        const occurredAt = new Date(now - (100 - n) * 1000).toISOString();
        prev = chainHash(prev, { stream: 'incident-5', revision: n, type: event.type, data: event.data, occurred_at: occurredAt, actor: null, request_id: null });
        await wholeStore.append('incident-5', [{ ...event, metadata: { occurred_at: occurredAt, hash: prev }, chainHashed: true }], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
      }
      await wholeStore.close();
      const upgraded = createEventStore({ dataDir: whole.path, eventStoreUrl: null });
      for (let n = 70; n < 73; n++) {
        await nextMillisecond();
        if (n === 71) secondAppend = new Date().toISOString();
        await upgraded.append('incident-5', [{ type: 'IncidentCommented', data: { team_id: 1, n } }], { expectedRevision: n - 1 });
      }
      const stored = (await upgraded.readStream('incident-5')).map((e) => e.metadata.hash);
      expect(stored.map((h) => h?.length)).toEqual([...Array(70).fill(64), 16, 16, 16]);
      await upgraded.close();
    }, 60_000);
    afterAll(() => {
      old.remove();
      pruned.remove();
      whole.remove();
    });

    it('verifies and exports a log whose events all store whole hashes, and the events this version adds to it', async () => {
      expect(await at(whole.path)(['verify'])).toMatchObject({ code: 0, stdout: 'Intact: 1 streams, 73 events verified, 0 broken.\n' });
      const file = join(files.path, 'whole.ndjson');
      expect((await at(whole.path)(['export', '--stream', 'incident-5', '--out', file])).code).toBe(0);
      const rows = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
      // Full hashes on every line, the appended ones recomputed.
      expect(rows.slice(0, -1).every((r) => /^[0-9a-f]{64}$/.test(r.hash))).toBe(true);
      expect(await verifyExport(file, null)).toMatchObject({ code: 0, stdout: expect.stringContaining('Verified: 73 events in 1 streams') });
      // From the second appended event: its first line links to the full hash of revision 70, which stores a prefix.
      const later = join(files.path, 'whole-later.ndjson');
      expect((await at(whole.path)(['export', '--stream', 'incident-5', '--from', secondAppend, '--out', later])).code).toBe(0);
      const laterRows = readFileSync(later, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
      expect(laterRows.slice(0, -1).map((r) => [r.revision, r.prev_hash, r.hash])).toEqual([
        [71, rows[70].hash, rows[71].hash],
        [72, rows[71].hash, rows[72].hash],
      ]);
      expect(await verifyExport(later, null)).toMatchObject({ code: 0, stdout: expect.stringContaining('Verified: 2 events in 1 streams') });
      // An event this version appended, changed in the export: refused at its line.
      const edited = join(files.path, 'whole-edited.ndjson');
      writeFileSync(edited, readFileSync(file, 'utf8').replace('"n":71', '"n":7'));
      expect(await verifyExport(edited, null)).toMatchObject({ code: 1, stdout: expect.stringMatching(/^BAD line \d+: incident-5 revision 71: its hash does not match its content \(altered\)\n$/) });
    });

    it('exports events written before chaining unhashed, checks them against the anchor, and catches an edit of one', async () => {
      const file = join(files.path, 'upgraded.ndjson');
      expect((await at(old.path)(['export', '--stream', 'incident-1', '--out', file])).code).toBe(0);
      const rows = readFileSync(file, 'utf8').trimEnd().split('\n');
      expect(rows.slice(0, 3).map((l) => JSON.parse(l))).toEqual([0, 1, 2].map((revision) => expect.objectContaining({ revision, prev_hash: null, hash: null })));
      expect(JSON.parse(rows[3])).toMatchObject({ revision: 3, prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(await verifyExport(file, null)).toMatchObject({ code: 0, stdout: expect.stringContaining('Verified: 4 events in 1 streams') });

      const edited = join(files.path, 'upgraded-edited.ndjson');
      writeFileSync(edited, readFileSync(file, 'utf8').replace('"n":1', '"n":7'));
      expect(await verifyExport(edited, null)).toMatchObject({ code: 1, stdout: 'BAD line 4: incident-1 revision 3: its anchor does not match the unchained lines before it (one of them was altered)\n' });
    });

    it("links a pruned checks stream's first remaining check to its retention summary", async () => {
      const file = join(files.path, 'pruned.ndjson');
      expect((await at(pruned.path)(['export', '--team', '1', '--out', file])).code).toBe(0);
      const rows = readFileSync(file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
      const summary = rows.find((r) => r.stream === checkSummariesStream(1));
      const first = rows.find((r) => r.stream === checksStream(1));
      expect(first).toMatchObject({ revision: 64, prev_hash: summary.data.through_hash, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(rows.find((r) => r.stream === checksStream(1) && r.revision === 65)).toMatchObject({ prev_hash: first.hash, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(rows.pop().manifest.streams[checksStream(1)]).toMatchObject({ first_revision: 64, last_revision: 67 });
      expect(await verifyExport(file, null)).toMatchObject({ code: 0 });
    });
  });
});
