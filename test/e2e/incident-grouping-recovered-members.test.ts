/**
 * A grouped automatic incident's members after they recover (docs/provisioning.md, "Incident
 * grouping"): an endpoint that recovered while the group waited for the others has no outage
 * any more. Once the group resolved, its next failing check is an ordinary failure: below its
 * trigger count it pages no one, and a new outage of the project groups again.
 *
 * Before the fix, the reactor kept the group as that endpoint's open incident after its own
 * recovery. Once the group resolved, the endpoint's next failing check, a single one, opened a
 * new automatic incident ("still triggered after incident N was resolved") that no recovery
 * would ever resolve (the signal never triggered), and the next outage did not group.
 * Read through the public API, as a consumer sees it.
 */
import { jest } from '@jest/globals';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { eventually, monitorTarget, startTarget, type Target } from './support.js';

jest.setTimeout(120_000);

const API = '/api/public/v2';
const RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 1 };

interface Incident {
  id: number;
  endpoint_ids: number[];
  resolved_at: string | null;
  detection_reason: string;
}
interface Check {
  id: number;
  success: boolean;
  checked_at: string;
}

describe('a grouped incident’s members after they recover', () => {
  let t: TestApp;
  let web: Target;
  let api: Target;
  beforeAll(async () => {
    web = await startTarget();
    api = await startTarget();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await web?.close();
    await api?.close();
  });

  it('a single failure after the group resolved pages no one, and the next outage groups again', async () => {
    const team = await t.createTeam('Grouped members');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const project = (await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Shop', incident_grouping_seconds: 3600 })).json().data;
    const monitor = async (target: Target): Promise<number> => (await monitorTarget(t, team.id, target, 'health', RULES, { projectId: project.id })).id;
    const get = async (path: string) => (await t.request('GET', `${API}${path}`, { token })).json().data;
    const incidents = async (): Promise<Incident[]> => get(`/incidents?project_id=${project.id}`);
    const availability = async (endpointId: number): Promise<{ state: string; incident_id: number | null }> =>
      (await get(`/endpoints/${endpointId}/alert-status`)).signals.find((signal: { type: string }) => signal.type === 'availability');
    const [webId, apiId] = [await monitor(web), await monitor(api)];

    // The first outage: one incident for both; `web` recovers first, then `api`, and it resolves.
    web.mode = { status: 503, delayMs: 0 };
    api.mode = { status: 503, delayMs: 0 };
    const group = await eventually('one incident for both endpoints', async () => (await incidents()).find((incident) => incident.endpoint_ids.length === 2));
    web.mode = { status: 200, delayMs: 0 };
    await eventually('web to recover', async () => (await availability(webId)).state === 'ok');
    api.mode = { status: 200, delayMs: 0 };
    const resolvedAt = await eventually('the group to resolve', async () => (await incidents()).find((incident) => incident.id === group.id)?.resolved_at ?? null);

    // One failing check of `web`, below its trigger count of 2, then successes.
    web.script = [503];
    const checks = async (endpointId: number): Promise<Check[]> => get(`/endpoints/${endpointId}/checks?source=scheduled&from=${encodeURIComponent(resolvedAt)}&limit=100`);
    await eventually('web’s single failure and two successes after it', async () => {
      const after = (await checks(webId)).reverse();
      const failure = after.findIndex((check) => !check.success);
      return failure >= 0 && after.slice(failure + 1).filter((check) => check.success).length >= 2;
    });

    // A second outage of both: one new incident, both endpoints in it.
    web.mode = { status: 503, delayMs: 0 };
    api.mode = { status: 503, delayMs: 0 };
    await eventually('both signals triggered again', async () => (await availability(webId)).state === 'triggered' && (await availability(apiId)).state === 'triggered');
    const second = await eventually('the second outage’s incident to name both', async () => {
      const [webIncident, apiIncident] = [(await availability(webId)).incident_id, (await availability(apiId)).incident_id];
      return webIncident !== null && webIncident === apiIncident ? webIncident : null;
    }, 20_000).catch(() => null);
    const opened = (await incidents()).filter((incident) => incident.id !== group.id);
    expect(opened.map((incident) => ({ endpoint_ids: [...incident.endpoint_ids].sort((a, b) => a - b), still_triggered: /still triggered/.test(incident.detection_reason) }))).toEqual([
      { endpoint_ids: [webId, apiId].sort((a, b) => a - b), still_triggered: false },
    ]);
    expect(second).toBe(opened[0].id);

    web.mode = { status: 200, delayMs: 0 };
    api.mode = { status: 200, delayMs: 0 };
    await eventually('the second incident to resolve', async () => (await incidents()).find((incident) => incident.id === opened[0].id)?.resolved_at);
  });
});
