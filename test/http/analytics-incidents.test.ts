import { analyticsWorld, createIncident, iso, setResolved, type AnalyticsTeam } from '../support/analytics-fixtures.js';

/**
 * The `incidents` object of team, project and endpoint analytics, and the team's per-project
 * `open_incidents` (api-decisions, Analytics): `total` counts the incidents active at any time in
 * [from, to), an incident being active from its first error until it is resolved; `open` counts
 * those open now, whatever the range. Incidents enter through the public incidents API.
 */
const T0 = Date.parse('2025-06-01T00:00:00.000Z');
const MIN = 60_000;
const HOUR = 60 * MIN;

describe('analytics incidents', () => {
  const { w, t } = analyticsWorld();

  const range = (from: number, to: number) => `from=${encodeURIComponent(iso(from))}&to=${encodeURIComponent(iso(to))}&buckets=1`;

  async function incidentsOf(team: AnalyticsTeam, path: string, from: number, to: number) {
    const response = await t.request('GET', `/api/public/v2/${path}?${range(from, to)}`, { token: team.token });
    expect([path, response.statusCode]).toEqual([path, 200]);
    return response.json().data.incidents;
  }

  /** Team A: project P1 with endpoints E1 and E2, project P2 with E3. */
  async function teamWithTwoProjects() {
    const team = await w.team('A');
    const p1 = await w.project(team.teamId, 'P1');
    const p2 = await w.project(team.teamId, 'P2');
    const e1 = await w.endpoint(team.teamId, p1, 'E1');
    const e2 = await w.endpoint(team.teamId, p1, 'E2');
    const e3 = await w.endpoint(team.teamId, p2, 'E3');
    return { team, p1, p2, e1, e2, e3 };
  }

  it('counts incidents active in the range and open now, per team, project and endpoint, and never another team’s', async () => {
    const { team, p1, p2, e1, e2, e3 } = await teamWithTwoProjects();
    const open = (project_id: number, endpoint_ids: number[], first: number, severity = 'warning') =>
      createIncident(t, team.token, { project_id, endpoint_ids, first_error_at: iso(first), severity });
    const resolved = async (project_id: number, endpoint_ids: number[], first: number) =>
      setResolved(t, team.token, (await open(project_id, endpoint_ids, first)).id, true);

    // The range is [T0, T0 + 1 h). Resolutions happen now, long after it.
    await open(p1, [e1], T0 + 10 * MIN, 'critical'); // a: in range, open
    await resolved(p1, [e1, e2], T0 - 24 * HOUR); // b: started before, resolved after the range starts: in range
    await open(p1, [e2], T0 + 2 * HOUR); // c: starts after the range: open, not in range
    await resolved(p1, [e2], T0 + 30 * MIN); // d: in range, resolved
    await open(p1, [e1], T0 + 5 * MIN); // i: in range, open
    await open(p2, [], T0 + HOUR - 1); // e: its last millisecond, project only (no endpoint): in range, open
    await resolved(p2, [e3], T0 + HOUR); // f: first error exactly at `to`: out of the range, resolved
    await resolved(p2, [e3], T0 + 20 * MIN); // g: in range, resolved
    await open(p2, [e3], T0 - 48 * HOUR); // h: started before the range, still open: in range
    // Another team's incidents in the same range, open and resolved.
    const other = await w.team('B');
    const theirProject = await w.project(other.teamId, 'Theirs');
    await createIncident(t, other.token, { project_id: theirProject, first_error_at: iso(T0 + 10 * MIN) });
    await setResolved(t, other.token, (await createIncident(t, other.token, { project_id: theirProject, first_error_at: iso(T0 + 20 * MIN) })).id, true);

    const [from, to] = [T0, T0 + HOUR];
    // Team: in range a, b, d, i, e, g, h; open a, c, i, e, h.
    expect(await incidentsOf(team, 'analytics', from, to)).toEqual({ total: 7, open: 5 });
    // Project P1 (a, b, c, d, i): in range a, b, d, i; open a, c, i. P2 (e, f, g, h): in range e, g, h; open e, h.
    expect(await incidentsOf(team, `projects/${p1}/analytics`, from, to)).toEqual({ total: 4, open: 3 });
    expect(await incidentsOf(team, `projects/${p2}/analytics`, from, to)).toEqual({ total: 3, open: 2 });
    // Endpoints, by affected endpoint: E1 (a, b, i), E2 (b, c, d), E3 (f, g, h).
    expect(await incidentsOf(team, `endpoints/${e1}/analytics`, from, to)).toEqual({ total: 3, open: 2 });
    expect(await incidentsOf(team, `endpoints/${e2}/analytics`, from, to)).toEqual({ total: 2, open: 1 });
    expect(await incidentsOf(team, `endpoints/${e3}/analytics`, from, to)).toEqual({ total: 2, open: 1 });

    const teamData = (await t.request('GET', `/api/public/v2/analytics?${range(from, to)}`, { token: team.token })).json().data;
    expect(teamData.projects.map((p: any) => [p.project_id, p.open_incidents])).toEqual([
      [p1, 3],
      [p2, 2],
    ]);
    // v1 carries the same incident figures.
    const v1 = (await t.request('GET', `/api/public/v1/analytics?${range(from, to)}`, { token: team.token })).json();
    expect(v1.incidents).toEqual({ total: 7, open: 5 });

    // The other team sees only its own two: one in range and open, one in range and resolved.
    expect(await incidentsOf(other, 'analytics', from, to)).toEqual({ total: 2, open: 1 });
    // A range before every first error holds none; `open` does not depend on the range.
    expect(await incidentsOf(team, 'analytics', T0 - 72 * HOUR, T0 - 49 * HOUR)).toEqual({ total: 0, open: 5 });
  });

  it('leaves out incidents resolved before the range starts, and counts a reopened one again', async () => {
    const team = await w.team();
    const project = await w.project(team.teamId, 'P');
    await createIncident(t, team.token, { project_id: project, first_error_at: iso(T0) });
    const done = await createIncident(t, team.token, { project_id: project, first_error_at: iso(T0) });
    await setResolved(t, team.token, done.id, true);
    // A range that starts after the resolution (ranges may lie in the future).
    const later = Date.now() + HOUR;
    expect(await incidentsOf(team, 'analytics', later, later + HOUR)).toEqual({ total: 1, open: 1 });
    expect(await incidentsOf(team, `projects/${project}/analytics`, later, later + HOUR)).toEqual({ total: 1, open: 1 });
    // Over a range that holds its resolution it counts, though resolved.
    expect(await incidentsOf(team, 'analytics', Date.now() - HOUR, later)).toEqual({ total: 2, open: 1 });

    const reopened = await setResolved(t, team.token, done.id, false);
    expect(reopened.resolved_at).toBeNull();
    expect(await incidentsOf(team, 'analytics', later, later + HOUR)).toEqual({ total: 2, open: 2 });
  });

  it('treats the range as half-open: an incident resolved exactly at `from` or first failing exactly at `to` is out', async () => {
    const team = await w.team();
    const project = await w.project(team.teamId, 'P');
    const incident = await createIncident(t, team.token, { project_id: project, first_error_at: iso(T0) });
    const resolvedAt = Date.parse((await setResolved(t, team.token, incident.id, true)).resolved_at);
    // Active over [T0, resolved_at): not at resolved_at itself, but at the millisecond before it.
    expect(await incidentsOf(team, 'analytics', resolvedAt, resolvedAt + HOUR)).toEqual({ total: 0, open: 0 });
    expect(await incidentsOf(team, 'analytics', resolvedAt - 1, resolvedAt + HOUR)).toEqual({ total: 1, open: 0 });
    // Its first error at `to` is out, at `from` and at the last millisecond are in.
    expect(await incidentsOf(team, 'analytics', T0 - HOUR, T0)).toEqual({ total: 0, open: 0 });
    expect(await incidentsOf(team, 'analytics', T0, T0 + 1)).toEqual({ total: 1, open: 0 });
    expect(await incidentsOf(team, 'analytics', T0 - HOUR, T0 + 1)).toEqual({ total: 1, open: 0 });
  });

  it('counts a merged-away incident once, through its target, which gains its endpoints and earliest first error', async () => {
    const { team, p1, e1, e2 } = await teamWithTwoProjects();
    const target = await createIncident(t, team.token, { project_id: p1, endpoint_ids: [e1], first_error_at: iso(T0 + 10 * MIN) });
    const source = await createIncident(t, team.token, { project_id: p1, endpoint_ids: [e2], first_error_at: iso(T0 - HOUR) });
    const [from, to] = [T0 - 30 * MIN, T0];
    // Before the merge only the source was failing in [T0 - 30 min, T0).
    expect(await incidentsOf(team, 'analytics', from, to)).toEqual({ total: 1, open: 2 });
    expect(await incidentsOf(team, `endpoints/${e1}/analytics`, from, to)).toEqual({ total: 0, open: 1 });

    const merged = await t.request('POST', `/api/public/v2/incidents/${target.id}/merge`, { token: team.token, body: { source_incident_ids: [source.id] } });
    expect(merged.statusCode).toBe(200);
    // The source is resolved and merged; the target now starts at T0 - 1 h and affects E1 and E2.
    expect(await incidentsOf(team, 'analytics', from, to)).toEqual({ total: 1, open: 1 });
    expect(await incidentsOf(team, `projects/${p1}/analytics`, from, to)).toEqual({ total: 1, open: 1 });
    expect(await incidentsOf(team, `endpoints/${e1}/analytics`, from, to)).toEqual({ total: 1, open: 1 });
    expect(await incidentsOf(team, `endpoints/${e2}/analytics`, from, to)).toEqual({ total: 1, open: 1 });
    const teamData = (await t.request('GET', `/api/public/v2/analytics?${range(from, to)}`, { token: team.token })).json().data;
    expect(teamData.projects.find((p: any) => p.project_id === p1).open_incidents).toBe(1);
  });
});
