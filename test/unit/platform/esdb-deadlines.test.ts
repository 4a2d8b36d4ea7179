import { createServer, type Server, type Socket } from 'node:net';
import { EsdbEventStore } from '../../../src/platform/event-store/eventstoredb/esdb-event-store.js';
import { StoreUnavailableError } from '../../../src/platform/event-store/event-store.port.js';

/**
 * A half-open EventStoreDB: it accepts TCP connections and never answers a byte. The real client
 * then waits forever on reads and subscriptions (it passes them no deadline) and on appends (it
 * waits for the connection first); our adapter must give up on its own deadline.
 */
describe('EventStoreDB adapter against a server that accepts and never answers', () => {
  let server: Server;
  const sockets = new Set<Socket>();
  let store: EsdbEventStore;
  const DEADLINE_MS = 300;

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    store = new EsdbEventStore(`esdb://127.0.0.1:${port}?tls=false`, { deadlineMs: DEADLINE_MS });
  });
  afterAll(async () => {
    await store.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  const unavailable = expect.objectContaining({ name: 'StoreUnavailableError', message: expect.stringContaining(`within ${DEADLINE_MS} ms`) });

  it('fails a stream read as "store unavailable" (HTTP 503) instead of hanging', async () => {
    const error = await store.readStream('checks-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toEqual(unavailable);
  });

  it('fails a read of the whole log, the head position and the readiness ping', async () => {
    await expect(store.readAll({ after: null, maxCount: 10 })).rejects.toEqual(unavailable);
    await expect(store.headPosition()).rejects.toEqual(unavailable);
    await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('fails an append', async () => {
    await expect(store.append('checks-1', [{ type: 'CheckRecorded', data: { ok: true } }], { expectedRevision: 'any' })).rejects.toEqual(unavailable);
  });

  it('ends a subscription the server never confirms with an error its consumer can retry on', async () => {
    const subscription = store.subscribeToAll({ after: null });
    const received: unknown[] = [];
    const error = await (async () => {
      for await (const event of subscription) received.push(event);
    })().catch((caught: unknown) => caught);
    expect(received).toEqual([]);
    expect(error).toEqual(expect.objectContaining({ name: 'StoreUnavailableError', message: expect.stringContaining('subscription') }));
  });
});
