/**
 * The whole service probing a local target that goes down and comes back, with a webhook
 * receiver on a real socket: the receiver gets alert.triggered and incident.opened, then
 * alert.recovered and incident.resolved, each verified with the `standardwebhooks` package.
 * Checks suppressed by a maintenance window never notify.
 */
import { jest } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Receiver, signatureHeaders } from '../support/notification-receiver.js';
import { ALL_SCOPES, type TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startHarness, startTarget, type Harness, type Target } from './support.js';

jest.setTimeout(120_000);

const RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 2 };

function monitoredEndpoint(t: TestApp, teamId: number, target: Target) {
  return monitorTarget(t, teamId, target, 'health', RULES);
}

describe('notifications end to end', () => {
  let t: TestApp;
  let target: Target;
  let receiver: Receiver;
  let harness: Harness<{ receiver: true }> | undefined;
  beforeAll(async () => {
    ({ t, target, receiver } = harness = await startHarness({ receiver: true }));
  });
  afterAll(() => harness?.close());

  it('an outage notifies alert.triggered and incident.opened; recovery alert.recovered and incident.resolved', async () => {
    const team = await t.createTeam('Outage');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const created = await t.admin('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/ops` } });
    const { secret } = created.json().data;
    const endpoint = await monitoredEndpoint(t, team.id, target);
    await eventually('a successful scheduled check', async () =>
      (await allEvents(t)).some((e) => e.type === 'CheckRecorded' && e.data.endpoint_id === endpoint.id && e.data.success),
    );

    target.mode = { status: 503, delayMs: 0 };
    await eventually('alert.triggered and incident.opened', async () => receiver.of('alert.triggered').length > 0 && receiver.of('incident.opened').length > 0);
    target.mode = { status: 200, delayMs: 0 };
    await eventually('alert.recovered and incident.resolved', async () => receiver.of('alert.recovered').length > 0 && receiver.of('incident.resolved').length > 0);

    const webhook = new Webhook(secret);
    const verified = receiver.received.map((r) =>
      webhook.verify(r.body, signatureHeaders(r)),
    ) as any[];
    const triggered = verified.find((v) => v.type === 'alert.triggered');
    const opened = verified.find((v) => v.type === 'incident.opened');
    // The alert names the incident it opened.
    expect(triggered.data).toMatchObject({ endpoint_id: endpoint.id, signal: { type: 'availability', state: 'triggered', since: expect.any(String), incident_id: opened.data.incident.id }, incident_id: opened.data.incident.id });
    expect(opened.data.incident).toMatchObject({ source: 'automatic', severity: 'critical', endpoint_ids: [endpoint.id], resolved_at: null });
    const recovered = verified.find((v) => v.type === 'alert.recovered');
    // The recovery names the incident it resolves; its signal is as alert-status shows it (no incident).
    expect(recovered.data).toMatchObject({ endpoint_id: endpoint.id, signal: { type: 'availability', state: 'ok', incident_id: null }, incident_id: opened.data.incident.id });
    const resolved = verified.find((v) => v.type === 'incident.resolved');
    expect(resolved.data.incident).toMatchObject({ id: opened.data.incident.id, resolved_at: expect.any(String) });
    const publicView = (await t.request('GET', `/api/public/v2/incidents/${opened.data.incident.id}`, { token })).json().data;
    expect(resolved.data.incident.resolved_at).toBe(publicView.resolved_at);
    // One delivery per event per channel: no webhook-id arrives twice from a 2xx receiver.
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('checks suppressed by maintenance never notify', async () => {
    const team = await t.createTeam('Quiet');
    const quiet = await startReceiver();
    try {
      await t.admin('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${quiet.url}/ops` } });
      const start = new Date(Date.now() - 60_000).toISOString();
      const end = new Date(Date.now() + 3600_000).toISOString();
      expect((await t.admin('POST', `/api/v2/teams/${team.id}/maintenance-windows`, { starts_at: start, ends_at: end, reason: 'upgrade' })).statusCode).toBe(201);
      const down = await startTarget();
      down.mode = { status: 503, delayMs: 0 };
      try {
        const endpoint = await monitoredEndpoint(t, team.id, down);
        await eventually('five suppressed failing checks', async () =>
          (await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && e.data.endpoint_id === endpoint.id && !e.data.success && e.data.alert_suppressed).length >= 5,
        );
        // The reactor records deliveries in log order: once the ping sent now is listed, anything
        // the failing checks had raised would be listed too. The channel itself works.
        const channels = `/api/v2/teams/${team.id}/notification-channels`;
        const channelId = (await t.admin('GET', channels)).json().data[0].id;
        await t.admin('POST', `${channels}/${channelId}/test`);
        await eventually('the ping', async () => quiet.of('ping').length > 0);
        const listed = (await t.admin('GET', `${channels}/${channelId}/deliveries`)).json().data;
        expect(listed.map((d: any) => d.type)).toEqual(['ping']);
        expect(quiet.received.map((r) => r.json.type)).toEqual(['ping']);
      } finally {
        await down.close();
      }
    } finally {
      await quiet.close();
    }
  });
});
