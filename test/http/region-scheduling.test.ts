import { jest } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { eventually, monitorTarget, startTarget, type Target } from '../e2e/support.js';
import type { ProbeJob } from '../../src/platform/transport/probe-transport.port.js';

jest.setTimeout(90_000);

/** Scheduling with regions, in the embedded process (one region: PROBE_REGION, here `local`). */
describe('scheduling an endpoint with regions', () => {
  let t: TestApp;
  let target: Target;
  const published: ProbeJob[] = [];
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp();
    const transport = t.platform.transport!;
    const publish = transport.publish.bind(transport);
    transport.publish = async (job) => {
      published.push(job);
      return publish(job);
    };
  });
  afterAll(async () => {
    await t.close();
    await target.close();
  });

  async function scheduled(regions: string[] | undefined) {
    const team = await t.createTeam();
    const { token } = await t.issueToken(team.id, ['monitoring:read']);
    const endpoint = await monitorTarget(t, team.id, target, 'r', regions ? { regions } : {});
    return { endpointId: endpoint.id, token };
  }

  const slotsOf = (endpointId: number) => {
    const bySlot = new Map<string, ProbeJob[]>();
    for (const job of published.filter((j) => j.endpointId === endpointId)) bySlot.set(job.scheduledAt, [...(bySlot.get(job.scheduledAt) ?? []), job]);
    return [...bySlot.values()];
  };

  it('publishes each slot once per region with its region, and once without a region for an endpoint without regions', async () => {
    const regional = await scheduled(['local', 'far-away', 'elsewhere']);
    const plain = await scheduled(undefined);
    await eventually('three slots of each endpoint', () => slotsOf(regional.endpointId).length >= 3 && slotsOf(plain.endpointId).length >= 3, 60_000);

    for (const jobs of slotsOf(regional.endpointId)) {
      const due = Date.parse(jobs[0].scheduledAt);
      expect(jobs.map((job) => [job.region, job.jobId]).sort()).toEqual(
        [
          ['elsewhere', `${regional.endpointId}:${due}:elsewhere`],
          ['far-away', `${regional.endpointId}:${due}:far-away`],
          ['local', `${regional.endpointId}:${due}:local`],
        ],
      );
    }
    for (const jobs of slotsOf(plain.endpointId)) {
      expect(jobs).toHaveLength(1);
      expect(jobs[0].region).toBeUndefined();
      expect(jobs[0].jobId).toBe(`${plain.endpointId}:${Date.parse(jobs[0].scheduledAt)}`);
    }

    // The embedded process is region `local`: it probes that region's jobs only.
    const checks = await eventually('checks of the regional endpoint', async () => {
      const response = await t.request('GET', `/api/public/v2/endpoints/${regional.endpointId}/checks?limit=100`, { token: regional.token });
      const data = response.json().data as Array<{ region: string }>;
      return data.length >= 2 && data;
    });
    expect(new Set(checks.map((check) => check.region))).toEqual(new Set(['local']));
  });
});
