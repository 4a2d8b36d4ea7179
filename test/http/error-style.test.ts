import { readFileSync } from 'node:fs';
import { FIELD_CODES, PROBLEM_CODES } from '../../src/platform/http/error-codes.js';
import { ADMIN_TOKEN, ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { createEndpoint, createProject, importedCheck } from '../support/monitoring-fixtures.js';

describe('one error style (issue 15, item 4)', () => {
  const t: TestApp = startedBeforeAll(() => startTestApp(), (app) => app.close());
  const f = startedBeforeAll(
    async () => {
      const team = await t.createTeam('Style');
      const { token } = await t.issueToken(team.id, ALL_SCOPES);
      const { token: reader } = await t.issueToken(team.id, ['monitoring:read'], 'viewer');
      const project = await createProject(t, team.id);
      const endpoint = await createEndpoint(t, team.id, project.id);
      const incident = (await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: project.id, title: 'x' } })).json().data;
      return { teamId: team.id as number, token, reader, projectId: project.id as number, endpointId: endpoint.id as number, incidentId: incident.id as number };
    },
    async () => undefined,
  );

  describe('field errors', () => {
    it('a rule about the whole body has no field, and the detail does not start with ": "', async () => {
      const response = await t.request('PATCH', `/api/public/v2/incidents/${f.incidentId}`, { token: f.token, body: {} });
      expect(response.statusCode).toBe(400);
      const body = response.json();
      expect(body.errors).toHaveLength(1);
      expect(body.errors[0]).not.toHaveProperty('field');
      expect(body.errors[0]).toMatchObject({ code: 'required', message: expect.stringMatching(/^at least one of /) });
      expect(body.detail).toMatch(/^at least one of /);
    });

    it('no message repeats its field name, in the incident rules, the DTO rules and the query rules', async () => {
      const answers = [
        await t.request('POST', '/api/public/v2/incidents', { token: f.token, body: { project_id: 'x', title: '', endpoint_ids: [0, -1], severity: 'loud', status: 'a', status_id: 1, colour: 1 } }),
        await t.request('POST', `/api/public/v2/incidents/${f.incidentId}/comments`, { token: f.token, body: { body: 7, pinned: 'yes' } }),
        await t.admin('POST', `/api/v2/teams/${f.teamId}/projects`, { name: '', description: 7, colour: 1 }),
        await t.admin('POST', `/api/v2/teams/${f.teamId}/endpoints/${f.endpointId}/checks/import`, { checks: [{ ...importedCheck('yesterday'), success: 'y' }] }),
        await t.request('GET', '/api/public/v2/incidents?limit=0&from=x', { token: f.token }),
        await t.request('GET', '/api/public/v2/analytics?from=x&buckets=0', { token: f.token }),
      ];
      for (const response of answers) {
        expect(response.statusCode).toBe(400);
        const errors = response.json().errors as Array<{ field?: string; code: string; message: string }>;
        expect(errors.length).toBeGreaterThan(0);
        for (const error of errors) {
          if ('field' in error) expect(error.field).not.toBe('');
          if (error.field) expect(error.message.startsWith(`${error.field} `)).toBe(false);
          expect(FIELD_CODES).toContain(error.code);
        }
      }
    });

    it('nested paths read checks[0].checked_at', async () => {
      const response = await t.admin('POST', `/api/v2/teams/${f.teamId}/endpoints/${f.endpointId}/checks/import`, { checks: [importedCheck('yesterday')] });
      expect(response.json().errors).toEqual([expect.objectContaining({ field: 'checks[0].checked_at', code: 'invalid_value' })]);
    });
  });

  describe('RateLimit headers on every answer to a developer token', () => {
    const expectRateLimit = (response: { headers: Record<string, unknown> }) => {
      expect(response.headers['ratelimit-limit']).toBeDefined();
      expect(response.headers['ratelimit-remaining']).toBeDefined();
      expect(response.headers['ratelimit-reset']).toBeDefined();
    };

    it('403 insufficient scope', async () => {
      const response = await t.request('GET', '/api/public/v2/incidents', { token: f.reader });
      expect(response.statusCode).toBe(403);
      expectRateLimit(response);
    });

    it('404 for an unknown route and for a missing resource, 405 for a wrong method', async () => {
      const unknown = await t.request('GET', '/api/public/v2/nothing-here', { token: f.token });
      expect(unknown.statusCode).toBe(404);
      expectRateLimit(unknown);
      const missing = await t.request('GET', '/api/public/v2/projects/999999', { token: f.token });
      expect(missing.statusCode).toBe(404);
      expectRateLimit(missing);
      const wrongMethod = await t.request('PUT', '/api/public/v2/projects', { token: f.token });
      expect(wrongMethod.statusCode).toBe(405);
      expectRateLimit(wrongMethod);
    });

    it('an unknown route with a spent quota is still 404 (only routes answer 429)', async () => {
      const small = await startTestApp({ RATE_LIMIT_PER_MINUTE: '2' });
      try {
        const team = await small.createTeam();
        const { token } = await small.issueToken(team.id, ['monitoring:read'], 'viewer');
        for (let i = 0; i < 2; i++) expect((await small.request('GET', '/api/public/v2/projects', { token })).statusCode).toBe(200);
        expect((await small.request('GET', '/api/public/v2/projects', { token })).statusCode).toBe(429);
        const unknown = await small.request('GET', '/api/public/v2/nothing-here', { token });
        expect(unknown.statusCode).toBe(404);
        expect(unknown.headers['ratelimit-remaining']).toBe('0');
      } finally {
        await small.close();
      }
    });

    it('an unknown route with a bad token is still 404 (no 401 for a route that does not exist)', async () => {
      const response = await t.request('GET', '/api/public/v2/nothing-here', { token: 'mon_pat_nope' });
      expect(response.statusCode).toBe(404);
    });
  });

  describe('Location on 201 answers', () => {
    it('names the created resource on every create route, and a replay keeps it', async () => {
      const team = await t.admin('POST', '/api/v2/teams', { name: 'L' });
      const teamId = team.json().data.id;
      expect(team.headers.location).toBe(`/api/v2/teams/${teamId}`);
      const token = await t.admin('POST', `/api/v2/teams/${teamId}/tokens`, { name: 'ci', scopes: ALL_SCOPES, role: 'editor' });
      expect(token.headers.location).toBe(`/api/v2/teams/${teamId}/tokens/${token.json().data.id}`);
      const project = await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'p' });
      expect(project.headers.location).toBe(`/api/v2/teams/${teamId}/projects/${project.json().data.id}`);
      const endpoint = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: project.json().data.id, name: 'e', url: 'https://example.com/' });
      const endpointId = endpoint.json().data.id;
      expect(endpoint.headers.location).toBe(`/api/v2/teams/${teamId}/endpoints/${endpointId}`);
      const window = await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { endpoint_id: endpointId, starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-01-02T00:00:00Z' });
      expect(window.headers.location).toBe(`/api/v2/teams/${teamId}/maintenance-windows/${window.json().data.id}`);
      const imported = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`, { checks: [importedCheck('2026-01-01T00:00:00Z')] });
      expect(imported.statusCode).toBe(201);
      expect(imported.headers.location).toBe(`/api/public/v2/endpoints/${endpointId}/checks`);

      const developer = token.json().data.token;
      const create = () => t.request('POST', '/api/public/v2/incidents', { token: developer, body: { project_id: project.json().data.id, title: 'x' }, headers: { 'idempotency-key': 'loc-1' } });
      const incident = await create();
      const incidentId = incident.json().data.id;
      expect(incident.headers.location).toBe(`/api/public/v2/incidents/${incidentId}`);
      const replay = await create();
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers.location).toBe(`/api/public/v2/incidents/${incidentId}`);
      const comment = await t.request('POST', `/api/public/v2/incidents/${incidentId}/comments`, { token: developer, body: { body: 'hi' } });
      expect(comment.headers.location).toBe(`/api/public/v2/incidents/${incidentId}/comments/${comment.json().data.id}`);
      const checkpoint = await t.request('POST', `/api/public/v2/incidents/${incidentId}/checkpoints`, { token: developer, body: { title: 'cp' } });
      expect(checkpoint.headers.location).toBe(`/api/public/v2/incidents/${incidentId}/checkpoints/${checkpoint.json().data.id}`);
    });
  });

  describe('the documented list of codes', () => {
    it('docs/architecture.md lists exactly the codes the service answers with', () => {
      const text = readFileSync(new URL('../../docs/architecture.md', import.meta.url), 'utf8');
      const section = text.slice(text.indexOf('### Error codes'), text.indexOf('### ', text.indexOf('### Error codes') + 4));
      const problemRows = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2], Number(m[1])]);
      expect(Object.fromEntries(problemRows)).toEqual(PROBLEM_CODES);
      const fieldRows = [...section.matchAll(/^\| `([a-z_]+)` \| [^|]+\|$/gm)].map((m) => m[1]);
      expect(fieldRows.sort()).toEqual([...FIELD_CODES].sort());
    });

    it('problem codes in answers come from the list', async () => {
      const answers = [
        await t.request('GET', '/api/public/v2/projects'),
        await t.request('GET', '/api/public/v2/projects', { token: 'bad' }),
        await t.request('POST', `/api/v2/teams/${f.teamId}/projects`, { token: ADMIN_TOKEN, body: '{', headers: { 'content-type': 'application/json' } }),
      ];
      for (const response of answers) expect(Object.keys(PROBLEM_CODES)).toContain(response.json().code);
    });
  });
});
