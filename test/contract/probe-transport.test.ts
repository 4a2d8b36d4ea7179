import { randomUUID } from 'node:crypto';
import { connect } from 'nats';
import { InProcessTransport } from '../../src/platform/transport/in-process/in-process-transport.js';
import { NatsTransport } from '../../src/platform/transport/nats/nats-transport.js';
import { createProbeTransport } from '../../src/platform/transport/create-probe-transport.js';
import { StoreUnavailableError } from '../../src/platform/event-store/event-store.port.js';
import type { JobDelivery, ProbeTransport } from '../../src/platform/transport/probe-transport.port.js';
import { NATS_SKIP_REASON, startNatsServer } from '../support/nats-server.js';
import { startTransportWorker } from '../support/fixtures/start-transport-worker.js';
import { job, probeTransportContract, waitFor, waitForAsync } from './probe-transport.contract.js';

probeTransportContract('in-process adapter', async () => new InProcessTransport());

const nats = await startNatsServer();
const streams: string[] = [];

/** A fresh stream per transport, so tests never see each other's jobs. */
function natsNames() {
  const id = randomUUID().replaceAll('-', '');
  const names = { stream: `TEST_${id}`, subject: `test.${id}.jobs`, durable: 'probers' };
  streams.push(names.stream);
  return names;
}

if (nats) {
  const url = nats.url;
  afterAll(async () => {
    await deleteStreams(url, streams);
    await nats.stop();
  });

  probeTransportContract('NATS adapter', () => NatsTransport.connect({ url, ...natsNames(), pullExpiresMs: 1000 }));

  describe('NATS adapter, worker crash', () => {
    it('redelivers a job held by a killed worker process to another consumer, exactly once', async () => {
      const names = natsNames();
      const transport = await NatsTransport.connect({ url, ...names });
      try {
        await transport.publish(job('crash-1'));
        const worker = await startTransportWorker({ url, ...names, ackWaitMs: 500 });
        expect(await worker.firstDelivery).toEqual({ jobId: 'crash-1', deliveryCount: 1 });
        await worker.kill();

        const received: JobDelivery[] = [];
        const consumer = await transport.consume(
          async (delivery) => {
            received.push(delivery);
          },
          { maxInFlight: 1, ackWaitMs: 500 },
        );
        await waitFor(() => received.length === 1, 'the orphaned job to be redelivered');
        await waitForAsync(async () => (await transport.pending()) === 0, 'the job to be acknowledged');
        await consumer.stop();

        expect(received.map((d) => [d.job.jobId, d.deliveryCount])).toEqual([['crash-1', 2]]);
      } finally {
        await transport.close();
      }
    });
  });
} else {
  describe.skip(`NATS adapter (skipped: ${NATS_SKIP_REASON})`, () => {
    it('runs the probe transport contract against NATS JetStream', () => {});
  });
}

describe('createProbeTransport', () => {
  it('runs in process when no NATS URL is configured', async () => {
    const transport: ProbeTransport = await createProbeTransport({ natsUrl: null });
    expect(transport).toBeInstanceOf(InProcessTransport);
    await transport.close();
  });

  it('reports an unreachable NATS server as StoreUnavailableError', async () => {
    await expect(createProbeTransport({ natsUrl: 'nats://127.0.0.1:1' })).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
  });
});

async function deleteStreams(url: string, names: string[]): Promise<void> {
  const nc = await connect({ servers: url });
  const jsm = await nc.jetstreamManager();
  await Promise.all(names.map((name) => jsm.streams.delete(name).catch(() => false)));
  await nc.close();
}
