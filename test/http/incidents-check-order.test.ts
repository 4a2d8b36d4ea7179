/**
 * api-decisions, order of checks: authentication, scope/role, idempotency replay, path resource
 * (404), body and query validation, then the command. So a request naming an incident the
 * caller's team cannot see answers 404 even when its body or query is also wrong: the answer
 * never tells whether an id exists in another team, and never depends on the body to say so.
 */
import { ALL_SCOPES, type TestApp, startTestApp } from '../support/test-app.js';
import { createIncident, createProject, INCIDENTS, teamWithMonitoring, type TeamFixture } from '../support/incident-fixtures.js';

const UNKNOWN = 99_999_999;

describe('incident routes: a missing path resource is 404 before body and query validation', () => {
  let t: TestApp;
  let f: TeamFixture;
  /** An incident of another team, with a comment and a checkpoint. */
  const foreign = { id: 0, comment: 0, checkpoint: 0 };
  /** One of our incidents, for the unknown-comment/checkpoint cases. */
  let ours = 0;

  beforeAll(async () => {
    t = await startTestApp();
    f = await teamWithMonitoring(t);
    ours = (await createIncident(t, f)).id;
    const other = await t.createTeam('Other');
    const { token } = await t.issueToken(other.id, ALL_SCOPES, 'editor');
    const project = await createProject(t, other.id);
    foreign.id = (await t.request('POST', INCIDENTS, { token, body: { project_id: project, title: 'theirs' } })).json().data.id;
    foreign.comment = (await t.request('POST', `${INCIDENTS}/${foreign.id}/comments`, { token, body: { body: 'c' } })).json().data.id;
    foreign.checkpoint = (await t.request('POST', `${INCIDENTS}/${foreign.id}/checkpoints`, { token, body: { title: 'cp' } })).json().data.id;
  });
  afterAll(async () => {
    await t.close();
  });

  /** Every route with an incident id, each with a body that would fail validation. */
  const routes = (incident: number, comment: number, checkpoint: number): Array<[string, string, unknown]> => [
    ['GET', `${INCIDENTS}/${incident}`, undefined],
    ['PATCH', `${INCIDENTS}/${incident}`, { title: '', severity: 'apocalyptic' }],
    ['PATCH', `${INCIDENTS}/${incident}`, {}],
    ['PATCH', `${INCIDENTS}/${incident}/status`, { status: 'Identified', status_id: 1, resolved: 'yes' }],
    ['POST', `${INCIDENTS}/${incident}/merge`, { source_incident_ids: 'all of them' }],
    ['POST', `${INCIDENTS}/${incident}/comments`, { body: '' }],
    ['PATCH', `${INCIDENTS}/${incident}/comments/${comment}`, { pinned: 'sure' }],
    ['DELETE', `${INCIDENTS}/${incident}/comments/${comment}`, undefined],
    ['POST', `${INCIDENTS}/${incident}/checkpoints`, { title: 'x'.repeat(201) }],
    ['PATCH', `${INCIDENTS}/${incident}/checkpoints/${checkpoint}`, { title: '' }],
  ];

  async function expectEveryRouteNotFound(list: Array<[string, string, unknown]>): Promise<void> {
    const answers = [];
    for (const [method, url, body] of list) {
      const response = await t.request(method, url, { token: f.editor, body });
      answers.push([method, url, response.statusCode, response.json().code]);
    }
    expect(answers).toEqual(list.map(([method, url]) => [method, url, 404, 'not_found']));
  }

  it('an unknown incident with an invalid body is 404 on every route', async () => {
    await expectEveryRouteNotFound(routes(UNKNOWN, 1, 1));
  });

  it("another team's incident with an invalid body is 404 on every route, and it stays unchanged", async () => {
    const before = (await t.platform.events.readStream(`incident-${foreign.id}`)).length;
    await expectEveryRouteNotFound(routes(foreign.id, foreign.comment, foreign.checkpoint));
    expect(await t.platform.events.readStream(`incident-${foreign.id}`)).toHaveLength(before);
  });

  it('an unknown comment or checkpoint of a visible incident with an invalid body is 404', async () => {
    await expectEveryRouteNotFound([
      ['PATCH', `${INCIDENTS}/${ours}/comments/${UNKNOWN}`, { body: '' }],
      ['DELETE', `${INCIDENTS}/${ours}/comments/${UNKNOWN}`, undefined],
      ['PATCH', `${INCIDENTS}/${ours}/checkpoints/${UNKNOWN}`, { title: '' }],
      // Another team's comment/checkpoint ids under our incident are just as unknown.
      ['PATCH', `${INCIDENTS}/${ours}/comments/${foreign.comment}`, { body: '' }],
      ['PATCH', `${INCIDENTS}/${ours}/checkpoints/${foreign.checkpoint}`, { title: '' }],
    ]);
  });

  it('the same bodies on a visible incident are 400 (the 404s above are not hiding a broken route)', async () => {
    const comment = (await t.request('POST', `${INCIDENTS}/${ours}/comments`, { token: f.editor, body: { body: 'c' } })).json().data.id;
    const checkpoint = (await t.request('POST', `${INCIDENTS}/${ours}/checkpoints`, { token: f.editor, body: { title: 'cp' } })).json().data.id;
    const withBodies = routes(ours, comment, checkpoint).filter(([, , body]) => body !== undefined);
    const answers = [];
    for (const [method, url, body] of withBodies) answers.push([method, url, (await t.request(method, url, { token: f.editor, body })).statusCode]);
    expect(answers).toEqual(withBodies.map(([method, url]) => [method, url, 400]));
  });

  it('a merged incident refuses a write with 409 incident_merged before looking at its body', async () => {
    const target = (await t.request('POST', INCIDENTS, { token: f.editor, body: { project_id: f.projectId, title: 'target' } })).json().data.id;
    const source = (await t.request('POST', INCIDENTS, { token: f.editor, body: { project_id: f.projectId, title: 'source' } })).json().data.id;
    expect((await t.request('POST', `${INCIDENTS}/${target}/merge`, { token: f.editor, body: { source_incident_ids: [source] } })).statusCode).toBe(200);
    for (const [method, url, body] of [
      ['PATCH', `${INCIDENTS}/${source}`, { title: '' }],
      ['POST', `${INCIDENTS}/${source}/comments`, { body: '' }],
      ['PATCH', `${INCIDENTS}/${source}`, { title: 'renamed' }],
    ] as const) {
      const response = await t.request(method, url, { token: f.editor, body });
      expect([method, url, response.statusCode, response.json().code]).toEqual([method, url, 409, 'incident_merged']);
    }
  });

  it('the auditor history route: unknown or other-team incident with a bad `at` is 404; a visible one is 400', async () => {
    const history = (team: number, incident: number) => `/api/v2/teams/${team}/incidents/${incident}/history?at=yesterday`;
    const unknown = await t.admin('GET', history(f.teamId, UNKNOWN));
    const otherTeams = await t.admin('GET', history(f.teamId, foreign.id));
    const unknownTeam = await t.admin('GET', history(UNKNOWN, ours));
    expect([unknown.statusCode, otherTeams.statusCode, unknownTeam.statusCode]).toEqual([404, 404, 404]);
    const visible = await t.admin('GET', history(f.teamId, ours));
    expect(visible.statusCode).toBe(400);
    expect(visible.json().errors).toEqual([expect.objectContaining({ field: 'at', code: 'invalid_value' })]);
  });
});
