/**
 * A probe job older than its endpoint's interval when a prober takes it is dropped, not probed,
 * and counted in `GET /metrics` as monitor_probe_jobs_dropped_total{reason="stale"}.
 */
import { jest } from '@jest/globals';
import { ProbingWorkers } from '../../src/probing/application/probing-workers.js';
import { monitorTarget, startTarget, type Target } from '../e2e/support.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { waitForAsync } from '../contract/probe-transport.contract.js';

jest.setTimeout(30_000);

async function dropped(t: TestApp, reason: string): Promise<number> {
  const response = await t.request('GET', '/metrics');
  const line = response.body.split('\n').find((l) => l.startsWith('monitor_probe_jobs_dropped_total{') && l.includes(`reason="${reason}"`));
  if (!line) throw new Error(`no monitor_probe_jobs_dropped_total{reason="${reason}"} in the scrape`);
  return Number(line.split(' ').at(-1));
}

describe('stale probe jobs', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await target?.close();
  });

  it('drops a job older than its maxAgeMs without probing and counts it in /metrics', async () => {
    const team = await t.createTeam('Stale');
    const endpoint = await monitorTarget(t, team.id, target, 'ok', {}, { enabled: false });
    const hitsBefore = target.hits;
    expect(await dropped(t, 'stale')).toBe(0); // shown from the start, so rate() works before the first drop
    expect(await dropped(t, 'max_deliver')).toBe(0);

    // Every prober is down while the job waits past its limit.
    const workers = t.app.get(ProbingWorkers);
    await workers.worker.stop();
    const transport = t.platform.transport!;
    await transport.publish({ jobId: `${endpoint.id}:stale`, teamId: team.id, endpointId: endpoint.id, configurationVersion: 1, source: 'manual', scheduledAt: new Date().toISOString(), maxAgeMs: 100 });
    await new Promise((resolve) => setTimeout(resolve, 300)); // the job ages past its 100 ms
    await workers.worker.start();

    await waitForAsync(async () => (await transport.pending()) === 0, 'the stale job to leave the queue');
    expect(await dropped(t, 'stale')).toBe(1);
    expect(target.hits).toBe(hitsBefore);
    const reader = await t.issueToken(team.id, ['monitoring:read'], 'viewer');
    const checks = await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/checks`, { token: reader.token });
    expect(checks.statusCode).toBe(200);
    expect(checks.json().data).toEqual([]);
  });
});
