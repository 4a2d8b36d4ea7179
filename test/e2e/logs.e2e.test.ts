/**
 * What an operator reads at the default LOG_LEVEL=info, from the built service's stdout: one JSON
 * line per request (method, route template, status, duration, request id, team) and one per
 * notable state change, never a token; at debug, no framework chatter (Nest's module and route
 * mapping lines).
 */
import { join } from 'node:path';
import { runNode } from '../support/child-process.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { eventually } from '../support/eventually.js';
import { builtCli, ensureBuilt, startBuiltService, type BuiltService } from '../support/built-service.js';
import { startTarget, type Target } from './support.js';

const ADMIN = 'logs-test-admin-token-0123456789abcdef';

describe('logs at LOG_LEVEL=info (the built service as a child process)', () => {
  const dir = makeTempDir('logs-');
  let service: BuiltService;
  let target: Target;
  let developerToken: string;
  let verificationToken: string;
  const requestIds: string[] = [];
  let teamId: number;

  async function call(method: string, path: string, token: string, body?: unknown): Promise<any> {
    const response = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    requestIds.push(response.headers.get('x-request-id')!);
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  beforeAll(async () => {
    ensureBuilt();
    target = await startTarget();
    service = await startBuiltService({ DATA_DIR: join(dir.path, 'data'), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'info', ROLE: 'all' });

    teamId = (await call('POST', '/api/v2/teams', ADMIN, { name: 'Logged' })).body.data.id;
    developerToken = (await call('POST', `/api/v2/teams/${teamId}/tokens`, ADMIN, { name: 'ops', scopes: ['monitoring:read', 'incidents:read', 'incidents:write'], role: 'editor' })).body.data.token;
    const project = (await call('POST', `/api/v2/teams/${teamId}/projects`, ADMIN, { name: 'P' })).body.data.id;
    const endpoint = (await call('POST', `/api/v2/teams/${teamId}/endpoints`, ADMIN, { project_id: project, name: 'Target', url: `${target.url}/health` })).body.data;
    verificationToken = endpoint.verification_token;
    expect((await call('POST', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}/verify-destination`, ADMIN)).status).toBe(422);
    target.tokens.set(endpoint.id, verificationToken);
    expect((await call('POST', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}/verify-destination`, ADMIN)).status).toBe(200);
    const checks = [0, 1, 2].map((i) => ({ checked_at: new Date(Date.UTC(2030, 0, 1, 0, i)).toISOString(), success: true, status_code: 200, latency_ms: 20 }));
    expect((await call('POST', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}/checks/import`, ADMIN, { checks })).status).toBe(201);
    const incident = (await call('POST', '/api/public/v2/incidents', developerToken, { project_id: project, title: 'Checkout down' })).body.data;
    expect((await call('PATCH', `/api/public/v2/incidents/${incident.id}/status`, developerToken, { resolved: true })).status).toBe(200);
    expect((await call('GET', '/api/public/v2/incidents?limit=5', developerToken)).status).toBe(200);
    expect((await call('GET', '/api/public/v2/incidents', 'not-a-real-token')).status).toBe(401);
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await target?.close();
    dir.remove();
  });

  const requestLines = () => service.lines().filter((line) => line.msg === 'request');

  it('logs one line per request with method, route template, status, duration, request id and team', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200)); // the last line is written after the response
    const lines = requestLines();
    expect(lines.map((line) => line.request_id)).toEqual(requestIds);
    for (const line of lines) {
      expect(line).toMatchObject({ level: 30, method: expect.any(String), status: expect.any(Number), duration_ms: expect.any(Number) });
    }
    const list = lines.find((line) => line.method === 'GET' && line.status === 200)!;
    expect(list).toMatchObject({ route: '/api/public/v2/incidents', team_id: teamId, token_id: expect.any(Number) });
    const resolve = lines.find((line) => line.method === 'PATCH')!;
    expect(resolve.route).toBe('/api/public/v2/incidents/:incidentID/status');
    const verify = lines.filter((line) => line.route?.endsWith('/verify-destination'));
    expect(verify.map((line) => [line.status, line.team_id, line.admin])).toEqual([
      [422, teamId, true],
      [200, teamId, true],
    ]);
    expect(lines.at(-1)).toMatchObject({ status: 401, route: '/api/public/v2/incidents' });
  });

  it('logs each notable state change once', () => {
    const changes = service.lines().filter((line) => line.level === 30 && line.msg !== 'request').map((line) => line.msg);
    for (const msg of ['endpoint failed destination verification', 'endpoint destination verified', 'checks imported', 'incident opened', 'incident resolved']) {
      expect({ msg, times: changes.filter((m) => m === msg).length }).toEqual({ msg, times: 1 });
    }
    expect(service.lines().find((line) => line.msg === 'checks imported')).toMatchObject({ team_id: teamId, checks: 3 });
    expect(service.lines().find((line) => line.msg === 'incident resolved')).toMatchObject({ team_id: teamId, by: 'manual', actor: expect.stringMatching(/^token:/) });
  });

  it('never logs a token or a verification token', () => {
    const all = JSON.stringify(service.lines());
    for (const secret of [ADMIN, developerToken, verificationToken, 'not-a-real-token']) expect(all.includes(secret)).toBe(false);
  });

  it('starts with one "service started" line that names the URL and the docs URL and carries `role` once', () => {
    const started = service.lines().filter((line) => line.msg === 'service started');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ role: 'all', url: service.url, docs: `${service.url}/docs`, admin_docs: `${service.url}/docs/admin` });
    expect(service.rawLines().find((text) => text.includes('"service started"'))!.match(/"role":/g)).toHaveLength(1);
  });
});

describe('a rebuild run by the operator CLI while the service runs', () => {
  it('shows in the service log once the service follows the new generation', async () => {
    ensureBuilt();
    const dir = makeTempDir('logs-rebuild-');
    const dataDir = join(dir.path, 'data');
    const service = await startBuiltService({ DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN });
    try {
      await service.ready(); // the service follows generation 1 before the CLI swaps in 2
      const rebuilt = await runNode(builtCli('projections'), ['rebuild', 'incidents'], { env: { DATA_DIR: dataDir } });
      expect(rebuilt).toMatchObject({ code: 0, stdout: expect.stringContaining('incidents: generation 2 swapped in') });
      await eventually('the service to log that it follows the new generation', () =>
        service.lines().some((line) => line.msg === 'projection rebuilt elsewhere: following the new generation'),
      );
      expect(service.lines().filter((line) => line.msg === 'projection rebuilt elsewhere: following the new generation')).toEqual([
        expect.objectContaining({ level: 30, projection: 'incidents', from_generation: 1 }),
      ]);
    } finally {
      await service.stop();
      dir.remove();
    }
  }, 120_000);
});

describe('logs at LOG_LEVEL=debug', () => {
  it('carry no framework chatter (no line per Nest module or mapped route)', async () => {
    ensureBuilt();
    const dir = makeTempDir('logs-debug-');
    const service = await startBuiltService({ DATA_DIR: join(dir.path, 'data'), ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'debug' });
    try {
      await fetch(`${service.url}/health/live`);
      const lines = service.lines();
      expect(lines.filter((line) => /Mapped \{|dependencies initialized|RoutesResolver/.test(String(line.msg)))).toEqual([]);
      expect(lines.some((line) => line.msg === 'service started')).toBe(true);
    } finally {
      await service.stop();
      dir.remove();
    }
  }, 60_000);
});
