/**
 * An audit export never carries a secret (docs/audit.md, "What an export leaves out"): a team's
 * notification channel streams hold its webhook signing secrets, routing keys and webhook URLs,
 * so `npm run history -- export --team N` (run as a real child process) leaves them out, names
 * them in the manifest, and still verifies; asking for such a stream alone is refused.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import { channelStream } from '../../src/notifications/domain/channel.js';
import { runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';

const CLI = 'src/cli/history.ts';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ROUTING_KEY = 'R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY12';

describe('npm run history -- export leaves out streams that hold secrets', () => {
  const compiled = makeTempDir('audit-withheld-js-');
  const dir = makeTempDir('audit-withheld-');
  const files = makeTempDir('audit-withheld-files-');
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicPem = join(files.path, 'signing.pem');
  const exported = join(files.path, 'team-1.ndjson');
  let script: string;
  const history = (args: string[], env: Record<string, string> = {}): Promise<ChildResult> =>
    runNode(script, args, { env: { DATA_DIR: dir.path, LOG_LEVEL: 'silent', ...env } });

  beforeAll(async () => {
    await transpileForChildProcess([CLI], compiled.path);
    script = join(compiled.path, CLI.replace(/\.ts$/, '.js'));
    writeFileSync(publicPem, publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const store = createEventStore({ dataDir: dir.path, eventStoreUrl: null });
    await store.append('incident-1', [{ type: 'IncidentCreated', data: { team_id: 1, title: 'Checkout down' } }], { expectedRevision: 'no_stream' });
    await store.append(channelStream(1), [{ type: 'NotificationChannelCreated', data: { team_id: 1, channel_id: 1, kind: 'webhook', config: { url: 'https://hooks.example.test/in' }, secret: SECRET } }], { expectedRevision: 'no_stream' });
    await store.append(channelStream(2), [{ type: 'NotificationChannelCreated', data: { team_id: 1, channel_id: 2, kind: 'pagerduty', config: { routing_key: ROUTING_KEY } } }], { expectedRevision: 'no_stream' });
    await store.append('incident-1', [{ type: 'IncidentCommented', data: { team_id: 1, body: 'Looking' } }], { expectedRevision: 0 });
    await store.close();
  }, 60_000);
  afterAll(() => {
    compiled.remove();
    dir.remove();
    files.remove();
  });

  it("exports the team's other streams, names the channels it left out, and verifies", async () => {
    const result = await history(['export', '--team', '1', '--out', exported], { AUDIT_SIGNING_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() });
    expect(result).toMatchObject({ code: 0, stdout: '' });
    expect(result.stderr).toMatch(/Exported 2 events/);

    const text = readFileSync(exported, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(ROUTING_KEY);
    expect(text).not.toContain('hooks.example.test');
    const lines = text.trimEnd().split('\n');
    expect(lines.slice(0, -1).map((l) => JSON.parse(l).stream)).toEqual(['incident-1', 'incident-1']);
    const { manifest } = JSON.parse(lines[lines.length - 1]);
    expect(manifest).toMatchObject({ team_id: 1, events: 2, withheld_streams: [channelStream(1), channelStream(2)] });
    expect(Object.keys(manifest.streams)).toEqual(['incident-1']);

    const verified = await history(['verify-export', exported, '--public-key', publicPem]);
    expect(verified.code).toBe(0);
    expect(verified.stdout).toMatch(/^Verified: 2 events in 1 streams, every chain link holds, signature valid .* Left out \(they hold secrets\): notification-channel-1, notification-channel-2\.\n$/);
  });

  it('refuses to export a channel stream alone, and writes no file', async () => {
    const out = join(files.path, 'channel.ndjson');
    const result = await history(['export', '--stream', channelStream(1), '--out', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Stream ${channelStream(1)} holds a notification channel's secrets: it is never exported.`);
    expect(result.stdout).not.toContain(SECRET);
    expect(existsSync(out)).toBe(false);
  });
});
