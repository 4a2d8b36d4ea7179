/**
 * Ready means ready: after a SIGKILL and a restart on the same data dir, the new process takes
 * over the dead process's leases at once, answers /health/ready only when its views are live,
 * and a write made right after ready is visible to the next read. Real processes, real sockets.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildService, startService, type ServiceBuild, type ServiceProcess } from '../support/service-process.js';

jest.setTimeout(180_000);

const ADMIN = 'restart-test-admin-token-0123456789';

async function call(service: ServiceProcess, method: string, path: string, token: string, body?: unknown) {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function ready(service: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await fetch(`${service.url}/health/ready`)).status !== 200) {
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a restart after SIGKILL', () => {
  let build: ServiceBuild;
  let dataDir: string;
  const running: ServiceProcess[] = [];
  beforeAll(async () => {
    build = await buildService('restart');
    dataDir = mkdtempSync(join(tmpdir(), 'monitor-restart-'));
  });
  afterAll(async () => {
    for (const service of running) await service.kill();
    build?.remove();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('is ready only with live views, and a write right after ready is visible to the next read', async () => {
    const env = { DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN };
    const first = await startService(build, env);
    running.push(first);
    await ready(first);
    const team = await call(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Restart' });
    expect(team.status).toBe(201);
    const token = await call(first, 'POST', `/api/v2/teams/${team.body.data.id}/tokens`, ADMIN, {
      name: 'editor',
      scopes: ['monitoring:read', 'incidents:read', 'incidents:write'],
      role: 'editor',
    });
    expect(token.status).toBe(201);
    const editor: string = token.body.data.token;
    const project = await call(first, 'POST', `/api/v2/teams/${team.body.data.id}/projects`, ADMIN, { name: 'P' });
    const created = await call(first, 'POST', '/api/public/v2/incidents', editor, { project_id: project.body.data.id, title: 'Before the crash' });
    expect(created.status).toBe(201);

    await first.kill('SIGKILL');
    const second = await startService(build, env);
    running.push(second);
    await ready(second);

    // Right after ready: the write is answered as done, and the next read sees it.
    const comment = await call(second, 'POST', `/api/public/v2/incidents/${created.body.data.id}/comments`, editor, { body: 'after restart' });
    expect(comment.status).toBe(201);
    const incident = await call(second, 'GET', `/api/public/v2/incidents/${created.body.data.id}`, editor);
    expect(incident.status).toBe(200);
    expect(JSON.stringify(incident.body.data)).toContain('after restart');
    const another = await call(second, 'POST', '/api/public/v2/incidents', editor, { project_id: project.body.data.id, title: 'After the restart' });
    expect(another.status).toBe(201);
    const listed = await call(second, 'GET', '/api/public/v2/incidents', editor);
    expect(listed.body.data.map((item: { title: string }) => item.title)).toContain('After the restart');
  });
});
