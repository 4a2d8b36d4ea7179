/**
 * Team analytics take `health` and each project row's `enabled_endpoints` from per-project
 * counts that the analytics endpoints view keeps as endpoints change, not from reading every
 * endpoint. These follow one team through every change that moves an endpoint between counts
 * (a first check, up -> down, an older check arriving late, disable and enable, a move between
 * projects, a deletion) and a rebuild of the view, and hold the team object to what each
 * project object shows (which lists every endpoint) and to the expected counts.
 */
import { analyticsWorld, iso } from '../support/analytics-fixtures.js';

const T0 = Date.parse('2025-10-01T00:00:00.000Z');
const MIN = 60_000;

interface Health {
  enabled_endpoints: number;
  healthy_endpoints: number;
  failing_endpoints: number;
  unchecked_endpoints: number;
}

const counts = (enabled: number, healthy: number, failing: number, unchecked: number): Health => ({
  enabled_endpoints: enabled,
  healthy_endpoints: healthy,
  failing_endpoints: failing,
  unchecked_endpoints: unchecked,
});

describe('team analytics health counts', () => {
  const { w, t } = analyticsWorld();
  // Each look uses a window of its own: an object that took long to compute may be served again
  // for a moment after a write (AnalyticsReads), and health does not depend on the window.
  let look = 0;
  const query = () => `from=${encodeURIComponent(iso(T0))}&to=${encodeURIComponent(iso(T0 + 60 * MIN + look++))}`;

  it('follow a first check, up -> down, disable/enable, a move, a deletion and a rebuild, as the project objects count them', async () => {
    const { teamId, token } = await w.team('Counted');
    const a = await w.project(teamId, 'A');
    const b = await w.project(teamId, 'B');
    const api = await w.endpoint(teamId, a, 'API');
    await w.endpoint(teamId, a, 'Never enabled', false);
    const web = await w.endpoint(teamId, b, 'Web');

    const get = async (path: string) => {
      const response = await t.request('GET', `${path}?${query()}`, { token });
      expect(response.statusCode).toBe(200);
      return response.json().data;
    };
    /** The team object against the expected counts, and against the project objects' own health. */
    const expectHealth = async (perProject: Record<number, Health>) => {
      const team = await get('/api/public/v2/analytics');
      const projects: Record<number, Health> = {};
      for (const id of [a, b]) projects[id] = (await get(`/api/public/v2/projects/${id}/analytics`)).health;
      expect(projects).toEqual(perProject);
      const total = Object.values(perProject).reduce(
        (sum, h) => counts(sum.enabled_endpoints + h.enabled_endpoints, sum.healthy_endpoints + h.healthy_endpoints, sum.failing_endpoints + h.failing_endpoints, sum.unchecked_endpoints + h.unchecked_endpoints),
        counts(0, 0, 0, 0),
      );
      expect(team.health).toEqual(total);
      expect(team.projects.map((row: { project_id: number; enabled_endpoints: number }) => [row.project_id, row.enabled_endpoints])).toEqual(
        [a, b].map((id) => [id, perProject[id].enabled_endpoints]),
      );
      return team;
    };
    const patch = async (endpointId: number, body: object) => {
      const response = await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, body);
      expect(response.statusCode).toBe(200);
      await w.settle();
    };

    // Two enabled endpoints, neither checked; the disabled one counts nowhere.
    await expectHealth({ [a]: counts(1, 0, 0, 1), [b]: counts(1, 0, 0, 1) });

    // A first check: unchecked -> healthy.
    await w.importChecks(teamId, api, [{ at: T0 + 5 * MIN }]);
    await expectHealth({ [a]: counts(1, 1, 0, 0), [b]: counts(1, 0, 0, 1) });

    // Up -> down; then an older success arriving late is not the latest check and changes nothing.
    await w.importChecks(teamId, api, [{ at: T0 + 10 * MIN, success: false }]);
    await w.importChecks(teamId, api, [{ at: T0 + 7 * MIN }]);
    await expectHealth({ [a]: counts(1, 0, 1, 0), [b]: counts(1, 0, 0, 1) });

    // Disabled, it leaves the counts; enabled again, it is back as failing (its latest check).
    await patch(api, { enabled: false });
    await expectHealth({ [a]: counts(0, 0, 0, 0), [b]: counts(1, 0, 0, 1) });
    await patch(api, { enabled: true });
    await expectHealth({ [a]: counts(1, 0, 1, 0), [b]: counts(1, 0, 0, 1) });

    // Down -> up, then a move: its count goes with it.
    await w.importChecks(teamId, api, [{ at: T0 + 20 * MIN }]);
    await w.moveEndpoint(teamId, api, b);
    await expectHealth({ [a]: counts(0, 0, 0, 0), [b]: counts(2, 1, 0, 1) });

    // A deleted endpoint leaves the counts (its checks stay in the figures).
    expect((await t.admin('DELETE', `/api/v2/teams/${teamId}/endpoints/${web}`)).statusCode).toBe(204);
    await w.settle();
    const before = await expectHealth({ [a]: counts(0, 0, 0, 0), [b]: counts(1, 1, 0, 0) });

    // Rebuilt from the log, the view gives the same counts.
    await t.platform.runner!.rebuild('analytics_endpoints');
    await w.settle();
    const after = await expectHealth({ [a]: counts(0, 0, 0, 0), [b]: counts(1, 1, 0, 0) });
    expect({ health: after.health, projects: after.projects }).toEqual({ health: before.health, projects: before.projects });
  });
});
