import { createEndpoint, createProject, importChecks, importedCheck, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

/** GET endpoint and GET checks answer JSON text they serialise themselves: content types and errors stay as elsewhere. */
describe('public reads answered as JSON text', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  async function endpointWithChecks() {
    const team = await readerTeam(t);
    const project = await createProject(t, team.teamId);
    const endpoint = await createEndpoint(t, team.teamId, project.id);
    await importChecks(t, team.teamId, endpoint.id, [importedCheck('2026-01-01T00:00:00.000Z'), importedCheck('2026-01-01T00:01:00.000Z', { success: false, status_code: 503 })]);
    return { ...team, endpoint };
  }

  it('answers GET endpoint and GET checks as application/json with the same body on every call', async () => {
    const { token, endpoint } = await endpointWithChecks();
    for (const path of [`/api/public/v2/endpoints/${endpoint.id}`, `/api/public/v2/endpoints/${endpoint.id}/checks?limit=1`]) {
      const first = await t.request('GET', path, { token });
      const second = await t.request('GET', path, { token });
      expect(first.statusCode).toBe(200);
      expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(second.body).toBe(first.body);
      expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    }
    const page = (await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks?limit=1`, { token })).json();
    expect(page.data).toHaveLength(1);
    expect(page.pagination).toEqual({ next_cursor: expect.any(String), has_more: true });
    const next = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks?limit=1&cursor=${page.pagination.next_cursor}`, { token });
    expect(next.json()).toEqual({ data: [expect.objectContaining({ checked_at: '2026-01-01T00:00:00.000Z' })], pagination: { next_cursor: null, has_more: false } });
  });

  it('answers their errors as problem details', async () => {
    const { token, endpoint } = await endpointWithChecks();
    const other = await readerTeam(t, 'Other');
    const cases: Array<[string, string, number, string]> = [
      [`/api/public/v2/endpoints/${endpoint.id}`, other.token, 404, 'not_found'],
      [`/api/public/v2/endpoints/${endpoint.id}/checks`, other.token, 404, 'not_found'],
      [`/api/public/v2/endpoints/${endpoint.id}/checks?limit=0`, token, 400, 'validation_failed'],
      [`/api/public/v2/endpoints/${endpoint.id}/checks?cursor=forged.cursor`, token, 400, 'invalid_cursor'],
      [`/api/public/v2/endpoints/${endpoint.id}/checks`, 'mon_pat_unknown', 401, 'unauthenticated'],
    ];
    for (const [path, bearer, status, code] of cases) {
      const response = await t.request('GET', path, { token: bearer });
      expect([path, response.statusCode]).toEqual([path, status]);
      expect(response.headers['content-type']).toContain('application/problem+json');
      expect(response.json()).toMatchObject({ status, code, request_id: response.headers['x-request-id'] });
    }
  });
});
