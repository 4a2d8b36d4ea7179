/**
 * GET /api/v2/teams/:teamID/audit-export and GET /api/v2/audit/public-key (docs/audit.md): the
 * team's history as signed NDJSON after real API writes, checked against the served public key;
 * the same export does not verify against another key, nor once a line is edited; without
 * AUDIT_SIGNING_KEY the export is unsigned and there is no public key. The private key is in no
 * answer.
 */
import { generateKeyPairSync } from 'node:crypto';
import { auditPublicKey } from '../../src/audit/domain/signing.js';
import { verifyExport } from '../../src/audit/domain/verify-export.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { auditedIncident, createProject } from '../support/incident-fixtures.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();

function check(body: string, keyPem: string) {
  const lines = body.trimEnd().split('\n');
  return verifyExport(lines, { text: lines[lines.length - 1], number: lines.length }, auditPublicKey(keyPem));
}

describe('audit export over HTTP', () => {
  let t: TestApp;
  let unsigned: TestApp;
  let teamId: number;
  let otherTeamId: number;
  let token: string;
  let incidentId: number;

  beforeAll(async () => {
    [t, unsigned] = await Promise.all([startTestApp({ AUDIT_SIGNING_KEY: PRIVATE_PEM }), startTestApp()]);
    ({ teamId, token, incidentId } = await auditedIncident(t, { comment: true }));
    otherTeamId = (await t.createTeam('Bystander')).id;
  }, 60_000);
  afterAll(async () => {
    await Promise.all([t?.close(), unsigned?.close()]);
  });

  it('serves the public key, without a token, and its key id', async () => {
    const answer = await t.request('GET', '/api/v2/audit/public-key');
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/x-pem-file/);
    expect(answer.body).toBe(PUBLIC_PEM);
    expect(answer.headers['audit-key-id']).toMatch(/^[0-9a-f]{64}$/);
    expect(answer.body).not.toContain('PRIVATE');
  });

  it("streams the team's events with their hashes and a manifest signed with that key", async () => {
    const answer = await t.admin('GET', `/api/v2/teams/${teamId}/audit-export`);
    expect(answer.statusCode).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(answer.body).not.toContain('PRIVATE');
    const lines = answer.body.trimEnd().split('\n').map((line) => JSON.parse(line));
    const { manifest } = lines.pop();
    expect(lines.map((l) => l.stream)).toEqual(expect.arrayContaining([`incident-${incidentId}`]));
    expect(new Set(lines.map((l) => l.stream))).toEqual(new Set(Object.keys(manifest.streams)));
    const incident = lines.filter((l) => l.stream === `incident-${incidentId}`);
    expect(incident.length).toBeGreaterThanOrEqual(2);
    expect(incident[1].prev_hash).toBe(incident[0].hash);
    expect(manifest).toMatchObject({ team_id: teamId, events: lines.length, key_id: (await t.request('GET', '/api/v2/audit/public-key')).headers['audit-key-id'] });

    expect(await check(answer.body, PUBLIC_PEM)).toMatchObject({ ok: true, events: lines.length, key_id: manifest.key_id });
    const otherKey = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(await check(answer.body, otherKey)).toMatchObject({ ok: false, line: lines.length + 1, problem: expect.stringContaining('not by the given public key') });
    const edited = answer.body.replace('Checkout down', 'Checkout fine');
    expect(edited).not.toBe(answer.body);
    expect(await check(edited, PUBLIC_PEM)).toMatchObject({ ok: false, problem: expect.stringContaining('altered') });

    // Another team's export holds none of this team's streams.
    const other = (await t.admin('GET', `/api/v2/teams/${otherTeamId}/audit-export`)).body.trimEnd().split('\n');
    expect(other.some((line) => line.includes(`"incident-${incidentId}"`))).toBe(false);
  });

  it("leaves out the team's notification channels, whose events hold secrets, and still verifies", async () => {
    const created = await t.admin('POST', `/api/v2/teams/${teamId}/notification-channels`, { name: 'Hook', kind: 'webhook', config: { url: 'https://hooks.example.test/in?key=hidden' } });
    expect(created.statusCode).toBe(201);
    const secret: string = created.json().data.secret;
    expect(secret).toMatch(/^whsec_/);

    const answer = await t.admin('GET', `/api/v2/teams/${teamId}/audit-export`);
    expect(answer.statusCode).toBe(200);
    expect(answer.body).not.toContain(secret);
    expect(answer.body).not.toContain('hooks.example.test');
    const lines = answer.body.trimEnd().split('\n').map((line) => JSON.parse(line));
    const { manifest } = lines.pop();
    expect(manifest.withheld_streams).toEqual([`notification-channel-${created.json().data.id}`]);
    expect(await check(answer.body, PUBLIC_PEM)).toMatchObject({ ok: true, events: lines.length });
  });

  it('shows the values the API hides of an endpoint as withheld, lists those lines in the manifest, and still verifies', async () => {
    const projectId = await createProject(t, teamId, 'Hidden values');
    const secrets = ['Us3rInfoPa55', 'Qu3rySecr3tValue', 'Bearer H3aderSecr3t', 'B0dySecr3tMarker', 'Bearer R0tatedH3ader'];
    const created = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, {
      project_id: projectId,
      name: 'Checkout API',
      url: `https://probe:${secrets[0]}@api.example.test/health?api_key=${secrets[1]}`,
      headers: { Authorization: secrets[2] },
      body_match_mode: 'contains',
      expected_body: secrets[3],
    });
    expect(created.statusCode).toBe(201);
    const endpointId: number = created.json().data.id;
    const changed = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { headers: { Authorization: secrets[4] } });
    expect(changed.statusCode).toBe(200);

    const answer = await t.admin('GET', `/api/v2/teams/${teamId}/audit-export`);
    expect(answer.statusCode).toBe(200);
    for (const secret of secrets) expect(answer.body).not.toContain(secret);
    const lines = answer.body.trimEnd().split('\n').map((line) => JSON.parse(line));
    const { manifest } = lines.pop();
    const endpoint = lines.filter((l) => l.stream === `endpoint-${endpointId}`);
    expect(endpoint.map((l) => [l.type, l.withheld])).toEqual([
      ['EndpointRegistered', ['/configuration/url', '/configuration/headers/Authorization', '/configuration/expected_body']],
      ['EndpointReconfigured', ['/changes/headers/Authorization']],
    ]);
    expect(endpoint[0].data.configuration.url).toBe('https://[withheld]@api.example.test/health?[withheld]');
    expect(manifest.withheld_lines).toEqual(endpoint.map((l) => ({ stream: l.stream, revision: l.revision, prev_hash: l.prev_hash, hash: l.hash, shown_hash: expect.any(String) })));
    expect(await check(answer.body, PUBLIC_PEM)).toMatchObject({ ok: true, events: lines.length, withheld: 2 });
  });

  it('takes a time window; refuses bad times, developer tokens and unknown teams', async () => {
    const future = await t.admin('GET', `/api/v2/teams/${teamId}/audit-export?from=2999-01-01T00:00:00Z`);
    expect(future.statusCode).toBe(200);
    expect(future.body.trimEnd().split('\n')).toHaveLength(1);
    expect(JSON.parse(future.body).manifest).toMatchObject({ events: 0, from: '2999-01-01T00:00:00.000Z', streams: {} });

    const bad = await t.admin('GET', `/api/v2/teams/${teamId}/audit-export?from=yesterday&to=2020-01-01T00:00:00Z`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toEqual([expect.objectContaining({ field: 'from' })]);
    const backwards = await t.admin('GET', `/api/v2/teams/${teamId}/audit-export?from=2021-01-01T00:00:00Z&to=2020-01-01T00:00:00Z`);
    expect(backwards.json().errors).toEqual([expect.objectContaining({ field: 'to' })]);
    expect((await t.request('GET', `/api/v2/teams/${teamId}/audit-export`, { token })).statusCode).toBe(401);
    expect((await t.admin('GET', '/api/v2/teams/9999/audit-export')).statusCode).toBe(404);
  });

  it('without AUDIT_SIGNING_KEY: an unsigned export, and no public key', async () => {
    const team = (await unsigned.createTeam('Unsigned')).id;
    const answer = await unsigned.admin('GET', `/api/v2/teams/${team}/audit-export`);
    expect(answer.statusCode).toBe(200);
    const lines = answer.body.trimEnd().split('\n');
    expect(JSON.parse(lines[lines.length - 1]).manifest).toMatchObject({ team_id: team, key_id: null, signature: null });
    const key = await unsigned.request('GET', '/api/v2/audit/public-key');
    expect(key.statusCode).toBe(404);
    expect(key.json()).toMatchObject({ code: 'not_found' });
  });
});
