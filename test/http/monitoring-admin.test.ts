import { createEndpoint, createProject, markVerified, readerTeam } from '../support/monitoring-fixtures.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp } from '../support/test-app.js';

describe('monitoring application API', () => {
  const t = startedBeforeAll(() => startTestApp(), (app) => app.close());

  it('creates a project and updates it', async () => {
    const { teamId } = await readerTeam(t);
    const created = await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'Shop', description: 'Storefront' });
    expect(created.statusCode).toBe(201);
    const project = created.json().data;
    expect(project).toMatchObject({ id: expect.any(Number), team_id: teamId, name: 'Shop', description: 'Storefront', under_maintenance: false, maintenance_window_ids: [] });
    const patched = await t.admin('PATCH', `/api/v2/teams/${teamId}/projects/${project.id}`, { name: 'Store' });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().data).toMatchObject({ id: project.id, name: 'Store', description: 'Storefront' });
  });

  it('creates endpoints disabled and unverified, with defaults and a verification challenge', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id, { url: 'https://user:pw@api.example.com:8443/status?key=v' });
    expect(endpoint).toMatchObject({
      project_id: project.id,
      url: 'https://api.example.com:8443/status',
      url_query_configured: true,
      method: 'GET',
      header_names: [],
      expected_status: 200,
      body_match_mode: 'none',
      enabled: false,
      destination_verified: false,
      destination_verified_at: null,
      latency_detection_mode: 'auto',
      latency_fixed_threshold_ms: null,
      latency_sensitivity: 3,
      latency_min_samples: 20,
      latency_trigger_count: 3,
      latency_trigger_window: 5,
      latency_recovery_count: 3,
      configuration_version: 1,
      maintenance_until: null,
    });
    expect(endpoint.verification_token).toMatch(/^[0-9a-f]{64}$/);
    expect(endpoint.verification_url).toBe(`https://api.example.com:8443/.well-known/monitor-verification/${endpoint.id}`);
  });

  it('refuses methods other than GET, HEAD and OPTIONS, fixed mode without threshold and a foreign project, all in one 400', async () => {
    const { teamId } = await readerTeam(t);
    const other = await readerTeam(t);
    const foreign = await createProject(t, other.teamId);
    const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: foreign.id, name: 'x', url: 'https://example.com', method: 'POST', latency_detection_mode: 'fixed' });
    expect(response.statusCode).toBe(400);
    expect(response.json().code).toBe('validation_failed');
    const fields = response.json().errors.map((e: any) => e.field);
    expect(fields).toContain('method');
    const fixed = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: foreign.id, name: 'x', url: 'https://example.com', latency_detection_mode: 'fixed' });
    expect(fixed.json().errors.map((e: any) => e.field).sort()).toEqual(['latency_fixed_threshold_ms', 'project_id']);
  });

  it('reports a missing field once as required, and a malformed header map with a stable code', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: project.id, url: 'https://example.com', headers: { 'X-Key': 42 } });
    expect(response.statusCode).toBe(400);
    const errors = response.json().errors.map((e: any) => `${e.field}:${e.code}`).sort();
    expect(errors).toEqual(['headers:invalid_value', 'name:required']);
  });

  it('bumps configuration_version by one per configuration change, and not for an unchanged value', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const url = `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`;
    expect((await t.admin('PATCH', url, { interval_seconds: 30 })).json().data.configuration_version).toBe(2);
    expect((await t.admin('PATCH', url, { name: 'Renamed', timeout_seconds: 5 })).json().data.configuration_version).toBe(3);
    expect((await t.admin('PATCH', url, { interval_seconds: 30 })).json().data.configuration_version).toBe(3);
    const fixed = (await t.admin('PATCH', url, { latency_detection_mode: 'fixed', latency_fixed_threshold_ms: 800 })).json().data;
    expect(fixed).toMatchObject({ configuration_version: 4, latency_detection_mode: 'fixed', latency_fixed_threshold_ms: 800 });
  });

  it('refuses to enable an unverified endpoint with 409 destination_not_verified, and enables a verified one', async () => {
    const { teamId } = await readerTeam(t);
    const project = await createProject(t, teamId);
    const endpoint = await createEndpoint(t, teamId, project.id);
    const url = `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`;
    const refused = await t.admin('PATCH', url, { enabled: true });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().code).toBe('destination_not_verified');
    await markVerified(t, teamId, endpoint.id);
    const enabled = await t.admin('PATCH', url, { enabled: true });
    expect(enabled.statusCode).toBe(200);
    expect(enabled.json().data).toMatchObject({ enabled: true, destination_verified: true, destination_verified_at: expect.any(String) });
  });

  it('refuses an empty PATCH body and answers another team’s ids with 404', async () => {
    const { teamId } = await readerTeam(t);
    const other = await readerTeam(t);
    const project = await createProject(t, other.teamId);
    const endpoint = await createEndpoint(t, other.teamId, project.id);
    expect((await t.admin('PATCH', `/api/v2/teams/${other.teamId}/endpoints/${endpoint.id}`, {})).statusCode).toBe(400);
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, { name: 'x' })).statusCode).toBe(404);
    expect((await t.admin('PATCH', `/api/v2/teams/${teamId}/projects/${project.id}`, { name: 'x' })).statusCode).toBe(404);
    expect((await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}/checks/import`, { checks: [] })).statusCode).toBe(404);
  });

  it('schedules a maintenance window, refuses ends_at before starts_at, and cancels it with 204', async () => {
    const { teamId } = await readerTeam(t);
    const bad = await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { starts_at: '2030-01-02T00:00:00Z', ends_at: '2030-01-01T00:00:00Z' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors.map((e: any) => e.field)).toEqual(['ends_at']);
    const created = await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { starts_at: '2030-01-01T00:00:00+02:00', ends_at: '2030-01-02T00:00:00Z', reason: 'Upgrade' });
    expect(created.statusCode).toBe(201);
    const window = created.json().data;
    expect(window).toEqual({ id: expect.any(Number), team_id: teamId, project_id: null, endpoint_id: null, starts_at: '2029-12-31T22:00:00.000Z', ends_at: '2030-01-02T00:00:00.000Z', reason: 'Upgrade', created_at: expect.any(String) });
    const deleted = await t.admin('DELETE', `/api/v2/teams/${teamId}/maintenance-windows/${window.id}`);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId + 1000}/maintenance-windows/${window.id}`)).statusCode).toBe(404);
  });
});
