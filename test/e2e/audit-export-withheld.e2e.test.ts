/**
 * An audit export never carries a secret (docs/audit.md, "What an export leaves out"), checked
 * through `npm run history -- export` and `verify-export` run as real child processes:
 * - a team's notification channel streams hold its webhook signing secrets, routing keys and
 *   webhook URLs, so a team's export leaves them out, names them in the manifest, and still
 *   verifies; asking for such a stream alone is refused;
 * - an endpoint's stream records its whole configuration (URL query and user-info, header values,
 *   expected body), so its lines show those values as withheld, keep the events' stored hashes,
 *   and are listed in the signed manifest; `verify-export` passes and counts them, and refuses a
 *   withheld line that is not the one the manifest lists, or a manifest entry without its line.
 */
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import { channelStream } from '../../src/notifications/domain/channel.js';
import { DEFAULT_CONFIGURATION } from '../../src/monitoring/domain/endpoint.js';
import { endpointStream, type EndpointReconfiguredData, type EndpointRegisteredData } from '../../src/monitoring/domain/events.js';
import { runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';

const CLI = 'src/cli/history.ts';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const ROUTING_KEY = 'R0UT1NGKEYR0UT1NGKEYR0UT1NGKEY12';
const USER_INFO_SECRET = 'Us3rInfoPa55';
const QUERY_SECRET = 'Qu3rySecr3tValue';
const HEADER_SECRET = 'Bearer H3aderSecr3t';
const ROTATED_HEADER_SECRET = 'Bearer R0tatedH3ader';
const BODY_SECRET = 'B0dySecr3tMarker';
const SECRETS = [USER_INFO_SECRET, QUERY_SECRET, HEADER_SECRET, ROTATED_HEADER_SECRET, BODY_SECRET];
const VERIFICATION_TOKEN = 'a'.repeat(64);

describe('npm run history -- export leaves out what holds secrets', () => {
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
    const registered: EndpointRegisteredData = {
      endpoint_id: 7,
      team_id: 2,
      project_id: 1,
      name: 'Checkout API',
      description: '',
      configuration: {
        ...DEFAULT_CONFIGURATION,
        url: `https://probe:${USER_INFO_SECRET}@api.example.test/health?api_key=${QUERY_SECRET}`,
        headers: { Authorization: HEADER_SECRET, 'X-Probe': 'on' },
        body_match_mode: 'contains',
        expected_body: BODY_SECRET,
      },
      verification_token: VERIFICATION_TOKEN,
      configuration_version: 1,
      created_at: '2026-11-01T00:00:00.000Z',
    };
    const reconfigured: EndpointReconfiguredData = {
      endpoint_id: 7,
      team_id: 2,
      project_id: 1,
      changes: { headers: { Authorization: ROTATED_HEADER_SECRET } },
      configuration_version: 2,
      updated_at: '2026-11-02T00:00:00.000Z',
    };
    const endpoint = endpointStream(7);
    await store.append(endpoint, [{ type: 'EndpointRegistered', data: registered }], { expectedRevision: 'no_stream' });
    await store.append('incident-2', [{ type: 'IncidentCreated', data: { team_id: 2, title: 'Checkout down' } }], { expectedRevision: 'no_stream' });
    await store.append(endpoint, [{ type: 'EndpointEnabled', data: { endpoint_id: 7, team_id: 2, at: '2026-11-01T00:01:00.000Z' } }], { expectedRevision: 0 });
    await store.append(endpoint, [{ type: 'EndpointReconfigured', data: reconfigured }], { expectedRevision: 1 });
    await store.append(endpoint, [{ type: 'EndpointReconfigured', data: { ...reconfigured, changes: { name: 'Checkout' }, configuration_version: 3 } }], { expectedRevision: 2 });
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

  describe("an endpoint's hidden values", () => {
    const endpoint = endpointStream(7);
    const exported = join(files.path, 'team-2.ndjson');
    const signed = { AUDIT_SIGNING_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
    /** A copy of the export with its lines (parsed, the manifest last) changed by `edit`, checked offline. */
    const verifyVariant = async (name: string, edit: (lines: any[]) => void) => {
      const lines = readFileSync(exported, 'utf8').trimEnd().split('\n').map((line) => JSON.parse(line));
      edit(lines);
      const file = join(files.path, `${name}.ndjson`);
      writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
      return history(['verify-export', file, '--public-key', publicPem]);
    };

    it('shows hidden values as withheld, lists those lines in the signed manifest, and verifies', async () => {
      const result = await history(['export', '--team', '2', '--out', exported], signed);
      expect(result).toMatchObject({ code: 0, stdout: '' });
      expect(result.stderr).toMatch(/Exported 5 events/);

      const text = readFileSync(exported, 'utf8');
      for (const secret of SECRETS) expect(text).not.toContain(secret);
      const lines = text.trimEnd().split('\n').map((line) => JSON.parse(line));
      const { manifest } = lines.pop();
      const [registered, , enabled, rotated, renamed] = lines;
      expect(registered).toMatchObject({ stream: endpoint, revision: 0, prev_hash: '' });
      expect(registered.withheld).toEqual(['/configuration/url', '/configuration/headers/Authorization', '/configuration/headers/X-Probe', '/configuration/expected_body']);
      // What the API shows stays: scheme, host and path, header names, the verification token.
      expect(registered.data.configuration).toMatchObject({
        url: 'https://[withheld]@api.example.test/health?[withheld]',
        headers: { Authorization: '[withheld]', 'X-Probe': '[withheld]' },
        expected_body: '[withheld]',
        body_match_mode: 'contains',
      });
      expect(registered.data.verification_token).toBe(VERIFICATION_TOKEN);
      expect(rotated.withheld).toEqual(['/changes/headers/Authorization']);
      // Events without hidden values are exported as stored.
      expect(enabled.withheld).toBeUndefined();
      expect(renamed.withheld).toBeUndefined();
      // The stored hashes are kept: the chain runs through the withheld lines.
      expect(enabled.prev_hash).toBe(registered.hash);
      expect(renamed.prev_hash).toBe(rotated.hash);
      expect(manifest.withheld_lines).toEqual([
        { stream: endpoint, revision: 0, prev_hash: '', hash: registered.hash, shown_hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
        { stream: endpoint, revision: 2, prev_hash: enabled.hash, hash: rotated.hash, shown_hash: expect.stringMatching(/^[0-9a-f]{64}$/) },
      ]);

      const verified = await history(['verify-export', exported, '--public-key', publicPem]);
      expect(verified.code).toBe(0);
      expect(verified.stdout).toMatch(/^Verified: 5 events in 2 streams, every chain link holds, signature valid \(key [0-9a-f]{64}\)\. 2 lines show hidden values as withheld: not content-checked/);

      // One stream's export withholds the same values.
      const alone = await history(['export', '--stream', endpoint]);
      expect(alone.code).toBe(0);
      for (const secret of SECRETS) expect(alone.stdout).not.toContain(secret);
      expect(alone.stdout).toContain('"withheld":["/changes/headers/Authorization"]');
    });

    it("refuses a withheld line whose hash, link or shown content differs from the manifest's entry", async () => {
      const hash = await verifyVariant('hash', (lines) => {
        lines[0].hash = lines[0].hash.replace(/^./, (c: string) => (c === '0' ? '1' : '0'));
      });
      expect(hash).toMatchObject({ code: 1, stdout: `BAD line 1: ${endpoint} revision 0: the line differs from the manifest's withheld entry for it (altered)\n` });

      const shown = await verifyVariant('shown', (lines) => {
        lines[0].data.name = 'Billing API';
      });
      expect(shown).toMatchObject({ code: 1, stdout: `BAD line 1: ${endpoint} revision 0: the line differs from the manifest's withheld entry for it (altered)\n` });
    });

    it('refuses a withheld line the manifest does not list, and a manifest entry without its line', async () => {
      const unlisted = await verifyVariant('unlisted', (lines) => {
        lines[lines.length - 1].manifest.withheld_lines.splice(1, 1);
      });
      expect(unlisted).toMatchObject({ code: 1, stdout: `BAD line 4: ${endpoint} revision 2 shows withheld values, but the manifest does not list it as withheld\n` });

      // Marking a line withheld to escape its content check: the manifest does not list it.
      const escaped = await verifyVariant('escaped', (lines) => {
        lines[2].withheld = ['/at'];
        lines[2].data.at = '[withheld]';
      });
      expect(escaped).toMatchObject({ code: 1, stdout: `BAD line 3: ${endpoint} revision 1 shows withheld values, but the manifest does not list it as withheld\n` });

      const lineless = await verifyVariant('lineless', (lines) => {
        const { manifest } = lines[lines.length - 1];
        manifest.withheld_lines.push({ ...manifest.withheld_lines[1], revision: 3 });
      });
      expect(lineless).toMatchObject({ code: 1, stdout: `BAD line 6: the manifest lists ${endpoint} revision 3 as withheld, which has no withheld line (lines are missing or altered)\n` });
    });
  });
});
