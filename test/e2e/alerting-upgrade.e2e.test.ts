/**
 * Upgrade from a data dir whose check streams hold alert signals (the layout before
 * `alerts-<endpointId>`): those events stay where they are and are folded with the new ones.
 * The old layout is built by appending the old events directly while only an `api` process runs
 * (no reactor); then a full service starts on the same files. Observed through the public API.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { configuration, enableEndpoint, eventually, registerEndpoint, startTarget, type Target } from './support.js';

jest.setTimeout(120_000);

const TRIGGER = { latency_detection_mode: 'off' as const, latency_trigger_count: 3, latency_trigger_window: 3, latency_recovery_count: 2 };

describe('alerting after an upgrade from signals in the check stream', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'alerting-upgrade-'));
  let t: TestApp | null = null;
  let target: Target;
  afterAll(async () => {
    await t?.close();
    await target?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('opens the incident of a trigger recorded in the check stream, shows it in the alert status, and resolves it when new checks recover', async () => {
    target = await startTarget();
    t = await startTestApp({ ROLE: 'api', DATA_DIR: dataDir });
    const team = await t.createTeam('Upgraded');
    const { token } = await t.issueToken(team.id, ALL_SCOPES);
    const endpoint = await registerEndpoint(t, team.id, configuration(`${target.url}/health`, TRIGGER));
    target.tokens.set(endpoint.id, endpoint.token);
    const [registered] = await t.platform.events.readStream(`endpoint-${endpoint.id}`);
    const projectId = (registered.data as { project_id: number }).project_id;

    // The old layout: three failing scheduled checks and the trigger, all on checks-<id>.
    const failures = [];
    for (let i = 0; i < 3; i++) {
      const at = new Date(Date.now() - (3 - i) * 60_000).toISOString();
      failures.push({
        check_id: await t.platform.ids.next('check'),
        team_id: team.id,
        project_id: projectId,
        endpoint_id: endpoint.id,
        configuration_version: 1,
        source: 'scheduled',
        job_id: `old-job-${i}`,
        success: false,
        status_code: 503,
        latency_ms: 20,
        time_to_first_byte_ms: 20,
        duration_ms: 20,
        body_complete: true,
        failure_reason: 'status: 503',
        response_excerpt: null,
        checked_at: at,
        alert_suppressed: false,
        latency_anomaly: false,
        latency_threshold_ms: null,
        imported: false,
      });
    }
    const last = failures[2];
    await t.platform.events.append(
      `checks-${endpoint.id}`,
      [
        ...failures.map((data) => ({ type: 'CheckRecorded', data, metadata: { occurred_at: data.checked_at } })),
        {
          type: 'AlertSignalTriggered',
          data: { endpoint_id: endpoint.id, team_id: team.id, project_id: projectId, signal: 'availability', check_id: last.check_id, at: last.checked_at },
          metadata: { occurred_at: last.checked_at },
        },
      ],
      { expectedRevision: 'no_stream' },
    );
    await t.close();

    // The new version starts on those files: reactor, scheduler and prober run.
    t = await startTestApp({ DATA_DIR: dataDir });
    const app = t;
    const status = async () => (await app.request('GET', `/api/public/v2/endpoints/${endpoint.id}/alert-status`, { token })).json().data;
    const triggered = await eventually('the alert status to name the incident', async () => {
      const availability = (await status()).signals.find((s: { type: string }) => s.type === 'availability');
      return availability.state === 'triggered' && availability.incident_id !== null ? availability : null;
    });
    expect(triggered.since).toBe(last.checked_at);
    const incident = (await app.request('GET', `/api/public/v2/incidents/${triggered.incident_id}`, { token })).json().data;
    expect(incident).toMatchObject({ resolved_at: null, error_count: 3 });
    expect(new Date(incident.first_error_at).toISOString()).toBe(failures[0].checked_at);

    // New checks succeed: the signal recovers from the state the old events left, and the
    // automatic incident resolves.
    expect((await app.admin('POST', `/api/v2/teams/${team.id}/endpoints/${endpoint.id}/verify-destination`)).statusCode).toBe(200);
    await enableEndpoint(app, team.id, endpoint.id);
    await eventually('the incident to resolve', async () => {
      const response = await app.request('GET', `/api/public/v2/incidents/${triggered.incident_id}`, { token });
      return response.json().data.resolved_at !== null;
    });
    const after = await eventually('the alert status to recover', async () => {
      const availability = (await status()).signals.find((s: { type: string }) => s.type === 'availability');
      return availability.state === 'ok' ? availability : null;
    });
    expect(after.incident_id).toBeNull();
    // The old events stay where they were; the new signal events went to the alerts stream.
    const checkStreamTypes = new Set((await app.platform.events.readStream(`checks-${endpoint.id}`)).map((e) => e.type));
    expect([...checkStreamTypes].sort()).toEqual(['AlertSignalTriggered', 'CheckRecorded']);
    expect((await app.platform.events.readStream(`alerts-${endpoint.id}`)).map((e) => e.type)).toEqual([
      'AlertSignalsCarriedOver',
      'AlertSignalIncidentLinked',
      'AlertSignalRecovered',
    ]);
  });
});
