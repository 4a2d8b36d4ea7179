/**
 * An upgrade that changes what readers rely on (analytics rollups v9: the raw rows gained
 * `outcome` and every check) leaves the old generation serving until the rebuild swaps in. This
 * code cannot read those rows: the checks list and a check by id answer 503 `unavailable` with
 * Retry-After instead of an empty or wrong page, and answer as before once the serving
 * generation is readable again. Simulated here by pointing the registry at version 8.
 */
import { ROLLUPS_PROJECTION } from '../../src/analytics/views/rollups/view.js';
import { ProjectionRegistry } from '../../src/platform/projections/registry.js';
import { eventually } from '../support/eventually.js';
import { createEndpoint, createProject, importChecks, importedCheck, readerTeam } from '../support/monitoring-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { startedBeforeAll } from '../support/started-before-all.js';

describe('a view whose serving generation this version cannot read', () => {
  const t = startedBeforeAll(() => startTestApp(), (started) => started.close());

  it('answers 503 unavailable with Retry-After while it is rebuilt, then the same list as before', async () => {
    const { teamId, token } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    await importChecks(t, teamId, endpoint.id, [importedCheck('2030-01-01T00:00:00Z'), importedCheck('2030-01-01T00:10:00Z', { source: 'manual' })]);
    const list = `/api/public/v2/endpoints/${endpoint.id}/checks`;
    const before = await t.request('GET', list, { token });
    expect(before.statusCode).toBe(200);
    const checks = before.json().data;
    expect(checks).toHaveLength(2);

    const registry = new ProjectionRegistry(t.platform.views);
    const current = await registry.pointer(ROLLUPS_PROJECTION);
    expect(current).not.toBeNull();
    await t.platform.views.commit([registry.pointerWrite({ ...current!, version: 8 })]);

    const refused = await eventually('the list refused', async () => {
      const response = await t.request('GET', list, { token });
      return response.statusCode === 503 ? response : null;
    });
    expect(refused.json()).toMatchObject({ status: 503, code: 'unavailable', detail: 'A view this route reads is being rebuilt after an upgrade. Retry shortly.' });
    expect(refused.headers['retry-after']).toBe('30');
    const one = await t.request('GET', `${list}/${checks[0].id}`, { token });
    expect(one.statusCode).toBe(503);
    // Analytics read the raw rows through their own (off-thread) reader: refused the same way.
    const edges = `from=${encodeURIComponent('2029-12-31T23:59:30Z')}&to=${encodeURIComponent('2030-01-01T00:20:30Z')}&buckets=1`;
    const analyst = await t.issueToken(teamId, ['analytics:read'], 'viewer');
    const analytics = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/analytics?${edges}`, { token: analyst.token });
    expect(analytics.statusCode).toBe(503);

    await t.platform.views.commit([registry.pointerWrite(current!)]);
    const after = await eventually('the list served again', async () => {
      const response = await t.request('GET', list, { token });
      return response.statusCode === 200 ? response : null;
    });
    expect(after.json().data).toEqual(checks);
  }, 60_000);
});
