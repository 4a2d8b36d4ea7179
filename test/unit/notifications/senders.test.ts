/** The sender against a local receiver on a real socket: the deadline covers the whole exchange. */
import { Senders } from '../../../src/notifications/application/senders.js';
import type { Channel } from '../../../src/notifications/domain/channel.js';
import { startReceiver, type Receiver } from '../../support/notification-receiver.js';

describe('notification sender', () => {
  let receiver: Receiver;
  const senders = new Senders({ blockPrivate: false, smtpUrl: null, emailFrom: 'x@localhost', timeoutMs: 200 });
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await senders.close();
    await receiver.close();
  });

  const channel = (): Channel => ({
    id: 1, team_id: 1, kind: 'webhook', name: 'h', events: null, project_ids: null, enabled: true, config: { url: `${receiver.url}/p?k=secret` },
    secrets: [{ secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}`, expires_at: null }], disabled_reason: null, deleted: false, created_at: '', updated_at: '',
  });
  const out = () => ({ deliveryId: 'msg_1', channel: channel(), payload: { type: 'ping' as const, timestamp: '2026-11-23T12:00:00.000Z', data: {} }, endpointNames: new Map() });

  it('a receiver that does not answer in time is a failed attempt without a status, naming the host only', async () => {
    receiver.delayMs = 2_000;
    const outcome = await senders.send(out());
    expect(outcome).toEqual({ delivered: false, status: null, error: `timeout: ${new URL(receiver.url).host} did not answer within 0.2 s` });
    expect(outcome.error).not.toContain('secret');
  });

  it('a 2xx within the deadline is delivered', async () => {
    receiver.delayMs = 0;
    expect(await senders.send(out())).toEqual({ delivered: true, status: 200, error: null });
  });
});
