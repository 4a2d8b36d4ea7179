import { jest } from '@jest/globals';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { allEvents, configuration, monitorTarget, registerEndpoint, startTarget, type Target } from '../e2e/support.js';
import { ENDPOINTS, MONITORING_VIEW } from '../../src/monitoring/views/monitoring/view.js';

jest.setTimeout(30_000);

describe('manual checks, destination verification and alert status', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await target.close();
  });

  it('refuses verification with 422 verification_failed when the token does not match', async () => {
    const team = await t.createTeam();
    const endpoint = await registerEndpoint(t, team.id, configuration(`${target.url}/x`));
    target.tokens.set(endpoint.id, 'e'.repeat(64));
    const response = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`);
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({ code: 'verification_failed', status: 422 });
    expect((await t.platform.events.readStream(`endpoint-${endpoint.id}`)).map((e) => e.type)).not.toContain('DestinationVerified');
  });

  it('answers 404 for another team\'s endpoint on every route', async () => {
    const owner = await t.createTeam();
    const other = await t.createTeam();
    const endpoint = await registerEndpoint(t, owner.id, configuration(`${target.url}/x`));
    const { token } = await t.issueToken(other.id, ALL_SCOPES);
    expect((await t.admin('POST', `/api/v2/teams/${other.id}/endpoints/${endpoint.id}/checks`)).statusCode).toBe(404);
    expect((await t.admin('POST', `/api/v2/teams/${other.id}/endpoints/${endpoint.id}/verify-destination`)).statusCode).toBe(404);
    const status = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/alert-status`, { token });
    expect(status.statusCode).toBe(404);
    expect(status.json().code).toBe('not_found');
  });

  it('marks a check taken under a project maintenance window alert_suppressed, and one outside it not', async () => {
    const team = await t.createTeam();
    const endpoint = await monitorTarget(t, team.id, target, 'maintained', {}, { enabled: false });
    const checkNow = async () => (await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`)).json().data;
    expect((await checkNow()).alert_suppressed).toBe(false);

    const projectId = (await t.platform.reader.get(MONITORING_VIEW, ENDPOINTS, endpoint.id))!.project_id;
    const window = await t.admin('POST', `/api/v2/teams/${team.id}/maintenance-windows`, {
      project_id: projectId,
      starts_at: new Date(Date.now() - 60_000).toISOString(),
      ends_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(window.statusCode).toBe(201);
    expect((await checkNow()).alert_suppressed).toBe(true);

    expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/maintenance-windows/${window.json().data.id}`)).statusCode).toBe(204);
    expect((await checkNow()).alert_suppressed).toBe(false);
  });

  it('runs a manual check now, answers the public Check shape and leaves alert signals alone', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['monitoring:read']);
    const endpoint = await registerEndpoint(t, team.id, configuration(`${target.url}/manual`, { latency_trigger_count: 1, latency_trigger_window: 1 }));
    target.tokens.set(endpoint.id, endpoint.token);
    const refused = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('destination_not_verified');
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`)).statusCode).toBe(200);

    target.mode = { status: 500, delayMs: 0 };
    const response = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`);
    target.mode = { status: 200, delayMs: 0 };
    expect(response.statusCode).toBe(201);
    const check = response.json().data;
    expect(check).toMatchObject({ endpoint_id: endpoint.id, source: 'manual', success: false, status_code: 500, alert_suppressed: false, configuration_version: 1 });
    expect(check.failure_reason).toMatch(/^status: /);
    expect(check).not.toHaveProperty('response_excerpt');
    expect(typeof check.response_excerpt_omitted).toBe('boolean');

    const types = (await allEvents(t)).filter((e) => e.streamId === `checks-${endpoint.id}`).map((e) => e.type);
    expect(types).toEqual(['CheckRecorded']);
    const status = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/alert-status`, { token });
    expect(status.statusCode).toBe(200);
    expect(status.json().data).toEqual({
      team_id: team.id,
      endpoint_id: endpoint.id,
      latency_baseline: null,
      signals: [
        { type: 'availability', state: 'ok', since: null, incident_id: null },
        { type: 'latency', state: 'ok', since: null, incident_id: null },
      ],
      suppressed_by: [],
      suppressed_by_maintenance: [],
      failing_in_maintenance_since: null,
      recovered_in_maintenance_since: null,
      flapping: false,
    });
  });

  it('lists each check exactly as its check answered it: the source and whether an excerpt was kept', async () => {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['monitoring:read']);
    const endpoint = await monitorTarget(t, team.id, target, 'listed', {}, { enabled: false });
    const checkNow = async () => {
      const response = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks`);
      expect(response.statusCode).toBe(201);
      return response.json().data;
    };
    const answered = await checkNow();
    // No answer within the 1 s timeout: no body, so no excerpt.
    target.mode = { status: 200, delayMs: 3_000 };
    const timedOut = await checkNow();
    target.mode = { status: 200, delayMs: 0 };
    expect([answered.response_excerpt_omitted, timedOut.response_excerpt_omitted]).toEqual([true, false]);
    expect([answered.source, timedOut.source]).toEqual(['manual', 'manual']);

    const list = async (query: string) => {
      const response = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks${query}`, { token });
      expect(response.statusCode).toBe(200);
      return response.json().data;
    };
    expect(JSON.stringify(await list(''))).toBe(JSON.stringify([timedOut, answered]));
    expect(JSON.stringify(await list('?source=manual'))).toBe(JSON.stringify([timedOut, answered]));
    expect(await list('?source=scheduled')).toEqual([]);
    const one = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks/${answered.id}`, { token });
    expect(JSON.stringify(one.json().data)).toBe(JSON.stringify(answered));
  });
});
