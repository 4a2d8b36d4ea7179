import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { createEndpoint, createProject } from '../support/monitoring-fixtures.js';

/** Shaped like RFC 3339 but naming no instant: each must be refused, never rolled over. */
const IMPOSSIBLE = [
  '2026-02-30T00:00:00Z',
  '2025-02-29T00:00:00Z',
  '2026-04-31T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-00-10T00:00:00Z',
  '2026-01-00T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:60:00Z',
  '2026-01-01T23:59:60Z',
  '2026-01-01T00:00:00+24:00',
  '2026-01-01T00:00:00+01:60',
];

describe('impossible dates are 400 on every route that takes a timestamp (one strict parser)', () => {
  const t: TestApp = startedBeforeAll(() => startTestApp(), (app) => app.close());
  const fixture = startedBeforeAll(
    async () => {
      const team = await t.createTeam('Dates');
      const { token } = await t.issueToken(team.id, ALL_SCOPES);
      const project = await createProject(t, team.id);
      const endpoint = await createEndpoint(t, team.id, project.id);
      const incident = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: project.id, title: 'x' } });
      return { teamId: team.id as number, token, projectId: project.id as number, endpointId: endpoint.id as number, incidentId: incident.json().data.id as number };
    },
    async () => undefined,
  );

  const routes: Array<[string, (f: typeof fixture) => { path: string; params: string[]; admin?: boolean; base?: Record<string, string> }]> = [
    ['endpoint checks', (f) => ({ path: `/api/public/v2/endpoints/${f.endpointId}/checks`, params: ['from', 'to'] })],
    ['incidents list', (f) => ({ path: '/api/public/v2/incidents', params: ['from', 'to'] })],
    ['team analytics', () => ({ path: '/api/public/v2/analytics', params: ['from', 'to'], base: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } })],
    ['project analytics', (f) => ({ path: `/api/public/v2/projects/${f.projectId}/analytics`, params: ['from', 'to'], base: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } })],
    ['endpoint analytics', (f) => ({ path: `/api/public/v2/endpoints/${f.endpointId}/analytics`, params: ['from', 'to'], base: { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' } })],
    ['incident history (admin)', (f) => ({ path: `/api/v2/teams/${f.teamId}/incidents/${f.incidentId}/history`, params: ['at'], admin: true })],
  ];

  it.each(routes)('%s: a valid timestamp with an offset is accepted', async (_name, route) => {
    const r = route(fixture);
    for (const param of r.params) {
      const query = { ...(r.base ?? {}), [param]: '2026-01-01T12:30:00.123456+02:00' };
      if (param === 'to' && r.base) query.from = '2026-01-01T00:00:00Z';
      const response = r.admin ? await t.request('GET', r.path, { token: 'test-admin-token-0123456789', query }) : await t.request('GET', r.path, { token: fixture.token, query });
      expect(response.statusCode).toBe(200);
    }
  });

  it.each(routes)('%s: every impossible date is a 400 naming the parameter', async (_name, route) => {
    const r = route(fixture);
    for (const param of r.params) {
      for (const value of IMPOSSIBLE) {
        const query = { ...(r.base ?? {}), [param]: value };
        const response = r.admin ? await t.request('GET', r.path, { token: 'test-admin-token-0123456789', query }) : await t.request('GET', r.path, { token: fixture.token, query });
        expect([param, value, response.statusCode]).toEqual([param, value, 400]);
        expect(response.json().errors).toContainEqual(expect.objectContaining({ field: param, code: 'invalid_value' }));
      }
    }
  });

  it('the reported bug: GET checks?to=2026-02-30T00:00:00Z answers 400 like analytics', async () => {
    const response = await t.request('GET', `/api/public/v2/endpoints/${fixture.endpointId}/checks?to=2026-02-30T00:00:00Z`, { token: fixture.token });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([expect.objectContaining({ field: 'to', code: 'invalid_value' })]);
  });
});
