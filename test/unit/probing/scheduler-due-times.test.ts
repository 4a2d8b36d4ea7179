import { jest } from '@jest/globals';
import type { Platform } from '../../../src/platform/platform.js';
import type { ProbeJob } from '../../../src/platform/transport/probe-transport.port.js';
import { nextSlot, Scheduler, tickFor } from '../../../src/probing/application/scheduler.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const INTERVAL_MS = 20_000;

/** The least a scheduler needs: a schedule of `ids` (at 20 s unless said), every shard held, publishes recorded with the (fake) time they happened. */
function fakePlatform(ids: number[], holds: () => boolean = () => true, intervalMs = INTERVAL_MS) {
  const published: Array<{ job: ProbeJob; at: number }> = [];
  const rows = ids.map((id) => ({ endpoint_id: id, team_id: 1, interval_seconds: intervalMs / 1000, configuration_version: 1, schedulable: true, snapshot: null }));
  const platform = {
    transport: { publish: async (job: ProbeJob) => void published.push({ job, at: Date.now() }) },
    leases: { want: async () => undefined, holds, release: async () => undefined },
    reader: { stamps: async () => ({ collection: 'schedule', changed: 1, rewritten: 1 }), find: async () => rows },
    metrics: { schedulingDelay: { observe: () => undefined } },
    logger: { warn: () => undefined },
  } as unknown as Platform;
  return { platform, published };
}

describe('scheduler: due jobs go out together on a grid of ticks', () => {
  beforeEach(() => jest.useFakeTimers({ now: T0 }));
  afterEach(() => jest.useRealTimers());

  it('ticks long enough to gather about 25 jobs on a quiet schedule (to 60 a second), 10 on a busier one, from 50 ms to 500 ms', () => {
    expect(tickFor(0)).toBe(500);
    expect(tickFor(2)).toBe(500);
    expect(tickFor(50)).toBe(500);
    expect(tickFor(60)).toBe(450);
    expect(tickFor(61)).toBe(200);
    expect(tickFor(80)).toBe(150);
    expect(tickFor(100)).toBe(100);
    expect(tickFor(200)).toBe(50);
    expect(tickFor(1000)).toBe(50);
  });

  it('ticks at most a tenth of the shortest interval, and never under 50 ms', () => {
    expect(tickFor(2, 20_000)).toBe(500);
    expect(tickFor(2, 3_000)).toBe(300);
    expect(tickFor(2, 1_000)).toBe(100);
    expect(tickFor(10, 1_000)).toBe(100);
    expect(tickFor(2, 250)).toBe(50);
  });

  it('publishes every slot once, never early, at the first tick at or after it, with the other jobs of that tick (a quiet schedule: 500 ms)', async () => {
    const ids = Array.from({ length: 40 }, (_, i) => i + 1);
    const { platform, published } = fakePlatform(ids);
    const scheduler = new Scheduler(platform);
    scheduler.start();
    await jest.advanceTimersByTimeAsync(2 * INTERVAL_MS + 1);
    await scheduler.stop();

    const expected = ids.flatMap((id) => {
      const first = nextSlot(id, INTERVAL_MS, T0);
      return [first, first + INTERVAL_MS].filter((due) => due <= T0 + 2 * INTERVAL_MS).map((due) => ({ id, due }));
    });
    expect(published.map((p) => p.job.jobId).sort()).toEqual(expected.map((e) => `${e.id}:${e.due}`).sort());
    for (const { job, at } of published) {
      const due = Number(job.jobId.split(':')[1]);
      expect(at).toBe(Math.ceil(due / 500) * 500);
    }
  });

  it('ticks every 50 ms on a busy schedule, so no slot waits longer than that (400 endpoints at 1 s)', async () => {
    const intervalMs = 1000;
    const ids = Array.from({ length: 400 }, (_, i) => i + 1);
    const { platform, published } = fakePlatform(ids, () => true, intervalMs);
    const scheduler = new Scheduler(platform);
    scheduler.start();
    await jest.advanceTimersByTimeAsync(3 * intervalMs);
    await scheduler.stop();

    // Every slot after the first read of the list (at T0) up to the end, each once.
    const expected = ids.flatMap((id) => {
      const slots: string[] = [];
      for (let due = nextSlot(id, intervalMs, T0); due <= T0 + 3 * intervalMs; due += intervalMs) slots.push(`${id}:${due}`);
      return slots;
    });
    expect(published.map((p) => p.job.jobId).sort()).toEqual(expected.sort());
    for (const { job, at } of published) {
      const due = Number(job.jobId.split(':')[1]);
      // A slot due at the very start goes out at the first tick after it.
      expect(at).toBe(Math.ceil(Math.max(due, T0 + 1) / 50) * 50);
    }
  });

  it('holds back a due job while its shard is not held and publishes it once the shard is held again', async () => {
    // An endpoint whose slot and the slot's tick (one endpoint at 20 s: a 500 ms grid) fall between
    // two of the scheduler's once-a-second reads of the list.
    const id = Array.from({ length: 100 }, (_, i) => i + 1).find((n) => {
      const intoSecond = (nextSlot(n, INTERVAL_MS, T0) - T0) % 1000;
      return intoSecond > 100 && intoSecond < 450;
    })!;
    const slot = nextSlot(id, INTERVAL_MS, T0);
    const slotTick = Math.ceil(slot / 500) * 500;
    let held = true;
    const { platform, published } = fakePlatform([id], () => held);
    const scheduler = new Scheduler(platform);
    scheduler.start();
    await jest.advanceTimersByTimeAsync(slot - T0 - 50);
    held = false;
    // Past the slot's tick, which finds the shard not held.
    await jest.advanceTimersByTimeAsync(slotTick + 10 - (slot - 50));
    expect(published).toEqual([]);
    held = true;
    // The next tick of the grid looks at it again.
    await jest.advanceTimersByTimeAsync(600);
    await scheduler.stop();
    expect(published.map((p) => p.job.jobId)).toEqual([`${id}:${slot}`]);
  });
});
