/**
 * Dependencies end to end (issue 26 item 1): the whole service probing local targets. A parent
 * goes down and opens its incident; its three dependents then fail too, and their failures are
 * recorded suppressed and named on the parent's incident instead of opening three more. When the
 * parent comes back, the dependents that still fail open incidents of their own. A parent failing
 * during its maintenance window suppresses its dependent the same way, without paging itself
 * (and its status page shows the dependent under maintenance meanwhile); one that was down
 * before its window and recovers inside it stops suppressing.
 */
import { jest } from '@jest/globals';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { createPage } from '../support/status-page-fixtures.js';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { allEvents, enableEndpoint, eventually, monitorTarget, startTarget, type Target } from './support.js';

jest.setTimeout(120_000);

const PARENT_RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 1, latency_trigger_window: 1, latency_recovery_count: 1 };
const DEPENDENT_RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 2 };

describe('dependencies end to end', () => {
  let t: TestApp;
  let gateway: Target;
  let services: Target;
  let receiver: Receiver;
  beforeAll(async () => {
    gateway = await startTarget();
    services = await startTarget();
    receiver = await startReceiver();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await gateway?.close();
    await services?.close();
    await receiver?.close();
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
  it('a parent failing during its maintenance window suppresses its dependent and pages nothing; after the window it triggers and keeps suppressing; its recovery lets the dependent page', async () => {
    const team = await t.createTeam('Planned work');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const channels = `/api/v2/teams/${team.id}/notification-channels`;
    await t.admin('POST', channels, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/planned` } });
    const router = await startTarget();
    const backend = await startTarget();
    try {
      router.mode = { status: 503, delayMs: 0 };
      const parent = (await monitorTarget(t, team.id, router, 'router', PARENT_RULES, { enabled: false })).id;
      const dependent = (await monitorTarget(t, team.id, backend, 'api', { ...DEPENDENT_RULES, depends_on: [parent] })).id;
      const now = Date.now();
      const window = await t.admin('POST', `/api/v2/teams/${team.id}/maintenance-windows`, { endpoint_id: parent, starts_at: new Date(now - 60_000).toISOString(), ends_at: new Date(now + 3_600_000).toISOString(), reason: 'router upgrade' });
      expect(window.statusCode).toBe(201);
      await enableEndpoint(t, team.id, parent);
      await createPage(t, team.id, { slug: 'planned-router-work', title: 'Planned', components: [{ endpoint_id: parent, name: 'Router' }, { endpoint_id: dependent, name: 'API' }] });
      const pageStates = async () => Object.fromEntries((await t.request('GET', '/status/planned-router-work/summary.json')).json().components.map((c: any) => [c.name, c.status]));
      const alertStatus = async (endpointId: number) => (await t.request('GET', `/api/public/v2/endpoints/${endpointId}/alert-status`, { token })).json().data;
      const mine = (events: Array<{ type: string; data: any }>) => events.filter((e) => [parent, dependent].includes(e.data.endpoint_id) || e.data.endpoint_ids?.some((id: number) => [parent, dependent].includes(id)));
      const opened = async () => mine(await allEvents(t)).filter((e) => e.type === 'IncidentOpened').map((e) => e.data.endpoint_ids);
      const failingChecks = async () => mine(await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && e.data.endpoint_id === dependent && !e.data.success).map((e) => e.data);

      // The parent fails inside its window: the dependent's alert status names it, and its maintenance.
      await eventually('the parent failing during maintenance to show on the dependent', async () => (await alertStatus(dependent)).suppressed_by_maintenance?.[0] === parent);
      expect(await alertStatus(dependent)).toMatchObject({ suppressed_by: [parent], suppressed_by_maintenance: [parent], failing_in_maintenance_since: null });
      // The parent's own status says it fails during its maintenance, though its signal is ok.
      const failingSince = (await alertStatus(parent)).failing_in_maintenance_since;
      expect(Date.parse(failingSince)).toBeGreaterThanOrEqual(now - 60_000);
      expect(await alertStatus(parent)).toMatchObject({ signals: [{ type: 'availability', state: 'ok' }, expect.anything()], recovered_in_maintenance_since: null });

      backend.mode = { status: 503, delayMs: 0 };
      // Three suppressed failures: more than the dependent's rule (2 of 3) needs to trigger.
      await eventually('suppressed failures of the dependent', async () => (await failingChecks()).filter((c) => c.alert_suppressed).length >= 3);
      expect((await failingChecks()).every((c) => c.alert_suppressed && c.suppressed_by?.[0] === parent)).toBe(true);
      // The status page says what the alert status says: the API is in the router's planned work.
      expect(await eventually('the API under maintenance on the status page', async () => ((await pageStates()).API === 'under_maintenance' ? await pageStates() : null))).toEqual({
        Router: 'under_maintenance',
        API: 'under_maintenance',
      });
      const parentChecks = (await t.request('GET', `/api/public/v2/endpoints/${parent}/checks`, { token })).json().data;
      expect(parentChecks.length).toBeGreaterThan(0);
      expect(parentChecks.every((c: any) => !c.success && c.alert_suppressed)).toBe(true);
      expect((await alertStatus(parent)).signals[0].state).toBe('ok');
      expect((await alertStatus(dependent)).signals[0].state).toBe('ok');
      expect(await opened()).toEqual([]);
      // Deliveries are recorded in log order: once a ping sent now is listed, anything the checks
      // before it raised would be listed too.
      const channelId = (await t.admin('GET', channels)).json().data[0].id;
      await t.admin('POST', `${channels}/${channelId}/test`);
      await eventually('the ping', async () => (await t.admin('GET', `${channels}/${channelId}/deliveries`)).json().data.length > 0);
      expect((await t.admin('GET', `${channels}/${channelId}/deliveries`)).json().data.map((d: any) => d.type)).toEqual(['ping']);

      // The window ends while the parent still fails: its own signal triggers and keeps the dependent suppressed.
      expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/maintenance-windows/${window.json().data.id}`)).statusCode).toBe(204);
      const [incident] = await eventually('the parent’s incident', async () => {
        const found = mine(await allEvents(t)).filter((e) => e.type === 'IncidentOpened').map((e) => e.data);
        return found.length > 0 ? found : null;
      });
      expect(incident.endpoint_ids).toEqual([parent]);
      // An unplanned outage now: the router carries it, the API is its own (suppressed, its signals still).
      expect(await eventually('the router down on the status page', async () => ((await pageStates()).Router === 'major_outage' ? await pageStates() : null))).toEqual({
        Router: 'major_outage',
        API: 'operational',
      });
      const before = (await failingChecks()).length;
      await eventually('two more failures of the dependent', async () => (await failingChecks()).length >= before + 2);
      expect((await failingChecks()).every((c) => c.alert_suppressed)).toBe(true);
      expect(await alertStatus(dependent)).toMatchObject({ suppressed_by: [parent], suppressed_by_maintenance: [] });
      // Its own signal took over: the maintenance state ended with the trigger.
      expect(await alertStatus(parent)).toMatchObject({ signals: [{ type: 'availability', state: 'triggered' }, expect.anything()], failing_in_maintenance_since: null });
      expect(await opened()).toEqual([[parent]]);
      await eventually('the parent’s incident to name the dependent', async () => {
        const response = await t.request('GET', `/api/public/v2/incidents/${incident.incident_id}`, { token });
        return response.json().data.metadata?.suppressed_endpoint_ids?.[0] === dependent;
      });

      // The parent recovers; the dependent still fails and now pages on its own.
      router.mode = { status: 200, delayMs: 0 };
      await eventually('an incident for the dependent', async () => (await opened()).some((ids) => ids.includes(dependent)));
      expect((await alertStatus(dependent)).suppressed_by).toEqual([]);
    } finally {
      await router.close();
      await backend.close();
    }
  });
  it('a parent down before its window that recovers inside it stops suppressing: its dependent’s own outage pages during the window', async () => {
    const team = await t.createTeam('Fixing the router');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const router = await startTarget();
    const backend = await startTarget();
    try {
      const parent = (await monitorTarget(t, team.id, router, 'router', PARENT_RULES)).id;
      const dependent = (await monitorTarget(t, team.id, backend, 'api', { ...DEPENDENT_RULES, depends_on: [parent] })).id;
      const alertStatus = async (endpointId: number) => (await t.request('GET', `/api/public/v2/endpoints/${endpointId}/alert-status`, { token })).json().data;
      const incidentOf = async (endpointId: number) => {
        const incidents = (await t.request('GET', '/api/public/v2/incidents', { token })).json().data;
        return incidents.find((incident: any) => incident.endpoint_ids.includes(endpointId)) ?? null;
      };

      router.mode = { status: 503, delayMs: 0 };
      await eventually('the parent’s incident', () => incidentOf(parent));
      await eventually('the parent’s outage to show on the dependent', async () => (await alertStatus(dependent)).suppressed_by?.[0] === parent);
      // The operator opens a window to fix it; the fix works.
      const now = Date.now();
      const window = await t.admin('POST', `/api/v2/teams/${team.id}/maintenance-windows`, { endpoint_id: parent, starts_at: new Date(now - 1_000).toISOString(), ends_at: new Date(now + 3_600_000).toISOString(), reason: 'router repair' });
      expect(window.statusCode).toBe(201);
      router.mode = { status: 200, delayMs: 0 };
      await eventually('the dependent to stop naming the recovered parent', async () => (await alertStatus(dependent)).suppressed_by?.length === 0);
      // Maintenance holds the parent's signal still: it stays triggered, its incident open, until the window ends; its status says it recovered.
      expect((await alertStatus(parent)).signals[0].state).toBe('triggered');
      expect(Date.parse((await alertStatus(parent)).recovered_in_maintenance_since)).toBeGreaterThanOrEqual(now - 1_000);
      expect((await alertStatus(parent)).failing_in_maintenance_since).toBeNull();

      // The dependent then fails on its own, inside the parent's window: it pages.
      backend.mode = { status: 503, delayMs: 0 };
      const own = await eventually('the dependent’s own incident', () => incidentOf(dependent));
      expect(own.endpoint_ids).toEqual([dependent]);
      expect((await t.request('GET', `/api/public/v2/incidents/${(await incidentOf(parent)).id}`, { token })).json().data.metadata?.suppressed_endpoint_ids ?? []).toEqual([]);
    } finally {
      await router.close();
      await backend.close();
    }
  });
});
