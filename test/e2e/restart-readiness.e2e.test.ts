/**
 * Ready means ready: after a SIGKILL and a restart on the same data dir, the new process takes
 * over the dead process's leases at once, answers /health/ready only when its views are live,
 * and a write made right after ready is visible to the next read. Real processes, real sockets.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { incidentStreamId } from '../../src/incidents/domain/events.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { eventually } from '../support/eventually.js';
import { callService, type ServiceProcess, suiteServices } from '../support/service-process.js';
import { startedBeforeAll } from '../support/started-before-all.js';

jest.setTimeout(180_000);

const ADMIN = 'restart-test-admin-token-0123456789';

/** A team with an editor token, a project and an incident, made through a running service. */
async function provision(service: ServiceProcess) {
  const team = await callService(service, 'POST', '/api/v2/teams', ADMIN, { name: 'Restart' });
  expect(team.status).toBe(201);
  const token = await callService(service, 'POST', `/api/v2/teams/${team.body.data.id}/tokens`, ADMIN, {
    name: 'editor',
    scopes: ['monitoring:read', 'incidents:read', 'incidents:write'],
    role: 'editor',
  });
  expect(token.status).toBe(201);
  const editor: string = token.body.data.token;
  const project = await callService(service, 'POST', `/api/v2/teams/${team.body.data.id}/projects`, ADMIN, { name: 'P' });
  const incident = await callService(service, 'POST', '/api/public/v2/incidents', editor, { project_id: project.body.data.id, title: 'Before the crash' });
  expect(incident.status).toBe(201);
  return { editor, projectId: project.body.data.id as number, incidentId: incident.body.data.id as number };
}

describe('a restart after SIGKILL', () => {
  const services = startedBeforeAll(() => suiteServices('monitor-restart-'), (started) => started.close());

  it('is ready only with live views, and a write right after ready is visible to the next read', async () => {
    const env = { ADMIN_TOKEN: ADMIN };
    const first = await services.start(env);
    await first.ready();
    const { editor, projectId, incidentId } = await provision(first);
    const created = { body: { data: { id: incidentId } } };
    const project = { body: { data: { id: projectId } } };

    await first.kill('SIGKILL');
    const second = await services.start(env);
    await second.ready();

    // Right after ready: the write is answered as done, and the next read sees it.
    const comment = await callService(second, 'POST', `/api/public/v2/incidents/${created.body.data.id}/comments`, editor, { body: 'after restart' });
    expect(comment.status).toBe(201);
    const incident = await callService(second, 'GET', `/api/public/v2/incidents/${created.body.data.id}`, editor);
    expect(incident.status).toBe(200);
    expect(JSON.stringify(incident.body.data)).toContain('after restart');
    const another = await callService(second, 'POST', '/api/public/v2/incidents', editor, { project_id: project.body.data.id, title: 'After the restart' });
    expect(another.status).toBe(201);
    const listed = await callService(second, 'GET', '/api/public/v2/incidents', editor);
    expect(listed.body.data.map((item: { title: string }) => item.title)).toContain('After the restart');
  });

  it('gives one effect for any number of retries of one Idempotency-Key, even when the first attempt died after its append', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitor-idempotency-'));
    try {
      const env = { DATA_DIR: dir, ADMIN_TOKEN: ADMIN };
      const first = await services.start(env);
      await first.ready();
      const { editor, incidentId } = await provision(first);
      await first.kill('SIGTERM');

      // An API process with no projector: the comment is appended, then the answer waits for views
      // that never come, and the process dies in that wait: appended, key never completed.
      const api = await services.start({ ...env, ROLE: 'api' });
      const key = { 'idempotency-key': 'comment-once' };
      const inFlight = callService(api, 'POST', `/api/public/v2/incidents/${incidentId}/comments`, editor, { body: 'exactly once' }, key).catch(() => null);
      const appended = async () => {
        const log = new SqliteEventStore(join(dir, 'events.sqlite'));
        try {
          return (await log.readStream(incidentStreamId(incidentId))).some((event) => event.metadata.idempotency_key?.endsWith(':comment-once'));
        } finally {
          await log.close();
        }
      };
      await eventually('the comment in the log', appended);
      await api.kill('SIGKILL');
      expect(await inFlight).toBeNull();

      // The restarted process knows the claim's process is gone: the retry runs at once, no 409.
      const restarted = await services.start(env);
      await restarted.ready();
      const retry = () => callService(restarted, 'POST', `/api/public/v2/incidents/${incidentId}/comments`, editor, { body: 'exactly once' }, key);
      const second = await retry();
      expect(JSON.stringify(second)).toMatch(/^{"status":201/);
      const third = await retry();
      expect(third.status).toBe(201);
      expect(third.replayed).toBe(true);
      expect(third.body).toEqual(second.body);

      const incident = await callService(restarted, 'GET', `/api/public/v2/incidents/${incidentId}`, editor);
      const comments = incident.body.data.comments.filter((comment: { body: string }) => comment.body === 'exactly once');
      expect(comments).toHaveLength(1);
      expect(comments[0].id).toBe(second.body.data.id);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
