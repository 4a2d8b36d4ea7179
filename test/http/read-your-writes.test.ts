/**
 * A write whose views do not catch up within the read-your-writes bound is not answered as if a
 * read would see it: 202 `views_behind` (documented), and the write itself is kept.
 */
import { jest } from '@jest/globals';
import { createProject } from '../support/incident-fixtures.js';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

describe('read-your-writes that time out', () => {
  let t: TestApp;
  /** Made while the views still follow the log; each test then stops them. */
  let secondTeam: { id: number };
  beforeAll(async () => {
    // The bound is a setting (READ_YOUR_WRITES_TIMEOUT_MS); the fixtures' writes still get theirs.
    t = await startTestApp({ READ_YOUR_WRITES_TIMEOUT_MS: '4000' });
    secondTeam = await t.createTeam('Behind too');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('answers 202 views_behind instead of a 201 a GET would contradict, and keeps the write', async () => {
    const team = await t.createTeam('Behind');
    const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    const projectId = await createProject(t, team.id);
    await t.platform.runner!.stop(); // the views stand still from here on

    const response = await t.request('POST', '/api/public/v2/incidents', { token, body: { project_id: projectId, title: 'Recorded, not yet shown' } });

    expect(response.statusCode).toBe(202);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toMatchObject({ status: 'accepted', code: 'views_behind', request_id: expect.any(String), detail: expect.stringContaining('within 4 s') });
    const events = await t.platform.events.readAll({ after: null, maxCount: 10_000 });
    expect(events.some((event) => event.type === 'IncidentOpened' && (event.data as { title: string }).title === 'Recorded, not yet shown')).toBe(true);
  });

  it('still hands over a token shown once when its issuance answers 202 views_behind', async () => {
    await t.platform.runner!.stop();
    const response = await t.admin('POST', `/api/v2/teams/${secondTeam.id}/tokens`, { name: 'late', scopes: ['incidents:read'], role: 'viewer' });
    expect(response.statusCode).toBe(202);
    expect(response.json()).toMatchObject({ code: 'views_behind', data: { name: 'late', token: expect.stringMatching(/^mon_pat_/) } });
  });
});
