/** The sender against a local receiver on a real socket: the deadline covers the whole exchange. */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Senders } from '../../../src/notifications/application/senders.js';
import type { Channel } from '../../../src/notifications/domain/channel.js';
import { startReceiver, type Receiver } from '../../support/notification-receiver.js';

describe('notification sender', () => {
  let receiver: Receiver;
  // The deadline tests use 0.2 s; the rest a deadline a loaded CI machine never reaches (a first
  // local POST there has taken more than 0.2 s).
  const impatient = new Senders({ blockPrivate: false, smtpUrl: null, emailFrom: 'x@localhost', timeoutMs: 200 });
  const senders = new Senders({ blockPrivate: false, smtpUrl: null, emailFrom: 'x@localhost', timeoutMs: 30_000 });
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await impatient.close();
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
    const outcome = await impatient.send(out());
    expect(outcome).toEqual({ delivered: false, status: null, error: `timeout: ${new URL(receiver.url).host} did not answer within 0.2 s` });
    expect(outcome.error).not.toContain('secret');
  });

  it('a 2xx within the deadline is delivered', async () => {
    receiver.delayMs = 0;
    expect(await senders.send(out())).toEqual({ delivered: true, status: 200, error: null });
  });

  it('sends the body to the URL\'s path and query with the Standard Webhooks headers', async () => {
    receiver.delayMs = 0;
    const before = receiver.received.length;
    await senders.send(out());
    const got = receiver.received[before];
    expect(got.path).toBe('/p?k=secret');
    expect(got.json).toEqual({ type: 'ping', timestamp: '2026-11-23T12:00:00.000Z', data: {} });
    expect(got.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-signature': expect.stringMatching(/^v1,/) });
  });

  describe('against receivers that misbehave', () => {
    let server: Server;
    let answer: (response: ServerResponse) => void;
    let url: string;
    beforeAll(async () => {
      server = createServer((request, response) => request.resume().on('end', () => answer(response)));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    });
    afterAll(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const to = (target: string) => ({ ...out(), channel: { ...channel(), config: { url: target } } });

    it('keeps the status of an answer whose body is larger than it reads', async () => {
      answer = (response) => response.writeHead(202).end(Buffer.alloc(1024 * 1024, 'x'));
      expect(await senders.send(to(url))).toEqual({ delivered: true, status: 202, error: null });
    });

    it('counts a body still trickling in at the deadline as a timeout', async () => {
      answer = (response) => {
        response.writeHead(200, { 'content-length': '1000' });
        const drip = setInterval(() => response.write('x'), 50);
        response.once('close', () => clearInterval(drip));
      };
      const outcome = await impatient.send(to(url));
      expect(outcome).toEqual({ delivered: false, status: null, error: expect.stringMatching(/^timeout: 127\.0\.0\.1:\d+ did not answer within 0\.2 s$/) });
    });

    it('reports a non-2xx answer with its status', async () => {
      answer = (response) => response.writeHead(503).end('busy');
      expect(await senders.send(to(url))).toEqual({ delivered: false, status: 503, error: 'status: 503' });
    });

    it('reports a refused connection without a status', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const outcome = await senders.send(to(`http://127.0.0.1:${port}/hook`));
      expect(outcome).toEqual({ delivered: false, status: null, error: expect.stringMatching(/^refused: /) });
    });
  });
});
