/**
 * The whole service (startTestApp) probing a local target on 127.0.0.1 that the test takes
 * down, brings back and slows down: scheduled checks, alert signals and automatic incidents,
 * once embedded and once over NATS JetStream.
 */
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ALL_SCOPES, type TestApp } from '../support/test-app.js';
import { describeWithNats } from '../support/nats-server.js';
import { allEvents, configuration, enableEndpoint, eventually, registerEndpoint, startHarness, type Harness, type Target } from './support.js';

jest.setTimeout(120_000);

const SETTINGS = {
  latency_detection_mode: 'fixed' as const,
  latency_fixed_threshold_ms: 250,
  latency_trigger_count: 2,
  latency_trigger_window: 3,
  latency_recovery_count: 2,
};

async function scenario(t: TestApp, target: Target): Promise<void> {
  const team = await t.createTeam('E2E');
  const { token: apiToken } = await t.issueToken(team.id, ALL_SCOPES);
  const endpoint = await registerEndpoint(t, team.id, configuration(`${target.url}/health`, SETTINGS));
  target.tokens.set(endpoint.id, endpoint.token);

  const verified = await t.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`);
  expect(verified.statusCode).toBe(200);
  expect(verified.json().data).toMatchObject({ id: endpoint.id, destination_verified: true });
  await enableEndpoint(t, team.id, endpoint.id);

  const checksOf = async () =>
    (await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && e.data.endpoint_id === endpoint.id).map((e) => e.data);
  await eventually('two scheduled checks', async () => (await checksOf()).filter((c) => c.source === 'scheduled' && c.success).length >= 2);

  const alertStatus = async () => {
    const response = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/alert-status`, { token: apiToken });
    expect(response.statusCode).toBe(200);
    return response.json().data;
  };
  expect((await alertStatus()).signals.map((s: any) => [s.type, s.state])).toEqual([
    ['availability', 'ok'],
    ['latency', 'ok'],
  ]);

  const incidentsOf = async (type: string) =>
    (await allEvents(t)).filter((e) => e.type === 'IncidentOpened' && e.data.endpoint_ids.includes(endpoint.id) && e.data.type === type).map((e) => e.data);

  // Down: an automatic availability incident opens and further failures are linked to it.
  target.mode = { status: 503, delayMs: 0 };
  const [down] = await eventually('an availability incident', async () => {
    const found = await incidentsOf('availability');
    return found.length > 0 ? found : null;
  });
  expect(down).toMatchObject({ source: 'automatic', severity: 'critical', auto_resolve: true, team_id: team.id });
  await eventually('failing checks linked to the incident', async () => {
    const links = (await allEvents(t)).filter((e) => e.type === 'IncidentCheckLinked' && e.data.incident_id === down.incident_id);
    return links.length >= 2 && links.every((l) => l.data.check.success === false);
  });
  await eventually('the availability signal to carry the incident', async () => {
    const signal = (await alertStatus()).signals.find((s: any) => s.type === 'availability');
    return signal.state === 'triggered' && signal.incident_id === down.incident_id;
  });

  // Back up: the signal recovers and the incident resolves.
  target.mode = { status: 200, delayMs: 0 };
  await eventually('the availability incident to resolve', async () =>
    (await allEvents(t)).some((e) => e.type === 'IncidentResolved' && e.data.incident_id === down.incident_id),
  );
  await eventually('the availability signal to recover', async () => (await alertStatus()).signals[0].state === 'ok');
  expect((await incidentsOf('availability')).length).toBe(1);

  // Slow: the latency signal triggers and opens a warning incident.
  target.mode = { status: 200, delayMs: 400 };
  const [slow] = await eventually('a latency incident', async () => {
    const found = await incidentsOf('latency');
    return found.length > 0 ? found : null;
  });
  expect(slow).toMatchObject({ source: 'automatic', severity: 'warning', auto_resolve: true });
  target.mode = { status: 200, delayMs: 0 };
  await eventually('the latency incident to resolve', async () =>
    (await allEvents(t)).some((e) => e.type === 'IncidentResolved' && e.data.incident_id === slow.incident_id),
  );

  // Each scheduled job is recorded once.
  const jobIds = (await checksOf()).filter((c) => c.source === 'scheduled').map((c) => c.job_id);
  expect(new Set(jobIds).size).toBe(jobIds.length);
}

describe('probing and alerting end to end, embedded', () => {
  let t: TestApp;
  let target: Target;
  let harness: Harness<{}> | undefined;
  beforeAll(async () => {
    ({ t, target } = harness = await startHarness({}));
  });
  afterAll(() => harness?.close());

  it('opens an automatic incident when the target goes down, resolves it on recovery, and raises latency when slow', async () => {
    await scenario(t, target);
  });
});

describeWithNats('probing and alerting end to end, over NATS JetStream', () => {
  let t: TestApp;
  let target: Target;
  let harness: Harness<{ appOverNats: true }> | undefined;
  beforeAll(async () => {
    ({ t, target } = harness = await startHarness({ appOverNats: true }));
  });
  afterAll(() => harness?.close());

  it('runs the same scenario with jobs going through NATS', async () => {
    await scenario(t, target);
  });
});
