/**
 * Dependencies end to end (issue 26 item 1): the whole service probing local targets. A parent
 * goes down and opens its incident; its three dependents then fail too, and their failures are
 * recorded suppressed and named on the parent's incident instead of opening three more. When the
 * parent comes back, the dependents that still fail open incidents of their own.
 */
import { jest } from '@jest/globals';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startTarget, type Target } from './support.js';

jest.setTimeout(120_000);

const PARENT_RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 1, latency_trigger_window: 1, latency_recovery_count: 1 };
const DEPENDENT_RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 2 };

describe('dependencies end to end', () => {
  let t: TestApp;
  let gateway: Target;
  let services: Target;
  beforeAll(async () => {
    gateway = await startTarget();
    services = await startTarget();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await gateway?.close();
    await services?.close();
  });

  it('a parent and three dependents failing open one incident, the parent’s, naming the three; after the parent recovers they trigger on their own', async () => {
    const team = await t.createTeam('Deps');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const start = async (target: Target, path: string, settings: Record<string, unknown>) => (await monitorTarget(t, team.id, target, path, settings)).id;
    const parent = await start(gateway, 'gateway', PARENT_RULES);
    const dependents = [
      await start(services, 'a', { ...DEPENDENT_RULES, depends_on: [parent] }),
      await start(services, 'b', { ...DEPENDENT_RULES, depends_on: [parent] }),
      await start(services, 'c', { ...DEPENDENT_RULES, depends_on: [parent] }),
    ];
    const opened = async () => (await allEvents(t)).filter((e) => e.type === 'IncidentOpened').map((e) => e.data);
    const alertStatus = async (endpointId: number) => (await t.request('GET', `/api/public/v2/endpoints/${endpointId}/alert-status`, { token })).json().data;

    gateway.mode = { status: 503, delayMs: 0 };
    const [incident] = await eventually('the parent’s incident', async () => {
      const found = (await opened()).filter((o) => o.endpoint_ids.includes(parent));
      return found.length > 0 ? found : null;
    });
    await eventually('the parent’s signal to show on the dependents', async () => (await alertStatus(dependents[0])).suppressed_by?.[0] === parent);

    services.mode = { status: 503, delayMs: 0 };
    // Three suppressed failures each: more than the dependents' rule needs to trigger.
    await eventually('suppressed failures of every dependent', async () => {
      const checks = (await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && dependents.includes(e.data.endpoint_id) && !e.data.success).map((e) => e.data);
      return dependents.every((id) => checks.filter((c) => c.endpoint_id === id && c.alert_suppressed).length >= 3);
    });
    const named = await eventually('the parent’s incident to name the three', async () => {
      const response = await t.request('GET', `/api/public/v2/incidents/${incident.incident_id}`, { token });
      const ids = response.json().data.metadata?.suppressed_endpoint_ids;
      return Array.isArray(ids) && ids.length === 3 ? ids : null;
    });
    expect(named).toEqual([...dependents].sort((a, b) => a - b));
    expect((await opened()).map((o) => o.endpoint_ids)).toEqual([[parent]]);
    const checks = (await t.request('GET', `/api/public/v2/endpoints/${dependents[1]}/checks`, { token })).json().data;
    expect(checks.find((c: any) => !c.success)).toMatchObject({ alert_suppressed: true, failure_reason: 'status: expected 200, got 503' });
    for (const id of dependents) {
      const status = await alertStatus(id);
      expect(status.suppressed_by).toEqual([parent]);
      expect(status.signals[0].state).toBe('ok');
    }

    // The parent recovers; the dependents still fail and now page on their own.
    gateway.mode = { status: 200, delayMs: 0 };
    await eventually('an incident for every dependent', async () => {
      const endpoints = (await opened()).flatMap((o) => o.endpoint_ids);
      return dependents.every((id) => endpoints.includes(id));
    });
    expect((await alertStatus(dependents[0])).suppressed_by).toEqual([]);
  });
});
