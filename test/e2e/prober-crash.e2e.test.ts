/**
 * A prober that dies after recording a check but before acknowledging the job: NATS delivers
 * the job again to another prober, and the check is recorded exactly once (job id dedup).
 * The death is simulated in-process (its NATS connection closes) because the window between
 * the append and the ack cannot be hit from outside; prober-process-crash.e2e.test.ts kills a
 * real prober process mid-request.
 */
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { ProbeRecorder } from '../../src/probing/application/probe-recorder.js';
import { ProberWorker } from '../../src/probing/application/prober-worker.js';
import { createHttpProber } from '../../src/probing/prober/http-prober.js';
import { NatsTransport } from '../../src/platform/transport/nats/nats-transport.js';
import { describeWithNats, type TestNatsServer } from '../support/nats-server.js';
import type { TestApp } from '../support/test-app.js';
import { allEvents, eventually, manualJob, monitorTarget, startHarness, type Harness, type Target } from './support.js';

jest.setTimeout(60_000);

describeWithNats('prober crash over NATS', () => {
  let nats: TestNatsServer | null = null;
  let t: TestApp;
  let target: Target;
  let harness: Harness<{ nats: true }> | undefined;
  beforeAll(async () => {
    ({ t, target, nats } = harness = await startHarness({ nats: true }));
  });
  afterAll(() => harness?.close());

  it('redelivers the job of a prober killed mid-job and records exactly one check for it', async () => {
    const team = await t.createTeam('Crash');
    const endpoint = await monitorTarget(t, team.id, target, 'ok', {}, { enabled: false });

    const id = randomUUID().replaceAll('-', '');
    const names = { stream: `CRASH_${id}`, subject: `crash.${id}.jobs`, durable: 'probers' };
    const options = { maxInFlight: 1, ackWaitMs: 1000 };
    const prober = createHttpProber({ blockPrivate: false });
    const first = await NatsTransport.connect({ url: nats!.url, ...names });
    const second = await NatsTransport.connect({ url: nats!.url, ...names });
    const job = manualJob(team.id, endpoint.id);
    let releaseDead!: () => void;
    const deadForNow = new Promise<void>((resolve) => (releaseDead = resolve));
    try {
      // The first prober records the check, then dies before acknowledging.
      const dying = new ProberWorker({ ...t.platform, transport: first }, new ProbeRecorder(t.platform), prober, options);
      let recorded!: () => void;
      const recordedOnce = new Promise<void>((resolve) => (recorded = resolve));
      await first.consume(async (delivery) => {
        await dying.handle(delivery.job);
        recorded();
        await deadForNow; // acknowledges nothing while the test runs
      }, options);
      await first.publish(job);
      await recordedOnce;
      await (first as unknown as { nc: { close(): Promise<void> } }).nc.close();

      // Another prober (its own process state) gets the job again and records nothing new.
      const results: string[] = [];
      const survivor = new ProberWorker({ ...t.platform, transport: second }, new ProbeRecorder(t.platform), prober, options);
      const consumer = await second.consume(async (delivery) => {
        results.push(`${delivery.deliveryCount}:${await survivor.handle(delivery.job)}`);
      }, options);
      await eventually('the job to be redelivered', async () => results.length >= 1, 20_000);
      await eventually('the job to be acknowledged', async () => (await second.pending()) === 0, 20_000);
      await consumer.stop();
      expect(results).toEqual(['2:duplicate']);
      const checks = (await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && e.data.job_id === job.jobId);
      expect(checks).toHaveLength(1);
    } finally {
      // The dead prober's handler returns (its ack goes nowhere: its connection is closed), so
      // close() can stop its pull like any other.
      releaseDead();
      await first.close();
      await second.close();
      await prober.close();
    }
  });
});
