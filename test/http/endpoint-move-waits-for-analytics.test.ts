/**
 * Read your writes across contexts: a PATCH that moves an endpoint to another project answers
 * only once project analytics count the endpoint in its new project (a check counts for its
 * endpoint's current project, docs/decisions.md "Analytics"). The analytics endpoints view is
 * held back here; the PATCH must wait for it instead of answering before a read would see it.
 */
import { jest } from '@jest/globals';
import { ANALYTICS_ENDPOINTS_PROJECTION } from '../../src/analytics/views/endpoints/view.js';
import { ENDPOINT_RECONFIGURED } from '../../src/monitoring/domain/events.js';
import type { Projection } from '../../src/platform/projections/projection.js';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

/** The analytics endpoints projection, whose endpoint changes wait until `release` is called. */
function heldBack(list: Projection[]): { list: Projection[]; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const wrapped = list.map((projection) => {
    if (projection.name !== ANALYTICS_ENDPOINTS_PROJECTION) return projection;
    const apply = projection.handlers[ENDPOINT_RECONFIGURED]!;
    return { ...projection, handlers: { ...projection.handlers, [ENDPOINT_RECONFIGURED]: async (...args: Parameters<typeof apply>) => { await gate; return apply(...args); } } };
  });
  return { list: wrapped, release };
}

describe('moving an endpoint', () => {
  let t: TestApp;
  let release: () => void = () => undefined;
  afterAll(async () => {
    release();
    await t?.close();
  });

  it('answers once the new project’s analytics list the endpoint', async () => {
    t = await startTestApp({}, { projections: (list) => { const held = heldBack(list); release = held.release; return held.list; } });
    const team = await t.createTeam('Movers');
    const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    const project = async (name: string) => (await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name })).json().data.id as number;
    const from = await project('From');
    const to = await project('To');
    const created = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: from, name: 'Mover', url: 'https://example.com/health' });
    expect(created.statusCode).toBe(201);
    const endpointId = created.json().data.id as number;

    const move = t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpointId}`, { project_id: to });
    setTimeout(() => release(), 300);
    expect((await move).statusCode).toBe(200);

    const rows = (await t.request('GET', `/api/public/v2/projects/${to}/analytics`, { token })).json().data.endpoints;
    expect(rows.map((row: { endpoint_id: number }) => row.endpoint_id)).toEqual([endpointId]);
  });
});
