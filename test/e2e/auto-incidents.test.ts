/**
 * Automatic incidents of a real outage (a local target that goes down and comes back), read
 * through the public incidents API: the incident holds the whole outage, and two reactors
 * running with no coordination still produce one incident with each check linked once.
 */
import { jest } from '@jest/globals';
import { ALL_SCOPES, type TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startHarness, startRogueIncidentReactor, type Harness, type Target } from './support.js';

jest.setTimeout(120_000);

const TRIGGER = { latency_trigger_count: 3, latency_trigger_window: 3, latency_recovery_count: 2 };

interface Outage {
  incidentId: number;
  failures: Array<{ check_id: number; checked_at: string }>;
  token: string;
}

/** Takes the target down until an incident opened and at least `failing` checks failed, then brings it back until the incident resolves. */
async function outage(t: TestApp, target: Target, failing: number): Promise<Outage> {
  const team = await t.createTeam('Outage');
  const { token } = await t.issueToken(team.id, ALL_SCOPES);
  const endpoint = await monitorTarget(t, team.id, target, 'health', { latency_detection_mode: 'off', ...TRIGGER });
  const checks = async () =>
    (await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && e.data.endpoint_id === endpoint.id && e.data.source === 'scheduled').map((e) => e.data);
  await eventually('a successful scheduled check', async () => (await checks()).some((c) => c.success));

  target.mode = { status: 503, delayMs: 0 };
  const opened = await eventually('an availability incident', async () =>
    (await allEvents(t)).find((e) => e.type === 'IncidentOpened' && e.data.endpoint_ids.includes(endpoint.id)),
  );
  await eventually(`${failing} failing checks`, async () => (await checks()).filter((c) => !c.success).length >= failing);
  target.mode = { status: 200, delayMs: 0 };
  await eventually('the incident to resolve', async () =>
    (await allEvents(t)).some((e) => e.type === 'IncidentResolved' && e.data.incident_id === opened.data.incident_id),
  );
  const failures = (await checks()).filter((c) => !c.success).map((c) => ({ check_id: c.check_id, checked_at: c.checked_at }));
  return { incidentId: opened.data.incident_id, failures, token };
}

describe('automatic incidents of a real outage', () => {
  let t: TestApp;
  let target: Target;
  let harness: Harness<{}> | undefined;
  beforeAll(async () => {
    ({ t, target } = harness = await startHarness({}));
  });
  afterAll(() => harness?.close());

  it('start at the first failure of the run and count every failing check of the outage', async () => {
    const { incidentId, failures, token } = await outage(t, target, 5);

    // The view follows the log: read it once it shows the resolution the log already holds.
    const incident = await eventually('the incident view to show the resolution', async () => {
      const response = await t.request('GET', `/api/public/v2/incidents/${incidentId}`, { token });
      expect(response.statusCode).toBe(200);
      const data = response.json().data;
      return data.resolved_at !== null ? data : null;
    });
    expect(incident.error_count).toBe(failures.length);
    expect(new Date(incident.first_error_at).toISOString()).toBe(new Date(failures[0].checked_at).toISOString());
    expect(new Date(incident.last_error_at).toISOString()).toBe(new Date(failures[failures.length - 1].checked_at).toISOString());
  });
});

describe('automatic incidents with two reactors and no coordination', () => {
  let t: TestApp;
  let target: Target;
  let stopRogue: (() => Promise<void>) | undefined;
  let harness: Harness<{}> | undefined;
  beforeAll(async () => {
    ({ t, target } = harness = await startHarness({}));
    stopRogue = await startRogueIncidentReactor(t);
  });
  afterAll(async () => {
    await stopRogue?.();
    await harness?.close();
  });

  it('open one incident and link each failing check once', async () => {
    const { incidentId, failures } = await outage(t, target, 4);

    const events = await allEvents(t);
    const endpointIncidents = events.filter((e) => e.type === 'IncidentOpened' && e.data.incident_id === incidentId);
    expect(endpointIncidents).toHaveLength(1);
    const opened = events.filter((e) => e.type === 'IncidentOpened' && e.data.endpoint_ids.includes(endpointIncidents[0].data.endpoint_ids[0]));
    expect(opened).toHaveLength(1);
    const linked = events.filter((e) => e.type === 'IncidentCheckLinked' && e.data.incident_id === incidentId).map((e) => e.data.check.id);
    expect(new Set(linked).size).toBe(linked.length);
    expect([...linked].sort((a, b) => a - b)).toEqual(failures.map((f) => f.check_id).sort((a, b) => a - b));
    expect(events.filter((e) => e.type === 'AutomaticIncidentClaimed')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'AlertSignalIncidentLinked' && e.data.incident_id === incidentId)).toHaveLength(1);
    expect(events.filter((e) => e.type === 'IncidentResolved' && e.data.incident_id === incidentId)).toHaveLength(1);
  });
});
