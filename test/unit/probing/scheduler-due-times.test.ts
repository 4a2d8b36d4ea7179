import { jest } from '@jest/globals';
import type { Platform } from '../../../src/platform/platform.js';
import type { ProbeJob } from '../../../src/platform/transport/probe-transport.port.js';
import { nextSlot, Scheduler } from '../../../src/probing/application/scheduler.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const INTERVAL_MS = 20_000;

/** The least a scheduler needs: a schedule of `ids` at 20 s, every shard held, publishes recorded with the (fake) time they happened. */
function fakePlatform(ids: number[], holds: () => boolean = () => true) {
  const published: Array<{ job: ProbeJob; at: number }> = [];
  const rows = ids.map((id) => ({ endpoint_id: id, team_id: 1, interval_seconds: INTERVAL_MS / 1000, configuration_version: 1, schedulable: true, snapshot: null }));
  const platform = {
    transport: { publish: async (job: ProbeJob) => void published.push({ job, at: Date.now() }) },
    leases: { want: async () => undefined, holds, release: async () => undefined },
    reader: { stamps: async () => ({ collection: 'schedule', changed: 1, rewritten: 1 }), find: async () => rows },
    metrics: { schedulingDelay: { observe: () => undefined } },
    logger: { warn: () => undefined },
  } as unknown as Platform;
  return { platform, published };
}

describe('scheduler: each job goes out at its due time', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0 }));
  afterEach(() => jest.useRealTimers());

  it('publishes every job within a millisecond of its slot, one slot at a time', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => i + 1);
    const { platform, published } = fakePlatform(ids);
    const scheduler = new Scheduler(platform);
    scheduler.start();
    await jest.advanceTimersByTimeAsync(INTERVAL_MS + 1);
    await scheduler.stop();

    const due = new Map(ids.map((id) => [id, nextSlot(id, INTERVAL_MS, T0)]));
    expect(published.map((p) => p.job.endpointId).sort((a, b) => a - b)).toEqual(ids);
    for (const { job, at } of published) {
      expect(job.jobId).toBe(`${job.endpointId}:${due.get(job.endpointId)}`);
      // Not gathered into a coarser tick: a job goes out at its slot (the timer's 1 ms floor at most).
      expect(at - due.get(job.endpointId)!).toBeLessThanOrEqual(1);
    }
    // Slots at different milliseconds went out at different times, not in one burst.
    const slots = new Set(due.values());
    expect(new Set(published.map((p) => p.at)).size).toBeGreaterThanOrEqual(slots.size - 1);
  });

  it('holds back a due job while its shard is not held and publishes it once the shard is held again', async () => {
    // An endpoint whose slot falls between two of the scheduler's once-a-second reads of the list.
    const id = Array.from({ length: 100 }, (_, i) => i + 1).find((n) => {
      const intoSecond = (nextSlot(n, INTERVAL_MS, T0) - T0) % 1000;
      return intoSecond > 200 && intoSecond < 700;
    })!;
    const slot = nextSlot(id, INTERVAL_MS, T0);
    let held = true;
    const { platform, published } = fakePlatform([id], () => held);
    const scheduler = new Scheduler(platform);
    scheduler.start();
    await jest.advanceTimersByTimeAsync(slot - T0 - 100);
    held = false;
    await jest.advanceTimersByTimeAsync(150);
    expect(published).toEqual([]);
    held = true;
    await jest.advanceTimersByTimeAsync(100);
    await scheduler.stop();
    expect(published.map((p) => p.job.jobId)).toEqual([`${id}:${slot}`]);
  });
});
