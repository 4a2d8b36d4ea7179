/**
 * The probe transport contract: every adapter behaves as a JetStream work queue, bounded (one
 * waiting scheduled job per endpoint, stale jobs and jobs past maxDeliver dropped).
 * `make` returns a transport over a fresh, empty queue on each call.
 */
import { StoreUnavailableError } from '../../src/platform/event-store/event-store.port.js';
import type {
  DropReason,
  JobConsumer,
  JobDelivery,
  ProbeJob,
  ProbeTransport,
  QueueLimits,
} from '../../src/platform/transport/probe-transport.port.js';
import { eventually } from '../support/eventually.js';

const ACK_WAIT_MS = 400;

/** `make(limits, region)`: `region` is the transport's probe region (PROBE_REGION), default `local`. */
export function probeTransportContract(name: string, make: (limits?: Partial<QueueLimits>, region?: string) => Promise<ProbeTransport>): void {
  describe(name, () => {
    let transport: ProbeTransport;
    let consumers: JobConsumer[];
    let gates: Gate[];
    let dropped: [string, DropReason][];

    beforeEach(async () => {
      transport = await make();
      consumers = [];
      gates = [];
      dropped = [];
    });

    afterEach(async () => {
      gates.forEach((gate) => gate.open()); // no handler left hanging, so stop() can finish
      await Promise.all(consumers.map((consumer) => consumer.stop()));
      await transport.close();
    });

    const consume = async (handler: (delivery: JobDelivery) => Promise<void>, maxInFlight = 1) => {
      const consumer = await transport.consume(handler, {
        maxInFlight,
        ackWaitMs: ACK_WAIT_MS,
        onDropped: (dropped_, reason) => dropped.push([dropped_.jobId, reason]),
      });
      consumers.push(consumer);
      return consumer;
    };
    const newGate = () => {
      const gate = createGate();
      gates.push(gate);
      return gate;
    };

    it('delivers a published job to a consumer, once acknowledged it is no longer pending', async () => {
      const published = job('round-trip');
      const received: JobDelivery[] = [];
      await transport.publish(published);

      await consume(async (delivery) => {
        received.push(delivery);
      });

      await waitFor(() => received.length === 1, 'the job to be delivered');
      expect(received[0]).toMatchObject({ job: published, deliveryCount: 1 });
      await waitForAsync(async () => (await transport.pending()) === 0, 'the backlog to drain');
    });

    it("hands a consumer the jobs without a region and its own region's, never another region's", async () => {
      await transport.close();
      transport = await make(undefined, 'eu-west');
      const handled: string[] = [];
      await consume(async (delivery) => {
        handled.push(delivery.job.jobId);
      }, 4);
      const slot = { scheduledAt: new Date().toISOString() };
      await transport.publish(job('region-other', { ...slot, endpointId: 4242, region: 'us-east' }));
      await transport.publish(job('region-own', { ...slot, endpointId: 4242, region: 'eu-west' }));
      await transport.publish(job('region-none', { ...slot, endpointId: 4242 }));
      await waitFor(() => handled.length >= 2, 'the own-region job and the one without a region');
      // One more of its own region after them: the other region's job was never handed out meanwhile.
      await transport.publish(job('region-own-2', { ...slot, endpointId: 4243, region: 'eu-west' }));
      await waitFor(() => handled.includes('region-own-2'), 'the second own-region job');
      expect([...handled].sort()).toEqual(['region-none', 'region-own', 'region-own-2']);
    });

    it('lets competing consumers share the jobs, each job handled exactly once', async () => {
      const jobIds = Array.from({ length: 12 }, (_, i) => `competing-${i}`);
      const handledBy = new Map<string, string[]>();
      const handler = (consumerName: string) => async (delivery: JobDelivery) => {
        handledBy.set(consumerName, [...(handledBy.get(consumerName) ?? []), delivery.job.jobId]);
        await sleep(20); // a probe takes a while, so the other consumer gets its turn
      };
      await consume(handler('a'));
      await consume(handler('b'));

      for (const jobId of jobIds) await transport.publish(job(jobId));

      await waitForAsync(async () => (await transport.pending()) === 0, 'every job to be acknowledged');
      const handled = [...handledBy.values()].flat();
      expect(handled.sort()).toEqual([...jobIds].sort());
      expect(handledBy.get('a')?.length).toBeGreaterThan(0);
      expect(handledBy.get('b')?.length).toBeGreaterThan(0);
    });

    it('redelivers a job whose handler threw, with deliveryCount 2', async () => {
      const deliveries: number[] = [];
      await consume(async (delivery) => {
        deliveries.push(delivery.deliveryCount);
        if (delivery.deliveryCount === 1) throw new Error('probe crashed');
      });

      await transport.publish(job('throws-once'));

      await waitFor(() => deliveries.length === 2, 'the job to be redelivered');
      await waitForAsync(async () => (await transport.pending()) === 0, 'the retry to be acknowledged');
      expect(deliveries).toEqual([1, 2]);
    });

    it('redelivers a job whose handler never finishes once ackWaitMs has passed', async () => {
      const stuck = newGate();
      const deliveries: number[] = [];
      await consume(async (delivery) => {
        deliveries.push(delivery.deliveryCount);
        if (delivery.deliveryCount === 1) await stuck.opened;
      }, 2);

      await transport.publish(job('hangs'));

      await waitFor(() => deliveries.length === 2, 'the silent job to be redelivered');
      expect(deliveries).toEqual([1, 2]);
      await waitForAsync(async () => (await transport.pending()) === 0, 'the retry to be acknowledged');
    });

    it('does not redeliver a long job whose handler reports progress', async () => {
      const deliveries: number[] = [];
      await consume(async (delivery) => {
        deliveries.push(delivery.deliveryCount);
        for (let i = 0; i < 12; i++) {
          await sleep(ACK_WAIT_MS / 4);
          delivery.inProgress();
        }
      }, 2);

      await transport.publish(job('long-running'));

      await waitForAsync(async () => (await transport.pending()) === 0, 'the long job to be acknowledged');
      expect(deliveries).toEqual([1]);
    });

    it('never runs more than maxInFlight handlers of one consumer at once', async () => {
      const gate = newGate();
      let running = 0;
      let peak = 0;
      let finished = 0;
      await consume(async () => {
        running += 1;
        peak = Math.max(peak, running);
        await gate.opened;
        running -= 1;
        finished += 1;
      }, 2);

      for (let i = 0; i < 5; i++) await transport.publish(job(`bounded-${i}`));

      await waitFor(() => running === 2, 'two handlers to start');
      await sleep(300); // room for an unbounded consumer to start a third handler
      expect(running).toBe(2);
      gate.open();
      await waitFor(() => finished === 5, 'all jobs to be handled');
      expect(peak).toBe(2);
    });

    it('stores a job re-published with the same jobId once', async () => {
      await transport.publish(job('duplicate'));
      await transport.publish(job('duplicate'));
      await transport.publish(job('distinct'));
      expect(await transport.pending()).toBe(2);

      const handled: string[] = [];
      await consume(async (delivery) => {
        handled.push(delivery.job.jobId);
      }, 3); // room for a second copy to be handled alongside the first

      await waitForAsync(async () => (await transport.pending()) === 0, 'both jobs to be acknowledged');
      expect(handled.sort()).toEqual(['distinct', 'duplicate']);
    });

    it('stop() waits for the handlers in flight and takes no further jobs', async () => {
      const gate = newGate();
      const events: string[] = [];
      const first = await consume(async (delivery) => {
        events.push(`start ${delivery.job.jobId}`);
        await gate.opened;
        events.push(`end ${delivery.job.jobId}`);
      });
      await transport.publish(job('in-flight'));
      await waitFor(() => events.length === 1, 'the handler to start');

      const stopped = first.stop().then(() => events.push('stopped'));
      await sleep(50);
      expect(events).toEqual(['start in-flight']);
      gate.open();
      await stopped;
      expect(events).toEqual(['start in-flight', 'end in-flight', 'stopped']);

      await transport.publish(job('after-stop'));
      const later: string[] = [];
      await consume(async (delivery) => {
        later.push(delivery.job.jobId);
      });
      await waitFor(() => later.length === 1, 'a new consumer to take the job');
      expect(later).toEqual(['after-stop']);
      expect(events).not.toContain('start after-stop');
    });

    it('counts jobs as pending until acknowledged, including those being handled', async () => {
      const gate = newGate();
      let started = 0;
      await transport.publish(job('pending-1'));
      await transport.publish(job('pending-2'));
      await transport.publish(job('pending-3'));
      expect(await transport.pending()).toBe(3);

      await consume(async () => {
        started += 1;
        await gate.opened;
      });
      await waitFor(() => started === 1, 'the first job to start');
      expect(await transport.pending()).toBe(3);

      gate.open();
      await waitForAsync(async () => (await transport.pending()) === 0, 'the backlog to drain');
      expect(started).toBe(3);
    });

    it('keeps only the newest scheduled job of each endpoint: after an outage each endpoint is handled once', async () => {
      // No consumer runs (every prober down) while the scheduler publishes five slots of three endpoints.
      for (let slot = 1; slot <= 5; slot++) {
        for (const endpointId of [1, 2, 3]) await transport.publish(job(`${endpointId}:slot-${slot}`, { endpointId }));
      }
      expect(await transport.pending()).toBe(3);

      const handled: string[] = [];
      await consume(async (delivery) => {
        handled.push(delivery.job.jobId);
      }, 8);

      await waitForAsync(async () => (await transport.pending()) === 0, 'the newest jobs to be handled');
      expect(handled.sort()).toEqual(['1:slot-5', '2:slot-5', '3:slot-5']);
      expect(dropped).toEqual([]);
    });

    it('never replaces a manual job, nor lets one replace a scheduled job', async () => {
      await transport.publish(job('manual-1', { endpointId: 9, source: 'manual' }));
      await transport.publish(job('manual-2', { endpointId: 9, source: 'manual' }));
      await transport.publish(job('scheduled-1', { endpointId: 9 }));
      expect(await transport.pending()).toBe(3);

      const handled: string[] = [];
      await consume(async (delivery) => {
        handled.push(delivery.job.jobId);
      }, 4);
      await waitForAsync(async () => (await transport.pending()) === 0, 'every job to be handled');
      expect(handled.sort()).toEqual(['manual-1', 'manual-2', 'scheduled-1']);
    });

    it('drops a job older than its maxAgeMs instead of handing it out, and reports it as stale', async () => {
      await transport.publish(job('stale', { endpointId: 1, maxAgeMs: 300 }));
      await sleep(700); // the job ages past its limit while no consumer runs
      await transport.publish(job('fresh', { endpointId: 2, maxAgeMs: 60_000 }));

      const handled: string[] = [];
      await consume(async (delivery) => {
        handled.push(delivery.job.jobId);
      }, 4);

      await waitForAsync(async () => (await transport.pending()) === 0, 'both jobs to leave the queue');
      expect(handled).toEqual(['fresh']);
      expect(dropped).toEqual([['stale', 'stale']]);
    });

    it('drops a failed job instead of redelivering it once it is older than its maxAgeMs', async () => {
      const deliveries: number[] = [];
      await consume(async (delivery) => {
        deliveries.push(delivery.deliveryCount);
        throw new Error('probe crashed');
      });

      await transport.publish(job('fails-then-stale', { maxAgeMs: ACK_WAIT_MS / 2 }));

      await waitFor(() => dropped.length === 1, 'the job to be dropped');
      await waitForAsync(async () => (await transport.pending()) === 0, 'the job to leave the queue');
      expect(deliveries).toEqual([1]);
      expect(dropped).toEqual([['fails-then-stale', 'stale']]);
    });

    it('drops a job whose handler failed on its maxDeliver-th delivery', async () => {
      await transport.close();
      transport = await make({ maxDeliver: 2 });
      const deliveries: number[] = [];
      await consume(async (delivery) => {
        deliveries.push(delivery.deliveryCount);
        throw new Error('probe crashed');
      });

      await transport.publish(job('always-fails'));

      await waitFor(() => dropped.length === 1, 'the job to be given up');
      await waitForAsync(async () => (await transport.pending()) === 0, 'the job to leave the queue');
      expect(deliveries).toEqual([1, 2]);
      expect(dropped).toEqual([['always-fails', 'max_deliver']]);
    });

    it('answers ping while open and fails publishing with StoreUnavailableError once closed', async () => {
      await expect(transport.ping()).resolves.toBeUndefined();
      await transport.close();
      await expect(transport.publish(job('too-late'))).rejects.toBeInstanceOf(StoreUnavailableError);
    });
  });
}

const endpointIds = new Map<string, number>();

/** A scheduled job; unless given, its endpoint is one of its own (the queue keeps one job per endpoint). */
export function job(jobId: string, overrides: Partial<ProbeJob> = {}): ProbeJob {
  if (!endpointIds.has(jobId)) endpointIds.set(jobId, 1000 + endpointIds.size);
  return {
    jobId,
    teamId: 7,
    endpointId: endpointIds.get(jobId)!,
    configurationVersion: 3,
    source: 'scheduled',
    scheduledAt: '2026-01-05T10:00:00.000Z',
    ...overrides,
  };
}

interface Gate {
  opened: Promise<void>;
  open(): void;
}

function createGate(): Gate {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  await eventually(what, condition, { timeoutMs, intervalMs: 20 });
}

export async function waitForAsync(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000) {
  await eventually(what, condition, { timeoutMs, intervalMs: 20 });
}
