/**
 * GET /api/v2/teams/:teamID/audit/verify (docs/audit.md): the team's hash chains walked as stored.
 * Intact after real API writes; an event edited in events.sqlite while the service runs is named
 * with its stream and revision; other teams' streams are not the team's report.
 */
import { join } from 'node:path';
import { streamRow, tamperWithLog } from '../support/event-store-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { auditedIncident } from '../support/incident-fixtures.js';

describe('GET /api/v2/teams/:teamID/audit/verify', () => {
  let t: TestApp;
  let teamId: number;
  let otherTeamId: number;
  let token: string;
  let incidentId: number;

  beforeAll(async () => {
    t = await startTestApp();
    ({ teamId, token, incidentId } = await auditedIncident(t, { comment: true }));
    otherTeamId = (await t.createTeam('Bystander')).id;
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it("answers intact for the team's streams as written, then names an event edited in the file", async () => {
    const intact = await t.admin('GET', `/api/v2/teams/${teamId}/audit/verify`);
    expect(intact.statusCode).toBe(200);
    const report = intact.json().data;
    expect(report).toEqual({ intact: true, streams_checked: expect.any(Number), events_checked: expect.any(Number), broken: [] });
    expect(report.streams_checked).toBeGreaterThanOrEqual(3);
    expect(report.events_checked).toBeGreaterThanOrEqual(report.streams_checked);

    const edit = `UPDATE event_log SET data = replace(data, 'Checkout down', 'Checkout fine') WHERE ${streamRow(`incident-${incidentId}`)} AND revision = 0`;
    expect(tamperWithLog(join(t.dataDir, 'events.sqlite'), edit)).toBe(1);

    const broken = (await t.admin('GET', `/api/v2/teams/${teamId}/audit/verify`)).json().data;
    expect(broken).toMatchObject({ intact: false, broken: [{ stream: `incident-${incidentId}`, revision: 0, problem: 'altered' }] });
    // The other team's streams hold none of it.
    expect((await t.admin('GET', `/api/v2/teams/${otherTeamId}/audit/verify`)).json().data).toMatchObject({ intact: true, broken: [] });
  });

  it('is for the admin token only, and for teams that exist', async () => {
    expect((await t.request('GET', `/api/v2/teams/${teamId}/audit/verify`, { token })).statusCode).toBe(401);
    expect((await t.admin('GET', '/api/v2/teams/9999/audit/verify')).statusCode).toBe(404);
  });
});
