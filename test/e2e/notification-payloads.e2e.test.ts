/**
 * What a delivery says agrees with what the public API answers once the event is applied: the
 * whole service probes a local target that fails exactly three times (the trigger's run), and
 * each delivered payload is compared, field by field, with the public incident and the
 * endpoint's alert-status.
 */
import { jest } from '@jest/globals';
import type { Receiver } from '../support/notification-receiver.js';
import { ALL_SCOPES, type TestApp } from '../support/test-app.js';
import { eventually, monitorTarget, startHarness, type Harness, type Target } from './support.js';

jest.setTimeout(120_000);

/** Three failures of three trigger; recovery needs 100 successes, so the incident stays open while compared. */
const RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 3, latency_trigger_window: 3, latency_recovery_count: 100 };

/** The fields of the public answer that the payload carries (the payload may add none of its own). */
function sameFields(publicAnswer: Record<string, unknown>, payload: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(payload).map((key) => [key, publicAnswer[key]]));
}

describe('notification payloads agree with the public API', () => {
  let t: TestApp;
  let target: Target;
  let receiver: Receiver;
  let harness: Harness<{ receiver: true }> | undefined;
  beforeAll(async () => {
    ({ t, target, receiver } = harness = await startHarness({ receiver: true }));
  });
  afterAll(() => harness?.close());

  it('alert.triggered names the incident it opened; incident.opened, .checkpoint_added and .resolved show the incident as the API does', async () => {
    const team = await t.createTeam('Payloads');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    await t.admin('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/ops` } });
    target.script = [503, 503, 503];
    const endpoint = await monitorTarget(t, team.id, target, 'health', RULES);

    await eventually('alert.triggered and incident.opened', async () => receiver.of('alert.triggered').length > 0 && receiver.of('incident.opened').length > 0);
    const opened = receiver.of('incident.opened')[0].json.data.incident;
    const triggered = receiver.of('alert.triggered')[0].json.data;

    // The opening links its trigger's three failing checks: the API shows them, and so does the delivery.
    const incident = await eventually('the public incident with its three failing checks', async () => {
      const data = (await t.request('GET', `/api/public/v2/incidents/${opened.id}`, { token })).json().data;
      return data?.error_count === 3 ? data : null;
    });
    expect(opened.error_count).toBe(3);
    expect(opened).toEqual(sameFields(incident, opened));
    expect(opened.last_error_at).not.toBe(opened.first_error_at);

    // The alert names the incident it opened, and its signal is the one alert-status shows.
    expect(triggered.incident_id).toBe(opened.id);
    const status = (await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/alert-status`, { token })).json().data;
    const availability = status.signals.find((s: { type: string }) => s.type === 'availability');
    expect(triggered.signal).toEqual(availability);
    expect(triggered.signal.incident_id).toBe(opened.id);

    const checkpoint = await t.request('POST', `/api/public/v2/incidents/${opened.id}/checkpoints`, { token, body: { title: 'Looking into it', body: 'The target answers 503.' } });
    expect(checkpoint.statusCode).toBe(201);
    await eventually('incident.checkpoint_added', async () => receiver.of('incident.checkpoint_added').length > 0);
    const withCheckpoint = (await t.request('GET', `/api/public/v2/incidents/${opened.id}`, { token })).json().data;
    const checkpointPayload = receiver.of('incident.checkpoint_added')[0].json.data;
    expect(checkpointPayload.incident).toEqual(sameFields(withCheckpoint, checkpointPayload.incident));
    expect(checkpointPayload.checkpoint).toEqual(withCheckpoint.checkpoints[0]);

    const resolved = await t.request('PATCH', `/api/public/v2/incidents/${opened.id}/status`, { token, body: { resolved: true } });
    expect(resolved.statusCode).toBe(200);
    await eventually('incident.resolved', async () => receiver.of('incident.resolved').length > 0);
    const resolvedPayload = receiver.of('incident.resolved')[0].json.data.incident;
    expect(resolvedPayload).toEqual(sameFields(resolved.json().data, resolvedPayload));
  });
});
