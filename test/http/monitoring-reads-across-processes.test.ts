import { importChecks, importedCheck, readerTeam } from '../support/monitoring-fixtures.js';
import { startSecondApi, type SecondApi } from '../support/second-api.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * Public reads in one API process right after writes acknowledged by another process sharing the
 * store: what the reader sees must never be older than what the writer was told.
 */
describe('public monitoring reads after writes through another API process', () => {
  let reader: TestApp;
  let writer: SecondApi;
  beforeAll(async () => {
    reader = await startTestApp();
    writer = await startSecondApi(reader);
  });
  afterAll(async () => {
    await writer.close();
    await reader.close();
  });

  const admin = async (method: string, url: string, body?: unknown) => {
    const response = await writer.request(method, url, { token: ADMIN_TOKEN, body });
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.body === '' ? null : response.json().data;
  };

  async function endpointOf(teamId: number) {
    const project = await admin('POST', `/api/v2/teams/${teamId}/projects`, { name: 'Web' });
    return admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: project.id, name: 'Home', url: 'https://example.com/health' });
  }

  it('shows a reconfigured endpoint at once', async () => {
    const { teamId, token } = await readerTeam(reader);
    const endpoint = await endpointOf(teamId);
    const path = `/api/public/v2/endpoints/${endpoint.id}`;
    for (let i = 0; i < 2; i++) expect((await reader.request('GET', path, { token })).json().data).toMatchObject({ name: 'Home', configuration_version: 1 });
    const updated = await admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}`, { name: 'Home page', interval_seconds: 120 });
    const seen = (await reader.request('GET', path, { token })).json().data;
    expect(seen).toMatchObject({ name: 'Home page', interval_seconds: 120, configuration_version: updated.configuration_version });
    expect(seen.configuration_version).toBe(2);
  });

  it('shows maintenance coverage of an endpoint as soon as a window is scheduled or cancelled', async () => {
    const { teamId, token } = await readerTeam(reader);
    const endpoint = await endpointOf(teamId);
    const path = `/api/public/v2/endpoints/${endpoint.id}`;
    const coverage = async () => {
      const data = (await reader.request('GET', path, { token })).json().data;
      return { under_maintenance: data.under_maintenance, maintenance_window_ids: data.maintenance_window_ids };
    };
    expect(await coverage()).toEqual({ under_maintenance: false, maintenance_window_ids: [] });
    const window = await admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, {
      endpoint_id: endpoint.id,
      starts_at: new Date(Date.now() - 60_000).toISOString(),
      ends_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    expect(await coverage()).toEqual({ under_maintenance: true, maintenance_window_ids: [window.id] });
    await admin('DELETE', `/api/v2/teams/${teamId}/maintenance-windows/${window.id}`);
    expect(await coverage()).toEqual({ under_maintenance: false, maintenance_window_ids: [] });
  });

  it('ends coverage when a window ends, without any write', async () => {
    const { teamId, token } = await readerTeam(reader);
    const endpoint = await endpointOf(teamId);
    const path = `/api/public/v2/endpoints/${endpoint.id}`;
    const window = await admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, {
      starts_at: new Date(Date.now() - 60_000).toISOString(),
      ends_at: new Date(Date.now() + 1_000).toISOString(),
    });
    expect((await reader.request('GET', path, { token })).json().data.maintenance_window_ids).toEqual([window.id]);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await reader.request('GET', path, { token })).json().data).toMatchObject({ under_maintenance: false, maintenance_window_ids: [] });
  });

  it('lists checks imported through the other process on the first page at once', async () => {
    const { teamId, token } = await readerTeam(reader);
    const endpoint = await endpointOf(teamId);
    const path = `/api/public/v2/endpoints/${endpoint.id}/checks`;
    const hour = (h: number) => new Date(Date.UTC(2026, 0, 1, h)).toISOString();
    await importChecks(reader, teamId, endpoint.id, [importedCheck(hour(1)), importedCheck(hour(2))]);
    const before = (await reader.request('GET', path, { token })).json().data;
    expect(before.map((c: any) => c.checked_at)).toEqual([hour(2), hour(1)]);
    await admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpoint.id}/checks/import`, { checks: [importedCheck(hour(3), { success: false, status_code: 500 })] });
    const after = (await reader.request('GET', path, { token })).json().data;
    expect(after.map((c: any) => [c.checked_at, c.success])).toEqual([
      [hour(3), false],
      [hour(2), true],
      [hour(1), true],
    ]);
    expect(after.slice(1)).toEqual(before);
  });
});
