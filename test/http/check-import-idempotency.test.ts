/**
 * A check import that fails midway (the store refuses a chunk's append) leaves some chunks in the
 * log; its retry with the same Idempotency-Key appends only the missing ones, with the same check
 * ids, so the endpoint ends with each imported check exactly once. Without a key a repeated import
 * is a new import.
 */
import { jest } from '@jest/globals';
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';
import { createEndpoint, createProject, importedCheck, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

jest.setTimeout(120_000);

describe('check import with an Idempotency-Key', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  async function listChecks(token: string, endpointId: number): Promise<any[]> {
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const response = await t.request('GET', `/api/public/v2/endpoints/${endpointId}/checks`, { token, query: { limit: '100', ...(cursor ? { cursor } : {}) } });
      expect(response.statusCode).toBe(200);
      seen.push(...response.json().data);
      cursor = response.json().pagination.next_cursor;
    } while (cursor);
    return seen;
  }

  /** Every append to a check stream after the first `allowed` fails like a store that went away. */
  function failChecksAppendsAfter(allowed: number): () => void {
    const events = t.platform.events as EventStore;
    const original = events.append.bind(events);
    let seen = 0;
    events.append = async (stream, batch, options) => {
      if (stream.startsWith('checks-') && ++seen > allowed) throw new Error('disk went away');
      return original(stream, batch, options);
    };
    return () => {
      events.append = original;
    };
  }

  const start = Date.parse('2031-03-01T00:00:00Z');
  const checks = (n: number) => Array.from({ length: n }, (_, i) => importedCheck(new Date(start + i * 60_000).toISOString(), { success: i % 7 !== 0 }));
  const importPath = (teamId: number, endpointId: number) => `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`;

  it('a retry after a failure midway appends only the missing chunks: each check once, same ids', async () => {
    const { teamId, token } = await readerTeam(t, 'Import once');
    const endpoint = await createEndpoint(t, teamId, (await createProject(t, teamId)).id);
    const body = { checks: checks(2300) };
    const headers = { 'idempotency-key': 'history-2031' };

    const restore = failChecksAppendsAfter(2);
    const failed = await t.request('POST', importPath(teamId, endpoint.id), { token: t.platform.adminToken, body, headers });
    restore();
    expect(failed.statusCode).toBe(500);
    const partial = await t.platform.events.readStream(`checks-${endpoint.id}`);
    expect(partial).toHaveLength(1000);

    const retried = await t.request('POST', importPath(teamId, endpoint.id), { token: t.platform.adminToken, body, headers });
    expect(retried.statusCode).toBe(201);
    expect(retried.json()).toEqual({ data: { imported: 2300 } });

    const listed = await listChecks(token, endpoint.id);
    expect(listed).toHaveLength(2300);
    const ids = listed.map((check) => check.id);
    expect(new Set(ids).size).toBe(2300);
    expect(Math.max(...ids) - Math.min(...ids)).toBe(2299);
    expect(ids).toEqual(expect.arrayContaining(partial.map((event) => (event.data as { check_id: number }).check_id)));

    const replayed = await t.request('POST', importPath(teamId, endpoint.id), { token: t.platform.adminToken, body, headers });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(await listChecks(token, endpoint.id)).toHaveLength(2300);
  });

  it('without a key the same import sent twice is two imports', async () => {
    const { teamId, token } = await readerTeam(t, 'Import twice');
    const endpoint = await createEndpoint(t, teamId, (await createProject(t, teamId)).id);
    const body = { checks: checks(600) };

    for (let i = 0; i < 2; i++) expect((await t.request('POST', importPath(teamId, endpoint.id), { token: t.platform.adminToken, body })).statusCode).toBe(201);

    const ids = (await listChecks(token, endpoint.id)).map((check) => check.id);
    expect(ids).toHaveLength(1200);
    expect(new Set(ids).size).toBe(1200);
  });
});
