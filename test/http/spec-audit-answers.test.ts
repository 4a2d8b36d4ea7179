/**
 * What a consumer's audit of the running service found (session 21, `spec`): answers that
 * contradicted the contract's conventions (api-decisions: order of checks, 404 vs 405, field
 * errors that say what is wrong). Each case failed before its fix.
 */
import { appWithIncidentTeam, createProject, createEndpoint } from '../support/incident-fixtures.js';
import { ALL_SCOPES } from '../support/test-app.js';

const UNKNOWN = 99_999_999;

describe('spec audit: answers a consumer meets', () => {
  const { t, f } = appWithIncidentTeam();
  /** Another team's project and endpoint: as unknown to f's token as ids that do not exist. */
  const foreign = { project: 0, endpoint: 0 };

  beforeAll(async () => {
    const other = await t.createTeam('Other');
    await t.issueToken(other.id, ALL_SCOPES, 'editor');
    foreign.project = await createProject(t, other.id);
    foreign.endpoint = await createEndpoint(t, other.id, foreign.project);
  });

  it('project and endpoint analytics answer 404 for a project or endpoint the token cannot see, before a bad query', async () => {
    const paths = [
      `/api/public/v2/projects/${foreign.project}/analytics?window=2h`,
      `/api/public/v2/projects/${UNKNOWN}/analytics?buckets=0`,
      `/api/public/v2/endpoints/${foreign.endpoint}/analytics?window=2h`,
      `/api/public/v2/endpoints/${UNKNOWN}/analytics?from=yesterday`,
      `/api/public/v2/endpoints/${UNKNOWN}/analytics?region=NOT_A_REGION`,
    ];
    const answers = [];
    for (const path of paths) {
      const response = await t.request('GET', path, { token: f.editor });
      answers.push([path, response.statusCode, response.json().code]);
    }
    expect(answers).toEqual(paths.map((path) => [path, 404, 'not_found']));
  });

  it('the same bad queries on a visible project or endpoint are still 400 (the 404s above hide no broken route)', async () => {
    const paths = [
      `/api/public/v2/projects/${f.projectId}/analytics?window=2h`,
      `/api/public/v2/endpoints/${f.endpoints[0]}/analytics?window=2h`,
      `/api/public/v2/endpoints/${f.endpoints[0]}/analytics?region=NOT_A_REGION`,
    ];
    const answers = [];
    for (const path of paths) answers.push([path, (await t.request('GET', path, { token: f.editor })).statusCode]);
    expect(answers).toEqual(paths.map((path) => [path, 400]));
  });

  it('a known path with a trailing slash is 404, not a 405 that lists the method it was asked with', async () => {
    const response = await t.request('GET', '/api/public/v2/projects/', { token: f.editor });
    expect([response.statusCode, response.json().code, response.headers.allow]).toEqual([404, 'not_found', undefined]);
    // A wrong method on the path as declared is still 405 with Allow.
    const wrongMethod = await t.request('DELETE', '/api/public/v2/projects', { token: f.editor });
    expect([wrongMethod.statusCode, wrongMethod.headers.allow]).toEqual([405, 'GET, HEAD']);
  });

  it('an id filter below 1 says it must be at least 1', async () => {
    const response = await t.request('GET', '/api/public/v2/endpoints?project_id=0', { token: f.editor });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors).toEqual([{ field: 'project_id', code: 'out_of_range', message: 'must be at least 1' }]);
  });
});
