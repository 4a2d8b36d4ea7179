/**
 * /health/ready's checks each race a deadline: a check that answers leaves nothing running (a
 * timer per check per request outlived the answer by 2 s, and kept a finished test's jest worker
 * alive), and a check that does not answer is still named as timed out.
 */
import { jest } from '@jest/globals';
import { HealthController } from '../../../src/platform/health/health.controller.js';

function platformWith(eventStorePing: () => Promise<void>) {
  const ok = async () => undefined;
  return {
    events: { ping: eventStorePing },
    views: { ping: ok },
    coordination: { ping: ok },
    transport: { ping: ok },
    runner: { liveness: () => ({ live: true, behind: [] }) },
  };
}

describe('GET /health/ready', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('leaves no check deadline running once it has answered', async () => {
    const reply = { code: jest.fn() };
    const answer = await new HealthController(platformWith(async () => undefined) as never).ready(reply as never);
    expect(answer.status).toBe('ok');
    expect(reply.code).toHaveBeenCalledWith(200);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('names a check that does not answer within its deadline, and answers 503', async () => {
    const reply = { code: jest.fn() };
    const answering = new HealthController(platformWith(() => new Promise(() => {})) as never).ready(reply as never);
    await jest.advanceTimersByTimeAsync(2000);
    const answer = await answering;
    expect(answer).toMatchObject({ status: 'unavailable', checks: { event_store: 'unavailable: timed out', read_store: 'ok' } });
    expect(reply.code).toHaveBeenCalledWith(503);
  });
});
