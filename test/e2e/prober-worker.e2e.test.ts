/**
 * The prober worker over each transport (in-process, NATS):
 * - a probe that runs longer than the job's ack wait: the worker keeps the job in progress while
 *   it runs, so the transport does not hand it out again, and it is delivered once;
 * - a worker stopped and started again (a lease or role change, the bench's drain) takes jobs
 *   again.
 */
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ProbeRecorder } from '../../src/probing/application/probe-recorder.js';
import { ProberWorker } from '../../src/probing/application/prober-worker.js';
import { createHttpProber } from '../../src/probing/prober/http-prober.js';
import { InProcessTransport } from '../../src/platform/transport/in-process/in-process-transport.js';
import { NatsTransport } from '../../src/platform/transport/nats/nats-transport.js';
import type { ProbeTransport } from '../../src/platform/transport/probe-transport.port.js';
import { NATS_SKIP_REASON, natsAvailable, type TestNatsServer } from '../support/nats-server.js';
import type { TestApp } from '../support/test-app.js';
import { allEvents, configuration, eventually, manualJob, monitorTarget, startHarness, type Harness, type Target } from './support.js';

jest.setTimeout(60_000);

/** The ack wait the job would be redelivered after; the probe takes more than twice as long. */
const ACK_WAIT_MS = 2000;
const PROBE_MS = 5000;

/** The transport as the worker sees it, with every delivery's count written down. */
function countingDeliveries(transport: ProbeTransport, counts: number[]): ProbeTransport {
  return {
    publish: (job) => transport.publish(job),
    consume: (handler, options) =>
      transport.consume((delivery) => {
        counts.push(delivery.deliveryCount);
        return handler(delivery);
      }, options),
    pending: () => transport.pending(),
    ping: () => transport.ping(),
    close: () => transport.close(),
  };
}

describe('the prober worker', () => {
  let nats: TestNatsServer | null = null;
  let t: TestApp;
  let target: Target;
  let harness: Harness<{ nats: true }> | undefined;
  beforeAll(async () => {
    ({ t, target, nats } = harness = await startHarness({ nats: true }));
  });
  afterAll(() => harness?.close());

  const transports: Array<[string, () => Promise<ProbeTransport>]> = [
    ['in-process', async () => new InProcessTransport()],
    ['NATS', async () => {
      const id = randomUUID().replaceAll('-', '');
      return NatsTransport.connect({ url: nats!.url, stream: `WORKER_${id}`, subject: `worker.${id}.jobs` });
    }],
  ];

  /** `test` once per transport; the NATS case is reported as skipped, with the reason, where there is no NATS. */
  function eachTransport(title: string, test: (name: string, connect: () => Promise<ProbeTransport>) => Promise<void>): void {
    for (const [name, connect] of transports) {
      if (name === 'NATS' && !natsAvailable()) it.skip(`${title} (${name}; skipped: ${NATS_SKIP_REASON})`, () => undefined);
      else it(`${title} (${name})`, () => test(name, connect));
    }
  }

  /** A verified endpoint of a new team, probing the target. */
  async function verifiedEndpoint(teamName: string, overrides: Parameters<typeof configuration>[1] = {}) {
    const team = await t.createTeam(teamName);
    const endpoint = await monitorTarget(t, team.id, target, 'ok', overrides, { enabled: false });
    return { teamId: team.id, endpointId: endpoint.id };
  }

  const recorded = async (jobId: string) => (await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && e.data.job_id === jobId);

  eachTransport('delivers a probe longer than the ack wait once and records it once', async (name, connect) => {
    const { teamId, endpointId } = await verifiedEndpoint(`Long ${name}`, { interval_seconds: 30, timeout_seconds: 30 });
    target.mode.delayMs = PROBE_MS;

    const transport = await connect();
    const deliveries: number[] = [];
    const prober = createHttpProber({ blockPrivate: false });
    const worker = new ProberWorker({ ...t.platform, transport: countingDeliveries(transport, deliveries) }, new ProbeRecorder(t.platform), prober, {
      maxInFlight: 4,
      ackWaitMs: ACK_WAIT_MS,
    });
    const job = manualJob(teamId, endpointId);
    try {
      await worker.start();
      await transport.publish(job);
      await eventually('the job to be acknowledged', async () => deliveries.length > 0 && (await transport.pending()) === 0, 30_000);
      await worker.stop();
      expect(deliveries).toEqual([1]);
      expect(await recorded(job.jobId)).toHaveLength(1);
    } finally {
      target.mode.delayMs = 0;
      await worker.stop();
      await transport.close();
      await prober.close();
    }
  });

  eachTransport('probes and records a job published after a stop and a start', async (name, connect) => {
    const { teamId, endpointId } = await verifiedEndpoint(`Restart ${name}`);
    const transport = await connect();
    const prober = createHttpProber({ blockPrivate: false });
    const worker = new ProberWorker({ ...t.platform, transport }, new ProbeRecorder(t.platform), prober, { maxInFlight: 4, ackWaitMs: ACK_WAIT_MS });
    try {
      await worker.start();
      const before = manualJob(teamId, endpointId);
      await transport.publish(before);
      await eventually('the first job to be recorded', async () => (await recorded(before.jobId)).length === 1, 30_000);
      await worker.stop();
      await worker.start();
      const after = { ...manualJob(teamId, endpointId), jobId: `${endpointId}:after-restart` };
      await transport.publish(after);
      await eventually('the job after the restart to be recorded and acknowledged', async () => (await recorded(after.jobId)).length === 1 && (await transport.pending()) === 0, 30_000);
    } finally {
      await worker.stop();
      await transport.close();
      await prober.close();
    }
  });
});
