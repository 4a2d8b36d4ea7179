import { startSecondApi, type SecondApi } from '../support/second-api.js';
import { addCheckpoint, createPage, openIncident, pagesPath, statusTeam } from '../support/status-page-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

/** Two API processes on one DATA_DIR: the second has no projection runner and its own caches. */
describe('status pages across API processes', () => {
  let first: TestApp;
  let second: SecondApi;
  beforeAll(async () => {
    first = await startTestApp();
    second = await startSecondApi(first);
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  test('a slug claimed through one process is taken for the other, even when both ask at once', async () => {
    const team = await statusTeam(first, 0, 'Two processes');
    const body = (title: string) => ({ slug: 'shared', title, components: [] });
    const answers = await Promise.all([
      first.admin('POST', pagesPath(team.teamId), body('First')),
      second.request('POST', pagesPath(team.teamId), { token: 'test-admin-token-0123456789', body: body('Second') }),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409]);
    const later = await second.request('POST', pagesPath(team.teamId), { token: 'test-admin-token-0123456789', body: body('Third') });
    expect(later.statusCode).toBe(409);
  });

  test('a change written through one process shows at once on the other, cached page or not', async () => {
    const team = await statusTeam(first, 1, 'Caches');
    await createPage(first, team.teamId, { slug: 'fresh', title: 'Fresh', components: [{ endpoint_id: team.endpoints[0], name: 'Web' }] });
    const before = await second.request('GET', '/status/fresh/summary.json');
    expect(before.json().components[0].status).toBe('operational');
    const incident = await openIncident(first, team, { endpoint_ids: [team.endpoints[0]], severity: 'critical', title: 'Outage' });
    await addCheckpoint(first, team, incident.id, { title: 'We are on it' });
    // Requests arriving together share one look at the stamps: each must still see the change.
    const together = await Promise.all([1, 2, 3].map(() => second.request('GET', '/status/fresh/summary.json', { headers: { 'if-none-match': String(before.headers.etag) } })));
    for (const after of together) {
      expect(after.statusCode).toBe(200);
      expect(after.json().components[0].status).toBe('major_outage');
      expect(after.json().incidents[0].incident_updates[0].title).toBe('We are on it');
    }
    expect((await second.request('GET', '/status/fresh')).body).toContain('We are on it');
  });
});
