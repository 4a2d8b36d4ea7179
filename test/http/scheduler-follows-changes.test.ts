import { jest } from '@jest/globals';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { allEvents, eventually, monitorTarget, startTarget, type Target } from '../e2e/support.js';

jest.setTimeout(60_000);

/** Due times (ms) of the endpoint's scheduled checks, in order. */
async function scheduledDues(t: TestApp, endpointId: number): Promise<number[]> {
  return (await allEvents(t))
    .filter((e) => e.type === 'CheckRecorded' && e.data.endpoint_id === endpointId && e.data.source === 'scheduled')
    .map((e) => Number(String(e.data.job_id).split(':')[1]))
    .sort((a, b) => a - b);
}

describe('the scheduler, probing the same endpoints for a while', () => {
  let t: TestApp;
  let target: Target;
  beforeAll(async () => {
    target = await startTarget();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await target.close();
  });

  async function probedEndpoint(teamId: number, path: string): Promise<number> {
    const endpoint = await monitorTarget(t, teamId, target, path, { interval_seconds: 1 });
    return endpoint.id;
  }

  it('follows an interval change and a new endpoint made after seconds with no change', async () => {
    const team = await t.createTeam();
    const first = await probedEndpoint(team.id, 'first');
    // Three slots of 1 s: the scheduler has looked at an unchanged list several times.
    await eventually('three scheduled checks of the first endpoint', async () => (await scheduledDues(t, first)).length >= 3);

    const patched = await t.admin('PATCH', `/api/v2/teams/${team.id}/endpoints/${first}`, { interval_seconds: 3600 });
    expect(patched.statusCode).toBe(200);
    const second = await probedEndpoint(team.id, 'second');

    // The new endpoint is scheduled, so the list was read again after the changes...
    const dues = await eventually('five scheduled checks of the second endpoint', async () => {
      const found = await scheduledDues(t, second);
      return found.length >= 5 ? found : null;
    });
    // ...and from then on the first endpoint is on its hour: none of its 1 s slots comes due
    // after the second endpoint's third (one slot already planned at the change may still run).
    const late = (await scheduledDues(t, first)).filter((due) => due > dues[2]);
    expect(late).toEqual([]);
  });
});
