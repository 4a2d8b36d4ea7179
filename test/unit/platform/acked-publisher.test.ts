/**
 * A publish's acknowledgement that has reached the socket is not failed as overdue. The loop
 * runs due timers before it reads sockets, so a sweep fired in the timers phase after a long
 * task failed publishes whose ack was already waiting to be read (seen on a loaded CI host as
 * "no acknowledgement within 5000 ms" in a saturation run of a local nats-server).
 */
import { jest } from '@jest/globals';
import { connect, type NatsConnection } from 'nats';
import { AckedPublisher } from '../../../src/platform/transport/nats/acked-publisher.js';
import { describeWithNats, startNatsServer, type TestNatsServer } from '../../support/nats-server.js';

jest.setTimeout(60_000);

/** Holds the event loop in one task for `ms` (what a long synchronous step of the service does). */
function holdLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

describeWithNats('AckedPublisher', () => {
  let server: TestNatsServer;
  let nc: NatsConnection;
  beforeAll(async () => {
    server = (await startNatsServer())!;
    nc = await connect({ servers: server.url });
    await (await nc.jetstreamManager()).streams.add({ name: 'ACKTEST', subjects: ['acktest.>'] });
  });
  afterAll(async () => {
    await nc?.close();
    await server?.stop();
  });

  it('settles a publish whose ack arrived while the loop was held past its deadline', async () => {
    const publisher = new AckedPublisher(nc, 200);
    const stored = publisher.publish('acktest.one', new TextEncoder().encode('{}'), 'one', 'publish one');
    // The PUB leaves in a microtask; the stream acks while the loop is held, past the 200 ms
    // deadline and the 1 s sweep: both the ack and the sweep are due when the loop turns.
    await Promise.resolve();
    holdLoop(1_500);
    await expect(stored).resolves.toBeUndefined();
    publisher.close();
  });

  it('still fails a publish nobody acknowledges once its deadline has passed', async () => {
    const publisher = new AckedPublisher(nc, 200);
    // A plain subscriber takes the subject (so NATS reports no missing responder) and never answers.
    const silent = nc.subscribe('silent.one');
    const unanswered = publisher.publish('silent.one', new TextEncoder().encode('{}'), 'two', 'publish two');
    await expect(unanswered).rejects.toThrow('NATS unavailable: publish two (no acknowledgement within 200 ms)');
    silent.unsubscribe();
    publisher.close();
  });
});
