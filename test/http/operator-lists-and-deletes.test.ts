import { jest } from '@jest/globals';
import { startedBeforeAll } from '../support/started-before-all.js';
import { ALL_SCOPES, startTestApp } from '../support/test-app.js';
import { configuration, enableEndpoint, eventually, registerEndpoint, startTarget } from '../e2e/support.js';
import { createEndpoint, createProject } from '../support/monitoring-fixtures.js';
import { PROBING_VIEW, SCHEDULE } from '../../src/probing/views/probing/view.js';

jest.setTimeout(60_000);

const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

describe('GET /api/v2/teams', () => {
  it('lists every team in id order, page by page, for the admin token only', async () => {
    const created = [await t.createTeam('Alpha'), await t.createTeam('Beta'), await t.createTeam('Gamma')];
    const seen: Array<{ id: number; name: string; created_at: string }> = [];
    let cursor: string | null = null;
    do {
      const response = await t.admin('GET', `/api/v2/teams?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.data.length).toBeLessThanOrEqual(2);
      expect(body.pagination.has_more).toBe(body.pagination.next_cursor !== null);
      seen.push(...body.data);
      cursor = body.pagination.next_cursor;
    } while (cursor !== null);
    for (const team of created) expect(seen).toContainEqual({ id: team.id, name: team.name, created_at: expect.any(String) });
    const ids = seen.map((team) => team.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);

    const { token } = await t.issueToken(created[0].id, ALL_SCOPES);
    expect((await t.request('GET', '/api/v2/teams', { token })).statusCode).toBe(401);
    expect((await t.request('GET', '/api/v2/teams')).statusCode).toBe(401);
    const badLimit = await t.admin('GET', '/api/v2/teams?limit=101');
    expect(badLimit.statusCode).toBe(400);
    expect(badLimit.json().errors).toEqual([expect.objectContaining({ field: 'limit', code: 'out_of_range' })]);
    expect((await t.admin('GET', '/api/v2/teams?cursor=forged.cursor')).json().code).toBe('invalid_cursor');
  });
});

describe('GET /api/v2/teams/:teamID/tokens', () => {
  it("lists the team's tokens with scopes, role, expiry, revocation and last use, never the secret", async () => {
    const team = await t.createTeam('Tokens');
    const other = await t.createTeam('Other');
    const expires_at = new Date(Date.now() + 86_400_000).toISOString();
    const reader = await t.issueToken(team.id, ['monitoring:read'], 'viewer', { expires_at });
    const writer = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    await t.issueToken(other.id, ['monitoring:read']);
    expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/tokens/${writer.id}`)).statusCode).toBe(204);
    expect((await t.request('GET', '/api/public/v2/projects', { token: reader.token })).statusCode).toBe(200);

    // Use is recorded in the background: wait until the list shows it.
    const response = await eventually('the token use recorded', async () => {
      const listed = await t.admin('GET', `/api/v2/teams/${team.id}/tokens`);
      return listed.json().data[0]?.last_used_at ? listed : null;
    });
    expect(response.statusCode).toBe(200);
    const { data, pagination } = response.json();
    expect(pagination).toEqual({ next_cursor: null, has_more: false });
    expect(data).toEqual([
      { id: reader.id, team_id: team.id, name: 'test', scopes: ['monitoring:read'], role: 'viewer', created_at: expect.any(String), expires_at, revoked_at: null, last_used_at: expect.any(String) },
      { id: writer.id, team_id: team.id, name: 'test', scopes: ALL_SCOPES, role: 'editor', created_at: expect.any(String), expires_at: null, revoked_at: expect.any(String), last_used_at: null },
    ]);
    expect(response.body).not.toContain(reader.token);
    expect(response.body).not.toContain('token_hash');
    expect(response.body).not.toContain('mon_pat_');

    const firstPage = (await t.admin('GET', `/api/v2/teams/${team.id}/tokens?limit=1`)).json();
    expect(firstPage.data.map((token: { id: number }) => token.id)).toEqual([reader.id]);
    const second = await t.admin('GET', `/api/v2/teams/${team.id}/tokens?limit=1&cursor=${encodeURIComponent(firstPage.pagination.next_cursor)}`);
    expect(second.json().data.map((token: { id: number }) => token.id)).toEqual([writer.id]);
    // A cursor is bound to its team's list.
    expect((await t.admin('GET', `/api/v2/teams/${other.id}/tokens?cursor=${encodeURIComponent(firstPage.pagination.next_cursor)}`)).json().code).toBe('invalid_cursor');
    expect((await t.admin('GET', '/api/v2/teams/999999/tokens')).statusCode).toBe(404);
    expect((await t.request('GET', `/api/v2/teams/${team.id}/tokens`, { token: reader.token })).statusCode).toBe(401);
  });
});

describe('DELETE /api/v2/teams/:teamID/endpoints/:endpointID', () => {
  it('removes the endpoint from lists, reads and analytics comparisons, keeps its events and its incidents readable', async () => {
    const team = await t.createTeam('Deletes');
    const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    const project = await createProject(t, team.id);
    const kept = await createEndpoint(t, team.id, project.id, { name: 'Kept' });
    const doomed = await createEndpoint(t, team.id, project.id, { name: 'Doomed' });
    const imported = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${doomed.id}/checks/import`, {
      checks: [{ checked_at: new Date(Date.now() - 60_000).toISOString(), success: true, status_code: 200, latency_ms: 80 }],
    });
    expect(imported.statusCode).toBe(201);
    const incident = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: project.id, title: 'Doomed is slow', endpoint_ids: [doomed.id] } });
    expect(incident.statusCode).toBe(201);
    const incidentId = incident.json().data.id;

    const deleted = await t.admin('DELETE', `/api/v2/teams/${team.id}/endpoints/${doomed.id}`);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');

    const listed = (await t.request('GET', '/api/public/v2/endpoints', { token })).json().data.map((e: { id: number }) => e.id);
    expect(listed).toEqual([kept.id]);
    const inProject = (await t.request('GET', `/api/public/v2/projects/${project.id}/endpoints`, { token })).json().data.map((e: { id: number }) => e.id);
    expect(inProject).toEqual([kept.id]);
    for (const path of [`/api/public/v2/endpoints/${doomed.id}`, `/api/public/v2/endpoints/${doomed.id}/checks`, `/api/public/v2/endpoints/${doomed.id}/analytics`, `/api/public/v2/endpoints/${doomed.id}/alert-status`]) {
      const response = await t.request('GET', path, { token });
      expect([path, response.statusCode]).toEqual([path, 404]);
    }
    const analytics = (await t.request('GET', `/api/public/v2/projects/${project.id}/analytics`, { token })).json().data;
    expect(analytics.endpoints.map((row: { endpoint_id: number }) => row.endpoint_id)).toEqual([kept.id]);

    for (const [method, path, body] of [
      ['PATCH', `/api/v2/teams/${team.id}/endpoints/${doomed.id}`, { name: 'Back' }],
      ['POST', `/api/v2/teams/${team.id}/endpoints/${doomed.id}/checks`, undefined],
      ['POST', `/api/v2/teams/${team.id}/endpoints/${doomed.id}/verify-destination`, undefined],
      ['POST', `/api/v2/teams/${team.id}/endpoints/${doomed.id}/checks/import`, { checks: [{ checked_at: new Date().toISOString(), success: true, status_code: 200, latency_ms: 1 }] }],
      ['DELETE', `/api/v2/teams/${team.id}/endpoints/${doomed.id}`, undefined],
    ] as const) {
      const response = await t.admin(method, path, body);
      expect([method, path, response.statusCode, response.json().code]).toEqual([method, path, 404, 'not_found']);
    }
    const relinked = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: project.id, title: 'Again', endpoint_ids: [doomed.id] } });
    expect(relinked.statusCode).toBe(400);
    expect(relinked.json().errors).toEqual([expect.objectContaining({ field: 'endpoint_ids[0]', code: 'not_found' })]);

    const readable = await t.request('GET', `/api/public/v2/incidents/${incidentId}`, { token });
    expect(readable.statusCode).toBe(200);
    expect(readable.json().data.endpoint_ids).toEqual([doomed.id]);
    const endpointEvents = await t.platform.events.readStream(`endpoint-${doomed.id}`);
    expect(endpointEvents.at(-1)).toMatchObject({ type: 'EndpointDeleted', data: { endpoint_id: doomed.id, team_id: team.id, project_id: project.id } });
    expect(endpointEvents.at(-1)!.metadata.actor).toBeDefined();
    expect((await t.platform.events.readStream(`checks-${doomed.id}`)).map((e) => e.type)).toContain('CheckRecorded');
  });

  it('answers 404 for an endpoint of another team and leaves it alone', async () => {
    const owner = await t.createTeam('Owner');
    const other = await t.createTeam('Stranger');
    const project = await createProject(t, owner.id);
    const endpoint = await createEndpoint(t, owner.id, project.id);
    expect((await t.admin('DELETE', `/api/v2/teams/${other.id}/endpoints/${endpoint.id}`)).statusCode).toBe(404);
    expect((await t.platform.events.readStream(`endpoint-${endpoint.id}`)).map((e) => e.type)).not.toContain('EndpointDeleted');
    expect((await t.admin('DELETE', `/api/v2/teams/${owner.id}/endpoints/0`)).statusCode).toBe(404);
  });

  it('stops scheduled probes at once, including jobs already queued', async () => {
    const doomedTarget = await startTarget();
    const liveTarget = await startTarget();
    try {
      const team = await t.createTeam('Probed');
      const doomed = await registerEndpoint(t, team.id, configuration(`${doomedTarget.url}/doomed`, { interval_seconds: 1, timeout_seconds: 1 }));
      const live = await registerEndpoint(t, team.id, configuration(`${liveTarget.url}/live`, { interval_seconds: 1, timeout_seconds: 1 }));
      for (const [target, endpoint] of [[doomedTarget, doomed], [liveTarget, live]] as const) {
        target.tokens.set(endpoint.id, endpoint.token);
        expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`)).statusCode).toBe(200);
        await enableEndpoint(t, team.id, endpoint.id);
      }
      await eventually('a scheduled probe of the endpoint to delete', async () => doomedTarget.hits >= 1);

      expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/endpoints/${doomed.id}`)).statusCode).toBe(204);
      const hitsAtDeletion = doomedTarget.hits;
      expect(await t.platform.reader.get(PROBING_VIEW, SCHEDULE, doomed.id)).toBeNull();
      // A job published before the deletion and still queued is skipped, not probed.
      await t.platform.transport!.publish({
        jobId: `${doomed.id}:${Date.now()}`,
        teamId: team.id,
        endpointId: doomed.id,
        configurationVersion: 1,
        source: 'scheduled',
        scheduledAt: new Date().toISOString(),
      });
      const liveHits = liveTarget.hits;
      await eventually('three more scheduled probes of the live endpoint', async () => liveTarget.hits >= liveHits + 3);
      expect(doomedTarget.hits).toBe(hitsAtDeletion);
    } finally {
      await doomedTarget.close();
      await liveTarget.close();
    }
  });
});

describe('DELETE /api/v2/teams/:teamID/projects/:projectID', () => {
  it('refuses with 409 project_not_empty while endpoints remain, then deletes the emptied project', async () => {
    const team = await t.createTeam('Projects');
    const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    const project = await createProject(t, team.id, 'Doomed');
    const other = await createProject(t, team.id, 'Other');
    const endpoint = await createEndpoint(t, team.id, project.id);

    const refused = await t.admin('DELETE', `/api/v2/teams/${team.id}/projects/${project.id}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ status: 409, code: 'project_not_empty' });
    expect((await t.platform.events.readStream(`project-${project.id}`)).map((e) => e.type)).toEqual(['ProjectCreated']);

    // Moving the endpoint away empties it as well as deleting it would.
    expect((await t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`, { project_id: other.id })).statusCode).toBe(200);
    expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/projects/${project.id}`)).statusCode).toBe(204);

    expect((await t.request('GET', '/api/public/v2/projects', { token })).json().data.map((p: { id: number }) => p.id)).toEqual([other.id]);
    expect((await t.request('GET', `/api/public/v2/projects/${project.id}`, { token })).statusCode).toBe(404);
    expect((await t.request('GET', `/api/public/v2/projects/${project.id}/analytics`, { token })).statusCode).toBe(404);
    const teamRows = (await t.request('GET', '/api/public/v2/analytics', { token })).json().data.projects.map((row: { project_id: number }) => row.project_id);
    expect(teamRows).toEqual([other.id]);

    const intoDeleted = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints`, { project_id: project.id, name: 'Late', url: 'https://example.com/' });
    expect(intoDeleted.statusCode).toBe(400);
    expect(intoDeleted.json().errors).toEqual([expect.objectContaining({ field: 'project_id', code: 'not_found' })]);
    const incident = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: project.id, title: 'Late' } });
    expect(incident.statusCode).toBe(400);
    expect((await t.admin('PATCH', `/api/v2/teams/${team.id}/projects/${project.id}`, { name: 'Back' })).statusCode).toBe(404);
    expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/projects/${project.id}`)).statusCode).toBe(404);
    expect((await t.platform.events.readStream(`project-${project.id}`)).map((e) => e.type)).toEqual(['ProjectCreated', 'ProjectDeleted']);
  });
});
