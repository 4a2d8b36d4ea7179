/**
 * The whole service (startTestApp) probing a local target, with SLOs of 99 % and a webhook
 * receiver.
 *
 * Page (1h and 5m windows both burning faster than 14.4), live: the target fails every second,
 * the SLO's page alert triggers and opens a critical `slo_burn` incident within a minute; the
 * target is healthy again, the page alert recovers and the incident resolves. The SLO's figures
 * and gauges show it all along.
 *
 * Ticket (6h and 30m windows both burning faster than 6, docs/api.md "SLOs"): hours of history
 * are imported with timestamps in the past (imports count in the figures, never raise an
 * alert), the live scheduled checks decide, and the deliveries are verified with the
 * `standardwebhooks` package:
 * - a day of good history (older than 6 h) and, 25 to 6 minutes ago, 2 bad checks in 20: the
 *   first live (good) check burns 6h and 30m at 2 / 21 / 1 % = 9.524, above 6, while 1h (9.524)
 *   and 5m (0) stay under 14.4: a ticket, never a page. It opens a warning `slo_burn` incident,
 *   and the incident.opened delivery names the burn rates GET /slos/:id shows then;
 * - good live checks dilute the 30m window until it burns under 6: the ticket recovers, the
 *   incident resolves and incident.resolved is delivered.
 * - the same burn, then the SLO deleted: its alerts end with it, so the incident resolves too
 *   (no recovery can come for a deleted SLO).
 * - the same burn, then the SLO's only endpoint deleted: the SLO covers no endpoint, so its
 *   alerts end and the incident resolves, its history saying the endpoint was deleted.
 * - the same burn on an SLO of the endpoint's project, then the endpoint deleted, or moved to
 *   another project: the project has no endpoint left, so the alert ends and the incident resolves.
 * - the same burn with the incident's auto_resolve turned off: the ticket's end is recorded and
 *   the incident stays open; the ticket triggering again is awaited in the same incident (no
 *   second one); auto_resolve turned on then leaves it open, and turned on once the alert ended
 *   resolves it at once (docs/decisions.md).
 */
import { jest } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { Receiver } from '../support/notification-receiver.js';
import type { TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startHarness, type Harness, type Target } from './support.js';
import { signatureHeaders } from '../support/notification-receiver.js';

jest.setTimeout(300_000);

const MINUTE_MS = 60_000;
/** Long enough that no second live check lands while the ticket's trigger is compared with the SLO. */
const SLOW_INTERVAL_S = 30;
const TICKET = 'SLO burn alert (ticket)';
/** The history entry of a burn alert's end while auto_resolve is off. */
const ALERT_ENDED = `${TICKET} ended; kept open: automatic resolution is off`;

describe('SLO burn-rate alerts end to end', () => {
  let t: TestApp;
  let target: Target;
  let receiver: Receiver;
  let harness: Harness<{ receiver: true }> | undefined;
  beforeAll(async () => {
    ({ t, target, receiver } = harness = await startHarness({ receiver: true }));
  });
  afterAll(() => harness?.close());

  it('a failing target pages within a minute through a critical slo_burn incident; healthy again, the alert recovers', async () => {
    const team = await t.createTeam('SLO');
    const { token } = await t.issueToken(team.id, ['analytics:read'], 'viewer');
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/ops` } })).statusCode).toBe(201);
    const endpoint = await monitorTarget(t, team.id, target, 'health');
    const created = await t.admin('POST', `/api/v2/teams/${team.id}/slos`, { name: 'Checkout', endpoint_ids: [endpoint.id], objective_percent: 99 });
    expect(created.statusCode).toBe(201);
    const sloId: number = created.json().data.id;
    const slo = async () => (await t.request('GET', `/api/public/v2/slos/${sloId}`, { token })).json().data;
    await eventually('a few good checks counted', async () => (await slo()).good >= 2);
    expect((await slo()).alerts).toEqual([]);

    target.mode = { status: 503, delayMs: 0 };
    const failingSince = Date.now();
    const [incident] = await eventually(
      'a critical slo_burn incident',
      async () => {
        const found = (await allEvents(t)).filter((e) => e.type === 'IncidentOpened' && e.data.type === 'slo_burn' && e.data.severity === 'critical').map((e) => e.data);
        return found.length > 0 ? found : null;
      },
      { timeoutMs: 60_000 },
    );
    expect(Date.now() - failingSince).toBeLessThan(60_000);
    expect(incident).toMatchObject({ source: 'automatic', team_id: team.id, endpoint_ids: [endpoint.id], auto_resolve: true, title: 'SLO Checkout is burning its error budget' });
    expect(incident.detection_reason).toMatch(/SLO "Checkout" \(id \d+, objective 99 % over 30 days\) is burning its error budget: burn rate [\d.]+ over 1h and [\d.]+ over 5m, both above 14.4 \(page\)/);
    const during = await eventually('the page alert on the SLO', async () => {
      const read = await slo();
      return read.alerts.some((a: { severity: string }) => a.severity === 'page') ? read : null;
    });
    expect(during.status).not.toBe('ok');
    expect(during.burn_rates['5m']).toBeGreaterThan(14.4);

    const metrics = (await t.request('GET', '/metrics')).body;
    expect(metrics).toMatch(new RegExp(`monitor_slo_error_budget_remaining_ratio\\{[^}]*slo="${sloId}"[^}]*\\} -?[\\d.]+`));
    expect(metrics).toMatch(new RegExp(`monitor_slo_burn_rate\\{[^}]*slo="${sloId}"[^}]*window="5m"[^}]*\\} [\\d.]+`));

    target.mode = { status: 200, delayMs: 0 };
    await eventually(
      'the page alert to recover and its incident to resolve',
      async () => {
        const events = await allEvents(t);
        return (
          events.some((e) => e.type === 'SloBurnAlertRecovered' && e.data.slo_id === sloId && e.data.severity === 'page') &&
          events.some((e) => e.type === 'IncidentResolved' && e.data.incident_id === incident.incident_id)
        );
      },
      { timeoutMs: 150_000 },
    );
    expect((await slo()).alerts.map((a: { severity: string }) => a.severity)).not.toContain('page');
    // Notifications follow the incident, as for any other automatic incident.
    const delivered = (type: string) => receiver.of(type).map((r) => r.json.data.incident).filter((i: { id: number }) => i.id === incident.incident_id);
    await eventually('incident.opened and incident.resolved delivered', async () => delivered('incident.opened').length > 0 && delivered('incident.resolved').length > 0);
    expect(delivered('incident.opened')[0]).toMatchObject({ type: 'slo_burn', severity: 'critical', source: 'automatic' });
  });

  /**
   * A team with a webhook channel at `path` on the receiver, an endpoint (disabled, probed every
   * SLOW_INTERVAL_S once enabled) with imported history, and an SLO of 99 % over it that burns at
   * the ticket rate and not the page rate as soon as a live check comes (the file comment).
   * `scope` `project`: the SLO selects the endpoint's project instead of listing the endpoint.
   */
  async function ticketBurningSlo(path: string, scope: 'endpoints' | 'project' = 'endpoints') {
    const team = await t.createTeam('SLO ticket');
    const project = await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Shop', description: '' });
    expect(project.statusCode).toBe(201);
    const projectId: number = project.json().data.id;
    const { token } = await t.issueToken(team.id, ['analytics:read', 'incidents:read'], 'viewer');
    const channel = await t.admin('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}${path}` } });
    expect(channel.statusCode).toBe(201);
    const webhook = new Webhook(channel.json().data.secret);
    const endpoint = await monitorTarget(t, team.id, target, 'health', { interval_seconds: SLOW_INTERVAL_S }, { enabled: false, projectId });

    // History: 1,000 good checks 30 to 13 hours ago, then 2 bad in 20 between 25 and 6 minutes ago.
    const now = Date.now();
    const check = (at: number, success: boolean) => ({ checked_at: new Date(at).toISOString(), success, status_code: success ? 200 : 503, latency_ms: 40 });
    const old = Array.from({ length: 1000 }, (_, i) => check(now - 30 * 60 * MINUTE_MS + i * MINUTE_MS, true));
    const recent = Array.from({ length: 20 }, (_, i) => check(now - 25 * MINUTE_MS + i * MINUTE_MS, i !== 0 && i !== 10));
    const imported = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, { checks: [...old, ...recent] });
    expect([imported.statusCode, imported.json().data]).toEqual([201, { imported: 1020 }]);

    const selection = scope === 'project' ? { project_id: projectId } : { endpoint_ids: [endpoint.id] };
    const created = await t.admin('POST', `/api/v2/teams/${team.id}/slos`, { name: 'Checkout', ...selection, objective_percent: 99 });
    expect(created.statusCode).toBe(201);
    const sloId: number = created.json().data.id;
    return {
      team,
      projectId,
      endpoint,
      sloId,
      token,
      slo: async () => (await t.request('GET', `/api/public/v2/slos/${sloId}`, { token })).json().data,
      /** The deliveries of `type` to this team's channel, each verified with the channel's secret. */
      verified: (type: string) => receiver.of(type).filter((r) => r.path === path).map((r) => webhook.verify(r.body, signatureHeaders(r)) as any),
      enable: async () => expect((await t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`, { enabled: true })).statusCode).toBe(200),
    };
  }

  it('a ticket-rate burn opens a warning incident whose notification agrees with the SLO, and recovers as good checks come in', async () => {
    const { team, endpoint, sloId, slo, verified, enable } = await ticketBurningSlo('/ticket');
    // Imports count, and raise nothing.
    const before = await slo();
    expect(before).toMatchObject({ good: 1018, total: 1020, alerts: [], status: 'ok' });
    expect(before.burn_rates).toMatchObject({ '30m': 10, '1h': 10, '6h': 10, '5m': null });

    await enable();
    const [opened] = await eventually('incident.opened delivered', async () => {
      const found = verified('incident.opened');
      return found.length > 0 ? found : null;
    }, { timeoutMs: 120_000 });
    // The SLO as it stands now (its view shows the alert once it applied it): the trigger's own check is the only live one so far.
    const during = await eventually('the ticket alert on the SLO', async () => {
      const read = await slo();
      return read.alerts.length > 0 ? read : null;
    });
    const liveChecks = during.total - 1020;
    expect(liveChecks).toBe(1);
    const incident = opened.data.incident;
    expect(incident).toMatchObject({ type: 'slo_burn', severity: 'warning', source: 'automatic', auto_resolve: true, endpoint_ids: [endpoint.id], resolved_at: null, metadata: { slo_id: sloId, burn_alert: 'ticket' } });
    const reason = /burn rate ([\d.]+) over 6h and ([\d.]+) over 30m, both above 6 \(ticket\)/.exec(incident.detection_reason);
    expect(reason).not.toBeNull();
    const [sixHours, thirtyMinutes] = [Number(reason![1]), Number(reason![2])];
    // The same figures as GET /slos/:id at that moment, and as the counts give: 2 bad of 21 at a 1 % budget.
    expect({ '6h': sixHours, '30m': thirtyMinutes }).toEqual({ '6h': during.burn_rates['6h'], '30m': during.burn_rates['30m'] });
    expect(sixHours).toBe(9.524);
    expect(during).toMatchObject({ good: 1019, total: 1021, status: 'at_risk', error_budget: { bad: 2, allowed_bad: 10.21, remaining_percent: 80.411 } });
    expect(during.alerts).toEqual([{ severity: 'ticket', since: expect.any(String) }]);
    expect(during.burn_rates['1h']).toBeLessThan(14.4);
    expect(during.burn_rates['5m']).toBe(0);

    // Good live checks, one a second: the 30m window burns under 6 once 2 bad are under 6 % of it.
    expect((await t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`, { interval_seconds: 1, timeout_seconds: 1 })).statusCode).toBe(200);
    const [resolved] = await eventually('incident.resolved delivered', async () => {
      const found = verified('incident.resolved').filter((payload) => payload.data.incident.id === incident.id);
      return found.length > 0 ? found : null;
    }, { timeoutMs: 150_000 });
    expect(resolved.data.incident).toMatchObject({ id: incident.id, resolved_at: expect.any(String) });
    const events = await allEvents(t);
    const recovery = events.find((e) => e.type === 'SloBurnAlertRecovered' && e.data.slo_id === sloId);
    expect(recovery!.data).toMatchObject({ severity: 'ticket', short_window: '30m' });
    expect(recovery!.data.short_burn_rate).toBeLessThan(6);
    // 2 bad of at least 34 checks (2 / 34 / 1 % = 5.882): at least 13 more good live checks.
    expect(recovery!.data.short_burn_rate).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === 'SloBurnAlertTriggered' && e.data.slo_id === sloId).map((e) => e.data.severity)).toEqual(['ticket']);
    const after = await slo();
    expect(after.alerts).toEqual([]);
    expect(after.status).toBe('ok');
    expect(after.burn_rates['30m']).toBeLessThan(6);
  });

  /** A ticket-burning SLO (ticketBurningSlo) enabled until its warning slo_burn incident is delivered as opened. */
  async function activeTicket(path: string, scope: 'endpoints' | 'project' = 'endpoints') {
    const burning = await ticketBurningSlo(path, scope);
    await burning.enable();
    const [opened] = await eventually('incident.opened delivered', async () => {
      const found = burning.verified('incident.opened');
      return found.length > 0 ? found : null;
    }, { timeoutMs: 120_000 });
    const incident = opened.data.incident;
    expect(incident).toMatchObject({ type: 'slo_burn', severity: 'warning', auto_resolve: true, metadata: { slo_id: burning.sloId, burn_alert: 'ticket' } });
    const resolvedDelivery = async () => {
      const [resolved] = await eventually('incident.resolved delivered', async () => {
        const found = burning.verified('incident.resolved').filter((payload) => payload.data.incident.id === incident.id);
        return found.length > 0 ? found : null;
      }, { timeoutMs: 60_000 });
      return resolved.data.incident;
    };
    /** Deletes the endpoint: the incident resolves, its history saying the endpoint was deleted. */
    const deleteEndpointUntilResolved = async () => {
      const { team, endpoint } = burning;
      expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`)).statusCode).toBe(204);
      expect(await resolvedDelivery()).toMatchObject({ id: incident.id, resolved_at: expect.any(String) });
      const history = (await t.admin('GET', `/api/v2/teams/${team.id}/incidents/${incident.id}/history`)).json().data.events as Array<{ type: string; summary: string }>;
      expect(history.filter((event) => event.type === 'IncidentEndpointRecovered').map((event) => event.summary)).toEqual([`Endpoint ${endpoint.id} deleted: no longer awaited`]);
    };
    return { ...burning, incident, resolvedDelivery, deleteEndpointUntilResolved };
  }

  it('deleting an SLO whose ticket is active resolves its incident (its alerts end with it)', async () => {
    const { team, sloId, token, incident, resolvedDelivery } = await activeTicket('/ticket-deleted');
    expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/slos/${sloId}`)).statusCode).toBe(204);
    expect(await resolvedDelivery()).toMatchObject({ id: incident.id, resolved_at: expect.any(String) });
    const read = await t.request('GET', `/api/public/v2/incidents/${incident.id}`, { token });
    expect(read.json().data).toMatchObject({ id: incident.id, resolved_at: expect.any(String) });
  });

  it('deleting the last endpoint of an SLO whose ticket is active ends the alert and resolves its incident', async () => {
    const { sloId, slo, deleteEndpointUntilResolved } = await activeTicket('/ticket-endpoint-deleted');
    await deleteEndpointUntilResolved();
    // The SLO stays, covering no endpoint: no alert, nothing counted.
    const after = await eventually('the SLO without its endpoint', async () => {
      const read = await slo();
      return read.endpoint_ids.length === 0 ? read : null;
    });
    expect(after).toMatchObject({ id: sloId, endpoint_ids: [], project_id: null, alerts: [], status: 'ok' });
  });

  it('a project SLO whose project loses its last endpoint (deleted) ends its alert and resolves its incident', async () => {
    const { projectId, sloId, slo, deleteEndpointUntilResolved } = await activeTicket('/ticket-project-endpoint-deleted', 'project');
    await deleteEndpointUntilResolved();
    // The SLO stays on its project. The deleted endpoint's checks stay in the project (analytics'
    // rule), so they are still counted; no live check will come until the project has an endpoint again.
    const after = await eventually('the project SLO without an alert', async () => {
      const read = await slo();
      return read.alerts.length === 0 ? read : null;
    });
    expect(after).toMatchObject({ id: sloId, endpoint_ids: null, project_id: projectId, alerts: [], status: 'ok' });
    expect(after.total).toBeGreaterThan(1020);
  });

  it('a project SLO whose last endpoint moves to another project ends its alert and resolves its incident', async () => {
    const { team, projectId, endpoint, sloId, slo, incident, resolvedDelivery } = await activeTicket('/ticket-project-endpoint-moved', 'project');
    const elsewhere = await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Elsewhere', description: '' });
    expect(elsewhere.statusCode).toBe(201);
    const moved = await t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`, { project_id: elsewhere.json().data.id });
    expect(moved.statusCode).toBe(200);
    expect(await resolvedDelivery()).toMatchObject({ id: incident.id, resolved_at: expect.any(String) });
    const after = await eventually('the project SLO without an alert', async () => {
      const read = await slo();
      return read.alerts.length === 0 ? read : null;
    });
    // The moved endpoint took its checks with it: the project measures nothing.
    expect(after).toMatchObject({ id: sloId, endpoint_ids: null, project_id: projectId, total: 0, alerts: [], status: 'ok' });
  });

  it('a burn incident kept open by auto_resolve off records its alert ending, awaits it again, and resolves when turned on with nothing burning', async () => {
    const { team, endpoint, sloId, incident, verified } = await activeTicket('/ticket-kept-open');
    const { token } = await t.issueToken(team.id, ['incidents:read', 'incidents:write'], 'editor');
    const read = async () => (await t.request('GET', `/api/public/v2/incidents/${incident.id}`, { token })).json().data;
    const setAutoResolve = async (on: boolean) => {
      const response = await t.request('PATCH', `/api/public/v2/incidents/${incident.id}/status`, { token, body: { auto_resolve: on } });
      expect(response.statusCode).toBe(200);
      return response.json().data;
    };
    const summaries = async () =>
      ((await t.admin('GET', `/api/v2/teams/${team.id}/incidents/${incident.id}/history`)).json().data.events as Array<{ summary: string }>).map((event) => event.summary);
    const count = async (type: string) => (await allEvents(t)).filter((e) => e.type === type && e.data.slo_id === sloId).length;
    expect((await setAutoResolve(false)).auto_resolve).toBe(false);

    // The ticket ends (good checks every second dilute the 30m window): kept open, and the history says so.
    expect((await t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}`, { interval_seconds: 1, timeout_seconds: 1 })).statusCode).toBe(200);
    await eventually('the ticket to recover', async () => (await count('SloBurnAlertRecovered')) === 1, { timeoutMs: 150_000 });
    await eventually('the history to say the alert ended', async () => (await summaries()).includes(ALERT_ENDED), 20_000);
    expect(await read()).toMatchObject({ auto_resolve: false, resolved_at: null });

    // Burning again: 20 bad checks imported 20 to 10 minutes ago (none in the 5m window: no page).
    const now = Date.now();
    const bad = Array.from({ length: 20 }, (_, i) => ({ checked_at: new Date(now - 20 * MINUTE_MS + i * 30_000).toISOString(), success: false, status_code: 503, latency_ms: 40 }));
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/checks/import`, { checks: bad })).statusCode).toBe(201);
    await eventually('the ticket to trigger again', async () => (await count('SloBurnAlertTriggered')) === 2, { timeoutMs: 60_000 });
    await eventually('the history to say it triggered again', async () => (await summaries()).some((summary) => summary.startsWith(`${TICKET} triggered again: SLO "Checkout"`)), 20_000);
    const burnIncidents = (await allEvents(t)).filter((e) => e.type === 'IncidentOpened' && e.data.metadata?.slo_id === sloId);
    expect(burnIncidents.map((e) => e.data.incident_id)).toEqual([incident.id]);
    // Awaited again: turning auto_resolve on resolves nothing while the ticket burns.
    expect(await setAutoResolve(true)).toMatchObject({ auto_resolve: true, resolved_at: null });

    // Off again, and the alert ends with its SLO: recorded, still open; turned on, it resolves at once.
    await setAutoResolve(false);
    expect((await t.admin('DELETE', `/api/v2/teams/${team.id}/slos/${sloId}`)).statusCode).toBe(204);
    await eventually('the history to say the alert ended again', async () => (await summaries()).filter((summary) => summary === ALERT_ENDED).length === 2, 20_000);
    expect((await read()).resolved_at).toBeNull();
    expect(await setAutoResolve(true)).toMatchObject({ auto_resolve: true, resolved_at: expect.any(String) });
    expect((await summaries()).slice(-2)).toEqual(['Automatic resolution turned on', 'Resolved (automatic): automatic resolution turned on after its alert had ended']);
    await eventually('incident.resolved delivered once', async () => verified('incident.resolved').filter((payload) => payload.data.incident.id === incident.id).length === 1);
    expect((await allEvents(t)).filter((e) => e.type === 'IncidentResolved' && e.data.incident_id === incident.id).map((e) => e.data.by)).toEqual(['automatic']);
  });
});
