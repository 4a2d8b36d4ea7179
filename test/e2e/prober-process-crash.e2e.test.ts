/**
 * A prober process killed with SIGKILL while its probe request is in flight over NATS: the
 * job is redelivered after the ack wait to a second prober process, the target sees the request
 * again, and exactly one check is recorded for the job. Both probers are real processes running
 * the production ProberWorker, ProbeRecorder, undici prober and NATS adapter over the same
 * SQLite DATA_DIR that the in-test service reads.
 */
import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { NatsTransport } from '../../src/platform/transport/nats/nats-transport.js';
import { describeWithNats, NATS_SKIP_REASON, startNatsServer, type TestNatsServer } from '../support/nats-server.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';
import { compileProberProcess, startProberProcess, type ProberProcess } from '../support/fixtures/start-prober-process.js';
import { allEvents, eventually, manualJob, monitorTarget, startTarget, type Target } from './support.js';

jest.setTimeout(60_000);

const ACK_WAIT_MS = 1000;
/** Long enough that the probe is still waiting for its answer when the prober is killed. */
const HOLD_MS = 60_000;

describeWithNats('prober process crash over NATS', () => {
  let nats: TestNatsServer | null = null;
  let compiled: { script: string; remove(): void } | null = null;
  let t: TestApp;
  let target: Target;
  const probers: ProberProcess[] = [];

  beforeAll(async () => {
    nats = await startNatsServer();
    if (!nats) throw new Error(`describeWithNats ran this suite, yet: ${NATS_SKIP_REASON}`);
    compiled = await compileProberProcess();
    target = await startTarget();
    t = await startTestApp();
  });
  afterAll(async () => {
    for (const prober of probers) await prober.kill();
    await t?.close();
    await target?.close();
    await nats?.stop();
    compiled?.remove();
  });

  it('redelivers the job of a prober killed mid-request; the target sees it again and one check is recorded', async () => {
    const team = await t.createTeam('Process crash');
    const endpoint = await monitorTarget(t, team.id, target, 'slow', { interval_seconds: 60, timeout_seconds: 60 }, { enabled: false });

    const id = randomUUID().replaceAll('-', '');
    const names = { stream: `PROCESS_CRASH_${id}`, subject: `process-crash.${id}.jobs`, durable: 'probers' };
    const start = async () => {
      const prober = await startProberProcess(compiled!.script, { dataDir: t.dataDir, adminToken: ADMIN_TOKEN, natsUrl: nats!.url, names, ackWaitMs: ACK_WAIT_MS });
      probers.push(prober);
      return prober;
    };
    const publisher = await NatsTransport.connect({ url: nats!.url, ...names });
    const job = manualJob(team.id, endpoint.id);
    try {
      // The first prober takes the job and its request reaches the target, which holds it open.
      target.mode = { status: 200, delayMs: HOLD_MS };
      const first = await start();
      await publisher.publish(job);
      expect(await first.next((line) => line.event === 'delivered', 'the job')).toMatchObject({ jobId: job.jobId, deliveryCount: 1 });
      await eventually('the probe request to reach the target', async () => target.hits === 1, 20_000);
      await first.kill();
      expect(first.lines.filter((line) => line.event === 'handled')).toEqual([]);

      // A second prober gets the orphaned job after the ack wait and finishes it.
      target.mode = { status: 200, delayMs: 0 };
      const second = await start();
      const handled = await second.next((line) => line.event === 'handled' && line.jobId === job.jobId, 'the redelivered job');
      expect(handled.deliveryCount).toBe(2);
      await eventually('the job to be acknowledged', async () => (await publisher.pending()) === 0, 20_000);

      expect(target.hits).toBe(2);
      const checks = (await allEvents(t)).filter((e) => e.type === 'CheckRecorded' && e.data.job_id === job.jobId);
      expect(checks).toHaveLength(1);
      expect(checks[0].data).toMatchObject({ endpoint_id: endpoint.id, source: 'manual', success: true, status_code: 200 });
      expect(second.lines.filter((line) => line.event === 'delivered')).toEqual([{ event: 'delivered', jobId: job.jobId, deliveryCount: 2 }]);
    } finally {
      await publisher.close();
    }
  });
});
