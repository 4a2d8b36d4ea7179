/**
 * Channel URLs and secrets are hidden values: no response, log line or delivery record holds
 * them. Channel URLs pass the probes' address guard (PROBE_BLOCK_PRIVATE). A slow receiver
 * holds only its own channel.
 */
import { ATTEMPTS, DELIVERY_WORKER, RETRIES } from '../../src/notifications/application/attempt-store.js';
import { jest } from '@jest/globals';
import { pino } from 'pino';
import { eventually } from '../e2e/support.js';
import { startReceiver, type Receiver } from '../support/notification-receiver.js';
import { startedBeforeAll } from '../support/started-before-all.js';
import { startTestApp, type TestApp } from '../support/test-app.js';
import { CHANNELS, DELIVERIES, NOTIFICATIONS_VIEW } from '../../src/notifications/reactors/notifications/view.js';

jest.setTimeout(60_000);

describe('notification privacy', () => {
  const lines: string[] = [];
  const bodies: string[] = [];
  let receiver: Receiver;
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  const t = startedBeforeAll(() => startTestApp({ LOG_LEVEL: 'debug', NOTIFY_RETRY_SCHEDULE_MS: '20' }, { logger }), (started) => started.close());

  const admin = async (method: string, url: string, body?: unknown) => {
    const response = await t.admin(method, url, body);
    bodies.push(response.body);
    return response;
  };

  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('keeps URLs, secrets and routing keys out of responses, logs and delivery records', async () => {
    const team = (await admin('POST', '/api/v2/teams', { name: 'Private' })).json().data;
    const base = `/api/v2/teams/${team.id}/notification-channels`;
    const hidden = ['P4TH-S3CRET', 'Q-S3CRET', 'RK-S3CRET', 'user:pa55'];
    const hook = (await admin('POST', base, { name: 'Hook', kind: 'webhook', config: { url: `http://user:pa55@${new URL(receiver.url).host}/P4TH-S3CRET?q=Q-S3CRET` } })).json().data;
    hidden.push(hook.secret);
    const rotated = (await admin('POST', `${base}/${hook.id}/rotate-secret`)).json().data;
    hidden.push(rotated.secret);
    const pd = (await admin('POST', base, { name: 'PD', kind: 'pagerduty', config: { routing_key: 'RK-S3CRET', url: `${receiver.url}/P4TH-S3CRET` } })).json().data;
    const dead = (await admin('POST', base, { name: 'Dead', kind: 'slack', config: { url: 'http://127.0.0.1:9/P4TH-S3CRET' } })).json().data;
    receiver.queue.push(500);
    for (const channel of [hook, pd, dead]) expect((await admin('POST', `${base}/${channel.id}/test`)).statusCode).toBe(202);
    for (const channel of [hook, pd, dead]) {
      await eventually('settled', async () => {
        const [delivery] = (await admin('GET', `${base}/${channel.id}/deliveries`)).json().data;
        return delivery && delivery.state !== 'pending';
      });
    }
    await admin('GET', base);
    await admin('PATCH', `${base}/${hook.id}`, { config: { url: `${receiver.url}/P4TH-S3CRET/new` } });
    expect(receiver.received.length).toBeGreaterThanOrEqual(3);

    const records = JSON.stringify([
      ...(await t.platform.reader.find(NOTIFICATIONS_VIEW, DELIVERIES, {})),
      ...(await t.platform.reader.find(NOTIFICATIONS_VIEW, CHANNELS, {})),
      ...(await t.platform.reader.find(DELIVERY_WORKER, ATTEMPTS, {})),
      ...(await t.platform.reader.find(DELIVERY_WORKER, RETRIES, {})),
    ]);
    const logs = lines.join('\n');
    expect(logs).toContain('notification attempt');
    for (const value of hidden) {
      for (const [where, text] of [['responses', bodies.join('\n').replace(hook.secret, '').replace(rotated.secret, '')], ['logs', logs], ['records', records]] as const) {
        expect({ where, leaked: text.includes(value) ? value : null }).toEqual({ where, leaked: null });
      }
    }
  });
});

describe('notification channels and the address guard', () => {
  let t: TestApp;
  let slow: Receiver;
  let fast: Receiver;
  beforeAll(async () => {
    slow = await startReceiver();
    fast = await startReceiver();
    t = await startTestApp({ PROBE_BLOCK_PRIVATE: 'true' });
  });
  afterAll(async () => {
    await t?.close();
    await slow?.close();
    await fast?.close();
  });

  it('refuses a private IP literal at once and a hostname resolving to one when delivering', async () => {
    const team = await t.createTeam('Guarded');
    const base = `/api/v2/teams/${team.id}/notification-channels`;
    const literal = await t.admin('POST', base, { name: 'L', kind: 'webhook', config: { url: 'http://169.254.169.254/latest' } });
    expect(literal.statusCode).toBe(400);
    expect(literal.json().errors).toEqual([expect.objectContaining({ field: 'config.url', code: 'blocked_address' })]);
    const named = (await t.admin('POST', base, { name: 'N', kind: 'webhook', config: { url: `http://localhost:${new URL(fast.url).port}/x` } })).json().data;
    await t.admin('POST', `${base}/${named.id}/test`);
    const delivery = await eventually('a refused attempt', async () => {
      const [d] = (await t.admin('GET', `${base}/${named.id}/deliveries`)).json().data;
      return d && d.attempts > 0 ? d : null;
    });
    expect(delivery).toMatchObject({ last_status_code: null, state: 'pending' });
    expect(delivery.last_error).toMatch(/^blocked: localhost resolves to a non-public address/);
    expect(fast.received).toHaveLength(0);
  });
});

describe('a slow receiver', () => {
  let t: TestApp;
  let slow: Receiver;
  let fast: Receiver;
  beforeAll(async () => {
    slow = await startReceiver();
    slow.delayMs = 60_000;
    fast = await startReceiver();
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
    await slow?.close();
    await fast?.close();
  });

  it('holds only its own channel: another channel is delivered and the API answers meanwhile', async () => {
    const team = await t.createTeam('Slow');
    const base = `/api/v2/teams/${team.id}/notification-channels`;
    const held = (await t.admin('POST', base, { name: 'Slow', kind: 'webhook', config: { url: `${slow.url}/slow` } })).json().data;
    const quick = (await t.admin('POST', base, { name: 'Fast', kind: 'discord', config: { url: `${fast.url}/fast` } })).json().data;
    for (let i = 0; i < 5; i++) await t.admin('POST', `${base}/${held.id}/test`);
    await eventually('the slow receiver to hold a request', async () => slow.received.length > 0);
    await t.admin('POST', `${base}/${quick.id}/test`);
    await eventually('the other channel delivered', async () => fast.received.length > 0);
    const heldDeliveries = (await t.admin('GET', `${base}/${held.id}/deliveries`)).json().data;
    expect(heldDeliveries).toHaveLength(5);
    expect(heldDeliveries.every((d: any) => d.state === 'pending' && d.attempts === 0)).toBe(true);
    expect(slow.received.length).toBe(1);
  });
});
