/**
 * Flapping end to end (issue 26 item 3): the whole service probing a local target that the test
 * takes down and brings back again and again. One incident holds it all: the first recovery
 * resolves it (not flapping yet), the next trigger re-opens it instead of opening another, it
 * says `metadata.flapping: true` once, stays open through further recoveries, and resolves only
 * after the target stayed up for a whole flap window.
 */
import { jest } from '@jest/globals';
import type { Receiver } from '../support/notification-receiver.js';
import { ALL_SCOPES, type TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startHarness, startTarget, type Harness, type Target } from './support.js';

jest.setTimeout(300_000);

const SETTINGS = {
  latency_detection_mode: 'off' as const,
  latency_trigger_count: 1,
  latency_trigger_window: 1,
  latency_recovery_count: 1,
  flap_threshold: 3,
  // The smallest window allowed: each test waits it out once, the two at the same time.
  flap_window_seconds: 60,
};

// The two tests run concurrently (each waits out a whole flap window): each has its own target,
// team and endpoint, and only the first a notification channel.
describe('flapping end to end', () => {
  let t: TestApp;
  let target: Target;
  let secondTarget: Target | undefined;
  let receiver: Receiver;
  let harness: Harness<{ receiver: true }> | undefined;
  beforeAll(async () => {
    ({ t, target, receiver } = harness = await startHarness({ receiver: true }));
    secondTarget = await startTarget();
  });
  afterAll(async () => {
    await secondTarget?.close();
    await harness?.close();
  });

  async function flakyEndpoint(target: Target, settings: Record<string, unknown>) {
    const team = await t.createTeam('Flap');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const endpoint = await monitorTarget(t, team.id, target, 'flaky', settings);
    return { team, token, endpoint };
  }

  /** Down, up, down, ... `swings` times: each phase lasts until the signal has followed it. */
  async function alternate(target: Target, endpointId: number, swings: number) {
    const changes = async () => (await allEvents(t)).filter((e) => e.streamId === `alerts-${endpointId}` && /Triggered|Recovered/.test(e.type)).length;
    for (let swing = 0; swing < swings; swing++) {
      const before = await changes();
      target.mode = { status: swing % 2 === 0 ? 503 : 200, delayMs: 0 };
      await eventually(`swing ${swing + 1} to change the signal`, async () => (await changes()) > before);
    }
  }

  it.concurrent('notifies incident.opened once, incident.updated once when it starts flapping, incident.resolved once after a whole window up', async () => {
    const { team, token, endpoint } = await flakyEndpoint(target, { ...SETTINGS, flap_threshold: 2 });
    expect((await t.admin('POST', `/api/v2/teams/${team.id}/notification-channels`, { name: 'Ops', kind: 'webhook', config: { url: `${receiver.url}/ops` } })).statusCode).toBe(201);
    const alertStatus = async () => (await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/alert-status`, { token })).json().data;
    await eventually('a first check', async () => (await alertStatus()).signals !== undefined);
    // The only channel: every notification is this endpoint's.
    const incidentNotes = (type: string) => receiver.of(type);

    await alternate(target, endpoint.id, 4);
    target.mode = { status: 200, delayMs: 0 };
    await eventually('incident.resolved after the window', async () => incidentNotes('incident.resolved').length > 0, { timeoutMs: 150_000, intervalMs: 500 });
    expect(incidentNotes('incident.opened')).toHaveLength(1);
    expect(incidentNotes('incident.updated')).toHaveLength(1);
    expect(incidentNotes('incident.reopened')).toHaveLength(0);
    expect(incidentNotes('incident.resolved')).toHaveLength(1);
  });

  it.concurrent('a target alternating up and down gives one incident with metadata.flapping true, resolved once a whole window stayed up', async () => {
    const target = secondTarget!;
    const { token, endpoint } = await flakyEndpoint(target, SETTINGS);
    const incidentEvents = async (type: string) => {
      const opened = (await allEvents(t)).filter((e) => e.type === 'IncidentOpened' && e.data.endpoint_ids.includes(endpoint.id)).map((e) => e.data.incident_id);
      return (await allEvents(t)).filter((e) => e.type === type && opened.includes(e.data.incident_id)).map((e) => e.data);
    };
    const alertStatus = async () => (await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/alert-status`, { token })).json().data;
    await eventually('a first check', async () => (await alertStatus()).signals !== undefined);

    // Down, up, down, up, down.
    await alternate(target, endpoint.id, 5);
    // The view may still show an earlier swing (flapping since the third, the fourth's recovery)
    // when the log already holds the fifth: wait for the view to reach the last swing.
    const status = await eventually('alert status to show flapping and the last swing', async () => {
      const data = await alertStatus();
      return data.flapping === true && data.signals[0].state === 'triggered' ? data : null;
    });
    expect(status.signals[0].state).toBe('triggered');
    const [incidentId] = await eventually('the incident to say it flaps', async () => {
      const updates = (await incidentEvents('IncidentDetailsUpdated')).filter((u) => u.changes.metadata?.to?.flapping === true);
      return updates.length > 0 ? updates.map((u) => u.incident_id) : null;
    });
    const incident = (await t.request('GET', `/api/public/v2/incidents/${incidentId}`, { token })).json().data;
    expect(incident).toMatchObject({ metadata: { flapping: true }, resolved_at: null });
    expect((await incidentEvents('IncidentOpened')).map((o) => o.incident_id)).toEqual([incidentId]);
    // Resolved once before flapping was known (2 changes), then re-opened by the third.
    expect((await incidentEvents('IncidentReopened')).map((r) => r.incident_id)).toEqual([incidentId]);

    // Up again: the recovery leaves the incident open; it resolves once a whole window stayed up.
    target.mode = { status: 200, delayMs: 0 };
    await eventually('the signal to recover', async () => (await alertStatus()).signals[0].state === 'ok');
    expect((await t.request('GET', `/api/public/v2/incidents/${incidentId}`, { token })).json().data.resolved_at).toBeNull();
    await eventually('the incident to resolve after the window', async () => (await incidentEvents('IncidentResolved')).length === 2, { timeoutMs: 150_000, intervalMs: 500 });
    const resolved = (await incidentEvents('IncidentResolved')).map((r) => r.incident_id);
    expect(resolved).toEqual([incidentId, incidentId]);
    expect((await alertStatus()).flapping).toBe(false);
    expect((await incidentEvents('IncidentDetailsUpdated')).filter((u) => u.changes.metadata)).toHaveLength(1);
    expect((await incidentEvents('IncidentOpened'))).toHaveLength(1);
  });
});
