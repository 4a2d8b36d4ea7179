/**
 * Certificate expiry end to end (issue 26 item 4): the built service in a child process that
 * trusts a test CA (NODE_EXTRA_CA_CERTS) probes a local https target whose certificate expires
 * in 5 days: a `certificate_expiry` warning incident opens, the checks still succeed and no
 * public Check shows the expiry; once the target's certificate is replaced by one valid for a
 * year, the signal recovers and the incident resolves.
 */
import { jest } from '@jest/globals';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildService, callService, startService, type ServiceBuild, type ServiceProcess } from '../support/service-process.js';
import { createTestCa, opensslAvailable, type TestCa } from '../support/test-ca.js';
import { eventually } from '../support/eventually.js';

jest.setTimeout(240_000);

const ADMIN = 'certificate-admin-token-0123456789';
const itWithOpenssl = opensslAvailable() ? it : it.skip;

describe('certificate expiry', () => {
  let ca: TestCa;
  let build: ServiceBuild;
  let service: ServiceProcess | undefined;
  let target: Server | undefined;
  let dataDir: string;
  const tokens = new Map<number, string>();

  beforeAll(async () => {
    if (!opensslAvailable()) return;
    ca = createTestCa();
    build = await buildService('certificate-expiry');
    dataDir = mkdtempSync(join(tmpdir(), 'monitor-certs-'));
  });
  afterAll(async () => {
    await service?.kill();
    target?.closeAllConnections();
    await new Promise((done) => (target ? target.close(done) : done(undefined)));
    ca?.remove();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  itWithOpenssl('(needs openssl) a certificate expiring in 5 days opens a certificate_expiry warning incident; a renewed one resolves it', async () => {
    const soon = ca.issue(5);
    target = createServer({ key: soon.key, cert: soon.cert }, (request, response) => {
      const verification = /^\/\.well-known\/monitor-verification\/(\d+)$/.exec(request.url ?? '');
      if (verification) {
        const token = tokens.get(Number(verification[1]));
        response.writeHead(token ? 200 : 404).end(token ? `${token}\n` : 'unknown');
        return;
      }
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    target.keepAliveTimeout = 500;
    await new Promise<void>((done) => target!.listen(0, '127.0.0.1', done));
    const url = `https://127.0.0.1:${(target.address() as AddressInfo).port}/health`;

    service = await startService(build, { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, NODE_EXTRA_CA_CERTS: ca.caFile });
    const call = (method: string, path: string, body?: unknown, token = ADMIN) => callService(service!, method, path, token, body);
    const team = (await call('POST', '/api/v2/teams', { name: 'Certs' })).body.data;
    const token = (await call('POST', `/api/v2/teams/${team.id}/tokens`, { name: 'r', scopes: ['monitoring:read', 'incidents:read'], role: 'viewer' })).body.data.token;
    const project = (await call('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Web' })).body.data;
    const created = await call('POST', `/api/v2/teams/${team.id}/endpoints`, {
      project_id: project.id,
      name: 'Shop',
      url,
      interval_seconds: 1,
      timeout_seconds: 1,
      latency_detection_mode: 'off',
    });
    expect(created.status).toBe(201);
    const endpoint = created.body.data;
    expect(endpoint.certificate_expiry_days).toBe(14);
    tokens.set(endpoint.id, endpoint.verification_token);
    expect((await call('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`)).status).toBe(200);
    expect((await call('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`, { enabled: true })).status).toBe(200);

    const read = (path: string) => call('GET', path, undefined, token);
    const incident = await eventually('a certificate_expiry incident', async () => {
      const listed = (await read(`/api/public/v2/incidents?type=certificate_expiry&endpoint_id=${endpoint.id}`)).body.data;
      return listed.length > 0 ? listed : null;
    }, { timeoutMs: 60_000 });
    expect(incident).toHaveLength(1);
    expect(incident[0]).toMatchObject({ source: 'automatic', severity: 'warning', type: 'certificate_expiry', auto_resolve: true, endpoint_ids: [endpoint.id], resolved_at: null });
    expect(incident[0].detection_reason).toMatch(/expires at \d{4}-\d{2}-\d{2}T[\d:.]+Z \(5 days left, warning threshold 14 days\)/);

    const status = (await read(`/api/public/v2/endpoints/${endpoint.id}/alert-status`)).body.data;
    const certificate = status.signals.find((s: { type: string }) => s.type === 'certificate');
    expect(certificate).toMatchObject({ state: 'triggered', incident_id: incident[0].id });
    expect(incident[0].detection_reason).toContain(certificate.expires_at);

    // The checks succeed and keep the expiry to themselves.
    const checks = (await read(`/api/public/v2/endpoints/${endpoint.id}/checks?limit=5`)).body.data;
    expect(checks.length).toBeGreaterThan(0);
    expect(checks.every((c: Record<string, unknown>) => c.success === true && !('certificate_expires_at' in c))).toBe(true);

    // Renewed: the next handshakes see a certificate valid for a year.
    const renewed = ca.issue(365);
    target.setSecureContext({ key: renewed.key, cert: renewed.cert });
    target.closeAllConnections();
    await eventually('the certificate_expiry incident to resolve', async () => {
      const detail = (await read(`/api/public/v2/incidents/${incident[0].id}`)).body.data;
      return detail.resolved_at !== null;
    }, { timeoutMs: 60_000 });
    const after = (await read(`/api/public/v2/endpoints/${endpoint.id}/alert-status`)).body.data;
    const recovered = after.signals.find((s: { type: string }) => s.type === 'certificate');
    expect(recovered.state).toBe('ok');
    expect(Date.parse(recovered.expires_at) - Date.now()).toBeGreaterThan(300 * 86_400_000);
    expect((await read(`/api/public/v2/incidents?type=certificate_expiry&endpoint_id=${endpoint.id}`)).body.data).toHaveLength(1);
  });
});
