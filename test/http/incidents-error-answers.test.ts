/**
 * The incidents routes' problem answers, whole (status, type, title, code, detail, errors), for
 * each kind of refusal: unknown incident, comment or checkpoint (404), a write to a merged
 * incident (409), broken rules from the body and from the domain (400).
 */
import { ALL_SCOPES } from '../support/test-app.js';
import { appWithIncidentTeam, createIncident, createProject, INCIDENTS } from '../support/incident-fixtures.js';

const UNKNOWN = 99_999_999;

describe('incident routes answer each refusal with the same problem', () => {
  const { t, f } = appWithIncidentTeam();

  async function answer(method: string, url: string, body?: unknown) {
    const response = await t.request(method, url, { token: f.editor, body });
    const { request_id, ...problem } = response.json();
    expect(request_id).toEqual(expect.any(String));
    return { status: response.statusCode, contentType: response.headers['content-type'], ...problem };
  }
  const notFound = (what: string) => ({
    status: 404,
    contentType: 'application/problem+json; charset=utf-8',
    type: 'about:blank',
    title: 'Not found',
    code: 'not_found',
    detail: `${what} does not exist.`,
  });
  const invalid = (detail: string, errors: unknown[]) => ({
    status: 400,
    contentType: 'application/problem+json; charset=utf-8',
    type: 'about:blank',
    title: 'Validation failed',
    code: 'validation_failed',
    detail,
    errors,
  });

  it('an incident the team does not have (unknown, or another team\'s) is "The incident"', async () => {
    const other = await t.createTeam('Other');
    const { token } = await t.issueToken(other.id, ALL_SCOPES, 'editor');
    const project = await createProject(t, other.id);
    const theirs = (await t.request('POST', INCIDENTS, { token, body: { project_id: project, title: 'theirs' } })).json().data.id;
    for (const id of [UNKNOWN, theirs]) {
      expect(await answer('PATCH', `${INCIDENTS}/${id}`, { title: 'x' })).toEqual(notFound('The incident'));
      expect(await answer('POST', `${INCIDENTS}/${id}/comments`, { body: 'x' })).toEqual(notFound('The incident'));
      expect(await answer('POST', `${INCIDENTS}/${id}/merge`, { source_incident_ids: [1] })).toEqual(notFound('The incident'));
    }
  });

  it('a comment or checkpoint the incident does not have is "The comment" / "The checkpoint"', async () => {
    const incident = await createIncident(t, f);
    expect(await answer('PATCH', `${INCIDENTS}/${incident.id}/comments/${UNKNOWN}`, { pinned: true })).toEqual(notFound('The comment'));
    expect(await answer('DELETE', `${INCIDENTS}/${incident.id}/comments/${UNKNOWN}`)).toEqual(notFound('The comment'));
    expect(await answer('PATCH', `${INCIDENTS}/${incident.id}/checkpoints/${UNKNOWN}`, { title: 'x' })).toEqual(notFound('The checkpoint'));
  });

  it('a write to a merged incident is 409 incident_merged, naming where to write instead', async () => {
    const [target, source] = [await createIncident(t, f), await createIncident(t, f)];
    const merged = await t.request('POST', `${INCIDENTS}/${target.id}/merge`, { token: f.editor, body: { source_incident_ids: [source.id] } });
    expect(merged.statusCode).toBe(200);
    expect(await answer('PATCH', `${INCIDENTS}/${source.id}/status`, { resolved: false })).toEqual({
      status: 409,
      contentType: 'application/problem+json; charset=utf-8',
      type: 'about:blank',
      title: 'Conflict',
      code: 'incident_merged',
      detail: `Incident ${source.id} was merged into incident ${target.id} and accepts no further changes; write to incident ${target.id} instead.`,
    });
  });

  it('broken rules, from the body and from the team\'s data, are one 400', async () => {
    expect(await answer('POST', INCIDENTS, { project_id: UNKNOWN, title: '', severity: 'apocalyptic' })).toEqual(
      invalid('title: must have at least 1 character (and 2 more)', [
        { field: 'title', code: 'too_short', message: 'must have at least 1 character' },
        { field: 'severity', code: 'invalid_value', message: 'must be one of the following values: warning, critical' },
        { field: 'project_id', code: 'not_found', message: `project ${UNKNOWN} does not exist` },
      ]),
    );
    const incident = await createIncident(t, f);
    expect(await answer('PATCH', `${INCIDENTS}/${incident.id}/status`, { status: 'Nonsense' })).toEqual(
      invalid('status: no incident status is named "Nonsense" (names match exactly)', [
        { field: 'status', code: 'not_found', message: 'no incident status is named "Nonsense" (names match exactly)' },
      ]),
    );
    expect(await answer('POST', `${INCIDENTS}/${incident.id}/comments`, {})).toEqual(invalid('body: is required', [{ field: 'body', code: 'required', message: 'is required' }]));
    expect(await answer('POST', `${INCIDENTS}/${incident.id}/merge`, { source_incident_ids: [incident.id, UNKNOWN] })).toEqual(
      invalid('source_incident_ids[0]: the target incident cannot be one of its own sources (and 1 more)', [
        { field: 'source_incident_ids[0]', code: 'conflict', message: 'the target incident cannot be one of its own sources' },
        { field: 'source_incident_ids[1]', code: 'not_found', message: `incident ${UNKNOWN} does not exist` },
      ]),
    );
  });
});
