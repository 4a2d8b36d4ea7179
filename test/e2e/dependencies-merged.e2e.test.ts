/**
 * Dependents suppressed by a parent whose incident was merged into another (docs/decisions.md,
 * "Dependencies"): the incident that holds the parent's outage after the merge lists every
 * dependent whose alerts the parent suppresses, those suppressed before the merge and those
 * suppressed after it, in `metadata.suppressed_endpoint_ids`.
 *
 * The parent then checks every 2 minutes, so after the merge its next failing check (which moves the
 * reactor on to the merge target) is far off. Before the fix, a dependent suppressed in that
 * time was listed nowhere: the reactor still named the merged-away incident and dropped it.
 * A merge also copies the list: the target lists what the source listed (the union), though no
 * dependent fails after the merge.
 *
 * Read through the public API, as a consumer sees it.
 */
import { jest } from '@jest/globals';
import { eventually, incidentsAppBeforeAll, incidentsProject, monitorTarget, startTarget } from './support.js';

jest.setTimeout(120_000);

const API = '/api/public/v2';
const PARENT_RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 1, latency_trigger_window: 1, latency_recovery_count: 1 };

describe('dependents of a parent whose incident was merged', () => {
  const app = incidentsAppBeforeAll();

  /** A project with a failing parent (`gateway`), and how to read an incident's suppressed dependents. */
  async function projectWithFailingParent() {
    const project = await incidentsProject(app.t, app.targets, 0);
    const suppressedIds = async (id: number): Promise<number[]> => (await project.incident(id)).metadata.suppressed_endpoint_ids ?? [];
    const gateway = await startTarget();
    app.targets.push(gateway);
    gateway.mode = { status: 503, delayMs: 0 };
    const parent = { id: (await monitorTarget(app.t, project.team.id, gateway, 'gateway', { ...PARENT_RULES }, { projectId: project.project.id })).id, target: gateway };
    return { ...project, suppressedIds, parent };
  }

  it('the surviving incident lists the dependents suppressed before and after the merge', async () => {
    const { team, token, monitor, incident, incidents, suppressedIds, parent } = await projectWithFailingParent();
    const [before, after] = [await monitor({ depends_on: [parent.id] }), await monitor({ depends_on: [parent.id] })];

    const parentIncident = await eventually('the parent’s incident', async () => (await incidents()).find((found) => found.endpoint_ids.includes(parent.id)));
    before.target.mode = { status: 503, delayMs: 0 };
    await eventually('the first dependent listed', async () => (await suppressedIds(parentIncident.id)).includes(before.id));

    // The parent's next check, which moves the reactor on to the merge target, is two minutes off.
    expect((await app.t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${parent.id}`, { interval_seconds: 120 })).statusCode).toBe(200);
    const changedAt = new Date().toISOString();
    const parentChecks = async (): Promise<Array<{ checked_at: string }>> => (await app.t.request('GET', `${API}/endpoints/${parent.id}/checks?limit=5`, { token })).json().data;
    await eventually('the parent’s check already scheduled at the change', async () => (await parentChecks()).some((check) => check.checked_at > changedAt));
    await eventually('that check linked to the parent’s incident', async () => (await incident(parentIncident.id)).error_count >= 2);
    const created = await app.t.request('POST', `${API}/incidents`, { token, body: { project_id: parentIncident.project_id, title: 'Gateway outage' } });
    const target = created.json().data.id as number;
    const merged = await app.t.request('POST', `${API}/incidents/${target}/merge`, { token, body: { source_incident_ids: [parentIncident.id] } });
    expect(merged.statusCode).toBe(200);

    after.target.mode = { status: 503, delayMs: 0 };
    const listed = await eventually('both dependents listed on the merge target', async () => {
      const ids = await suppressedIds(target);
      return ids.length === 2 ? ids : null;
    }, 30_000).catch(async () => ({ target: await suppressedIds(target), source: await suppressedIds(parentIncident.id) }));
    // Before the fix: { target: [], source: [before] }: the dependent suppressed after the merge was listed nowhere.
    expect(listed).toEqual([before.id, after.id].sort((a, b) => a - b));
  });

  it('the merge target lists the dependents the source listed, though none fails after the merge', async () => {
    const { project, token, monitor, incidents, suppressedIds, parent } = await projectWithFailingParent();
    const dependent = await monitor({ depends_on: [parent.id] });
    const parentIncident = await eventually('the parent’s incident', async () => (await incidents()).find((found) => found.endpoint_ids.includes(parent.id)));
    dependent.target.mode = { status: 503, delayMs: 0 };
    await eventually('the dependent listed on the parent’s incident', async () => (await suppressedIds(parentIncident.id)).includes(dependent.id));
    // The dependent answers again: nothing of it is suppressed after the merge.
    dependent.target.mode = { status: 200, delayMs: 0 };
    const answeredAt = new Date().toISOString();
    await eventually('a successful check of the dependent', async () =>
      ((await app.t.request('GET', `${API}/endpoints/${dependent.id}/checks?limit=5`, { token })).json().data as Array<{ success: boolean; checked_at: string }>).some((check) => check.success && check.checked_at > answeredAt),
    );

    const created = await app.t.request('POST', `${API}/incidents`, { token, body: { project_id: project.id, title: 'Gateway outage' } });
    const target = created.json().data.id as number;
    expect((await app.t.request('POST', `${API}/incidents/${target}/merge`, { token, body: { source_incident_ids: [parentIncident.id] } })).statusCode).toBe(200);
    const listed = await eventually('the dependent listed on the merge target', async () => ((await suppressedIds(target)).length > 0 ? suppressedIds(target) : null), 30_000).catch(
      async () => ({ target: await suppressedIds(target), source: await suppressedIds(parentIncident.id) }),
    );
    // Before: { target: [], source: [dependent] }: the merge left the list behind.
    expect(listed).toEqual([dependent.id]);
  });
});
