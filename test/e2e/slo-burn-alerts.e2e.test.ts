/**
 * The whole service (startTestApp) probing a local target every second, with an SLO of 99 %
 * over the endpoint: the target fails, the SLO's page alert triggers and opens a critical
 * `slo_burn` incident within a minute; the target is healthy again, the page alert recovers and
 * the incident resolves. The SLO's figures and gauges show it all along.
 */
import { jest } from '@jest/globals';
import type { Receiver } from '../support/notification-receiver.js';
import type { TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startHarness, type Harness, type Target } from './support.js';

jest.setTimeout(180_000);

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
});
