import { randomUUID } from 'node:crypto';
import { AckPolicy, RetentionPolicy, StorageType, connect, nanos, type NatsConnection } from 'nats';
import { InProcessTransport } from '../../src/platform/transport/in-process/in-process-transport.js';
import { NatsTransport } from '../../src/platform/transport/nats/nats-transport.js';
import { AckedPublisher, PublishRefusedError } from '../../src/platform/transport/nats/acked-publisher.js';
import { createProbeTransport } from '../../src/platform/transport/create-probe-transport.js';
import { StoreUnavailableError } from '../../src/platform/event-store/event-store.port.js';
import type { JobDelivery, ProbeTransport } from '../../src/platform/transport/probe-transport.port.js';
import { NATS_SKIP_REASON, startNatsServer } from '../support/nats-server.js';
import { runClosedConnectionProber, startTransportWorker } from '../support/fixtures/start-transport-worker.js';
import { job, probeTransportContract, waitFor, waitForAsync } from './probe-transport.contract.js';

probeTransportContract('in-process adapter', async (limits, region) => new InProcessTransport(limits, region));

const nats = await startNatsServer();
const streams: string[] = [];

/** A fresh stream per transport, so tests never see each other's jobs. */
function natsNames() {
  const id = randomUUID().replaceAll('-', '');
  const names = { stream: `TEST_${id}`, subject: `test.${id}.jobs`, durable: 'probers' };
  streams.push(names.stream, `${names.stream}_REGIONS`);
  return names;
}

if (nats) {
  const url = nats.url;
  afterAll(async () => {
    await deleteStreams(url, streams);
    await nats.stop();
  });

  probeTransportContract('NATS adapter', (limits, region) => NatsTransport.connect({ url, ...natsNames(), pullExpiresMs: 1000, ...limits, region }));

  describe('NATS adapter, probers in several regions', () => {
    it("gives each region's job to a prober of that region only, and a job without a region to any", async () => {
      const names = natsNames();
      const regions = ['a', 'b', 'c'];
      const transports = await Promise.all(regions.map((region) => NatsTransport.connect({ url, ...names, pullExpiresMs: 1000, region })));
      const handled = new Map<string, string>();
      const consumers = await Promise.all(
        transports.map((transport, index) =>
          transport.consume(async (delivery: JobDelivery) => void handled.set(delivery.job.jobId, regions[index]), { maxInFlight: 8, ackWaitMs: 5_000 }),
        ),
      );
      try {
        const scheduledAt = new Date().toISOString();
        for (let endpointId = 1; endpointId <= 5; endpointId++) {
          for (const region of regions) await transports[0].publish(job(`${endpointId}:${region}`, { endpointId, region, scheduledAt }));
          await transports[0].publish(job(`${endpointId}:any`, { endpointId: 100 + endpointId, scheduledAt }));
        }
        await waitFor(() => handled.size === 20, 'every job to be handled');
        for (const [jobId, by] of handled) {
          const [, region] = jobId.split(':');
          if (region !== 'any') expect([jobId, by]).toEqual([jobId, region]);
        }
        await waitForAsync(async () => (await transports[0].pending()) === 0, 'both streams to drain');
        // A region without a prober keeps its job waiting (one per endpoint), counted as pending.
        await transports[0].publish(job('9:z', { endpointId: 9, region: 'z', scheduledAt }));
        await transports[0].publish(job('9:z-next', { endpointId: 9, region: 'z', scheduledAt }));
        await waitForAsync(async () => (await transports[0].pending()) === 1, 'the unserved region to hold one job');
        expect(handled.has('9:z')).toBe(false);
      } finally {
        await Promise.all(consumers.map((consumer) => consumer.stop()));
        await Promise.all(transports.map((transport) => transport.close()));
      }
    });
  });

  describe('NATS adapter, stream and consumer settings', () => {
    it('updates a stream and consumer an earlier version created, dropping its unbounded backlog', async () => {
      const names = natsNames();
      // The earlier layout: every job on one subject, no per-subject limit, consumer defaults.
      const nc = await connect({ servers: url });
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: names.stream, subjects: [names.subject], retention: RetentionPolicy.Workqueue, storage: StorageType.File });
      await jsm.consumers.add(names.stream, { durable_name: names.durable, ack_policy: AckPolicy.Explicit, ack_wait: nanos(30_000) });
      const js = nc.jetstream();
      for (let slot = 0; slot < 20; slot++) await js.publish(names.subject, JSON.stringify(job(`42:${slot}`, { endpointId: 42 })));

      const transport = await NatsTransport.connect({ url, ...names, replicas: 1, maxDeliver: 3, maxAckPending: 500 });
      try {
        const stream = await jsm.streams.info(names.stream);
        expect(stream.config).toMatchObject({ subjects: [`${names.subject}.>`], max_msgs_per_subject: 1, num_replicas: 1 });
        expect(stream.state.messages).toBe(0); // the missed slots are not probed in a burst

        const handled: string[] = [];
        const consumer = await transport.consume(async (delivery) => {
          handled.push(delivery.job.jobId);
        }, { maxInFlight: 4, ackWaitMs: 1000 });
        expect((await jsm.consumers.info(names.stream, names.durable)).config).toMatchObject({ max_deliver: 3, max_ack_pending: 500, ack_wait: nanos(1000) });
        await transport.publish(job('42:next', { endpointId: 42 }));
        await waitFor(() => handled.length === 1, 'the next slot to be handled');
        await consumer.stop();
        expect(handled).toEqual(['42:next']);
      } finally {
        await transport.close();
        await nc.close();
      }
    });

    it('refuses settings it cannot use before connecting', async () => {
      await expect(NatsTransport.connect({ url, ...natsNames(), maxAckPending: 0 })).rejects.toThrow('maxAckPending must be a positive integer');
      await expect(NatsTransport.connect({ url, ...natsNames(), maxDeliver: 0 })).rejects.toThrow('maxDeliver must be a positive integer');
    });
  });

  describe('NATS adapter, publishing', () => {
    it('resolves each of many concurrent publishes once its job is stored', async () => {
      const names = natsNames();
      const transport = await NatsTransport.connect({ url, ...names });
      try {
        const scheduledAt = new Date().toISOString();
        await Promise.all(Array.from({ length: 500 }, (_, i) => transport.publish(job(`many-${i}`, { endpointId: 5000 + i, scheduledAt }))));
        expect(await transport.pending()).toBe(500);
      } finally {
        await transport.close();
      }
    });

    it('fails a publish with StoreUnavailableError when no stream takes the subject', async () => {
      const names = natsNames();
      const transport = await NatsTransport.connect({ url, ...names });
      try {
        await deleteStreams(url, [names.stream]);
        await expect(transport.publish(job('no-stream'))).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await transport.close();
      }
    });

    it('fails a publish whose acknowledgement never comes with StoreUnavailableError, and one refused by the stream with PublishRefusedError', async () => {
      const nc = await connect({ servers: url });
      const subject = `test.${randomUUID()}`;
      // A plain subscriber: the publish has a responder, but it is no stream and never acknowledges.
      const silent = nc.subscribe(`${subject}.silent`, { callback: () => undefined });
      const refusing = nc.subscribe(`${subject}.refused`, {
        callback: (_error, msg) => msg.respond(JSON.stringify({ error: { code: 400, description: 'refused for the test' } })),
      });
      const publisher = new AckedPublisher(nc, 200);
      try {
        const data = new TextEncoder().encode('{}');
        await expect(publisher.publish(`${subject}.silent`, data, 'silent-1', 'silent')).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(publisher.publish(`${subject}.refused`, data, 'refused-1', 'refused')).rejects.toThrow(PublishRefusedError);
        const waiting = publisher.publish(`${subject}.silent`, data, 'silent-2', 'closing');
        publisher.close();
        await expect(waiting).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        silent.unsubscribe();
        refusing.unsubscribe();
        await nc.close();
      }
    });
  });

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

  describe('NATS adapter, a connection closed underneath', () => {
    it('close() still stops its consumers, waiting for the job in hand', async () => {
      const transport = await NatsTransport.connect({ url, ...natsNames(), pullExpiresMs: 1000 });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let taken!: () => void;
      const jobTaken = new Promise<void>((resolve) => (taken = resolve));
      await transport.consume(async () => {
        taken();
        await held;
      }, { maxInFlight: 1, ackWaitMs: 5_000 });
      await transport.publish(job('held-1'));
      await jobTaken;
      await (transport as unknown as { nc: NatsConnection }).nc.close();

      const closing = transport.close();
      const settled = await Promise.race([closing.then(() => true), new Promise<false>((resolve) => setImmediate(() => resolve(false)))]);
      expect(settled).toBe(false); // the handler still holds its job
      release(); // its ack cannot reach the server; close() must not fail on it
      await closing;
    });

    it('leaves nothing running: the process exits once close() returns', async () => {
      const result = await runClosedConnectionProber({ url, ...natsNames(), pullExpiresMs: 1000 }, 15_000);
      expect(result).toMatchObject({ code: 0, stdout: 'closed\n' });
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
