/**
 * The service (production build, child process) is killed with SIGKILL while it appends a
 * 10,000-check import sent with an Idempotency-Key: some chunks are in the log, the key was never
 * completed. After a restart the client retries with the same key: the restarted process knows
 * the claim's process is gone and runs the retry at once (no 409 while a stale period passes),
 * and the endpoint has exactly the 10,000 checks, each once, read through the public API.
 */
import { jest } from '@jest/globals';
import { join } from 'node:path';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { eventually, settled } from '../support/eventually.js';
import { callService, type ServiceProcess, type SuiteServices, suiteServices } from '../support/service-process.js';

jest.setTimeout(180_000);

const ADMIN = 'import-crash-admin-token-0123456789';
const CHECKS = 10_000;

describe('a check import killed midway', () => {
  let services: SuiteServices;
  beforeAll(async () => {
    services = await suiteServices('import-crash-');
  });
  afterAll(() => services?.close());

  /** Revision of the last event of the check stream, as another process sharing the files sees it. */
  async function checksHead(endpointId: number): Promise<number> {
    const store = new SqliteEventStore(join(services.dataDir, 'events.sqlite'));
    try {
      const [last] = await store.readStream(`checks-${endpointId}`, { direction: 'backwards', maxCount: 1 });
      return last ? last.revision : -1;
    } finally {
      await store.close();
    }
  }

  async function allChecks(service: ServiceProcess, token: string, endpointId: number): Promise<number[]> {
    const ids: number[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await callService(service, 'GET', `/api/public/v2/endpoints/${endpointId}/checks?${query}`, token);
      expect(page.status).toBe(200);
      ids.push(...page.body.data.map((check: { id: number }) => check.id));
      cursor = page.body.pagination.next_cursor;
    } while (cursor);
    return ids;
  }

  it('SIGKILL during a keyed import, restart, retry with the key: exactly 10,000 checks', async () => {
    const env = { ADMIN_TOKEN: ADMIN };
    const first = await services.start(env);
    const team = (await callService(first, 'POST', '/api/v2/teams', ADMIN, { name: 'Importers' })).body.data;
    const reader = (await callService(first, 'POST', `/api/v2/teams/${team.id}/tokens`, ADMIN, { name: 'r', scopes: ['monitoring:read'], role: 'viewer' })).body.data.token;
    const project = (await callService(first, 'POST', `/api/v2/teams/${team.id}/projects`, ADMIN, { name: 'Web' })).body.data;
    const endpoint = (await callService(first, 'POST', `/api/v2/teams/${team.id}/endpoints`, ADMIN, { project_id: project.id, name: 'Home', url: 'https://example.com/health' })).body.data;

    const start = Date.parse('2031-01-01T00:00:00Z');
    const checks = Array.from({ length: CHECKS }, (_, i) => ({ checked_at: new Date(start + i * 30_000).toISOString(), success: i % 11 !== 0, status_code: i % 11 ? 200 : 503, latency_ms: 80 + (i % 50) }));
    const path = `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`;
    const key = { 'idempotency-key': 'history-2031' };

    const inFlight = callService(first, 'POST', path, ADMIN, { checks }, key).catch(() => null);
    await eventually('the first chunk in the log', async () => (await checksHead(endpoint.id)) >= 0, { timeoutMs: 60_000, intervalMs: 5 });
    await first.kill('SIGKILL');
    expect(await inFlight).toBeNull();
    const partial = (await checksHead(endpoint.id)) + 1;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(CHECKS);

    const second = await services.start(env);
    const retried = await callService(second, 'POST', path, ADMIN, { checks }, key);
    // 201, or 202 views_behind on a loaded machine: the import is done, the views still applying it.
    expect([201, 202]).toContain(retried.status);
    if (retried.status === 201) expect(retried.body).toEqual({ data: { imported: CHECKS } });

    const ids = await settled(() => allChecks(second, reader, endpoint.id), (listed) => listed.length >= CHECKS, { timeoutMs: 60_000, intervalMs: 500 });
    expect(ids).toHaveLength(CHECKS);
    expect(new Set(ids).size).toBe(CHECKS);
    expect((await checksHead(endpoint.id)) + 1).toBe(CHECKS);
  });
});
