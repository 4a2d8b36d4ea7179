/**
 * An `api` process serves HTTP only: it neither publishes nor takes probe jobs (manual checks run
 * in the process itself), so the probe queue being down must not stop it starting nor take it
 * out of a balancer's rotation. It used to open the NATS connection like a scheduler: with NATS
 * unreachable it exited at start, and a running one answered /health/ready 503, so a NATS outage
 * took every API process (and the status pages) off the balancer. Real process, NATS_URL naming
 * a port nothing listens on, beside a projector on the same DATA_DIR.
 */
import { jest } from '@jest/globals';
import { callService, freePort, suiteServices } from '../support/service-process.js';
import { eventually } from '../support/eventually.js';
import { startedBeforeAll } from '../support/started-before-all.js';

jest.setTimeout(120_000);

const ADMIN = 'api-without-nats-admin-token-0123456789';

describe('an api process whose NATS_URL is unreachable', () => {
  const services = startedBeforeAll(() => suiteServices('api-without-nats-'), (started) => started.close());

  it('starts, reports ready without a probe queue check, and serves writes and reads', async () => {
    const unreachable = `nats://127.0.0.1:${await freePort()}`;
    // The views a write waits for are applied by a projector, which has no queue either.
    await services.start({ ROLE: 'projector', ADMIN_TOKEN: ADMIN });
    const api = await services.start({ ROLE: 'api', ADMIN_TOKEN: ADMIN, NATS_URL: unreachable });

    let answer: { status: string; checks: Record<string, string> } | undefined;
    await eventually('the api process to answer /health/ready with 200', async () => {
      const response = await fetch(`${api.url}/health/ready`);
      answer = (await response.json()) as typeof answer;
      return response.status === 200;
    }).catch((error: Error) => {
      throw new Error(`${error.message}: last answer ${JSON.stringify(answer)}\n${api.output()}`);
    });
    expect(answer!.checks).not.toHaveProperty('probe_transport');

    const team = await callService(api, 'POST', '/api/v2/teams', ADMIN, { name: 'No queue needed' });
    expect(team.status).toBe(201);
    const listed = await callService(api, 'GET', '/api/v2/teams', ADMIN);
    expect(listed.body.data.map((item: { name: string }) => item.name)).toContain('No queue needed');
  });
});
