import fc from 'fast-check';
import { RecentValues } from '../../../src/alerting/domain/recent-values.js';
import { evolve, initialState, storedState, type EndpointAlertsState } from '../../../src/alerting/domain/endpoint-alerts.js';
import { CHECK_RECORDED } from '../../../src/checks/domain/check.js';
import { command, run } from './support.js';

/** The newest `max` of `values` and `value`: what a window held when every append copied it. */
function keepLast<T>(values: readonly T[], value: T, max: number): T[] {
  return [...values, value].slice(-max);
}

function read<T>(window: RecentValues<T>): T[] {
  const values: T[] = [];
  for (let i = 0; i < window.length; i++) values.push(window.at(i)!);
  return values;
}

describe('RecentValues: a window appended to without copying (issue 31)', () => {
  // Each step appends to one of the windows made so far (the newest most often, as a fold does;
  // an older one as a state folded again does), or hands one over as an array. Every window
  // made, the older ones included, must still read what its array model holds.
  const step = fc.record({ from: fc.nat(), newest: fc.boolean(), value: fc.integer({ min: 0, max: 1_000 }), handOver: fc.boolean() });

  it('reads, in every state made, exactly the newest values an array copy would hold', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(fc.integer(), { maxLength: 15 }), fc.boolean(), fc.array(step, { maxLength: 300 }), (max, start, frozen, steps) => {
        const first = start.slice(-max);
        const made: Array<{ window: RecentValues<number>; model: number[] }> = [{ window: RecentValues.of(frozen ? Object.freeze([...first]) : first), model: [...first] }];
        for (const { from, newest, value, handOver } of steps) {
          const at = newest ? made.length - 1 : from % made.length;
          const { window, model } = made[at];
          if (handOver) expect(window.toArray()).toEqual(model);
          made.push({ window: window.with(value, max), model: keepLast(model, value, max) });
        }
        for (const { window, model } of made) {
          expect(read(window)).toEqual(model);
          expect(window.toArray()).toEqual(model);
          expect([...window]).toEqual(model);
          expect(window.at(-1)).toBe(model[model.length - 1]);
          for (const value of model) expect(window.includes(value)).toBe(true);
        }
      }),
    );
  });

  it('never writes into the array it was made of, nor into one it handed over', () => {
    const mine = [1, 2, 3];
    RecentValues.of(mine).with(4, 10).with(5, 10);
    expect(mine).toEqual([1, 2, 3]);
    const window = RecentValues.of<number>([]).with(1, 10).with(2, 10);
    const handed = window.toArray();
    expect(Object.isFrozen(handed)).toBe(true);
    expect(read(window.with(3, 10))).toEqual([1, 2, 3]);
    expect(handed).toEqual([1, 2]);
    expect(JSON.stringify({ window })).toBe('{"window":[1,2]}');
  });
});

describe('endpoint-alerts windows over a long-lived endpoint (issue 31)', () => {
  it('hold in every state what a copy per check held, after 3,000 checks and for a state folded again', () => {
    const commands = Array.from({ length: 3_000 }, (_, i) => command({ success: i % 17 !== 16, latency_ms: 40 + ((i * 31) % 60) }, { latency_min_samples: 1000 }));
    const steps = run(commands, undefined);
    // The model: every check's windows recomputed from the checks recorded up to it.
    const checks = steps.flatMap((s) => s.events.filter((e) => e.type === CHECK_RECORDED).map((e) => e.data as { success: boolean; latency_ms: number; job_id: string | null; latency_anomaly: boolean }));
    const at = (n: number) => {
      const upTo = checks.slice(0, n);
      return {
        baselineSamples: upTo.filter((c) => c.success).map((c) => c.latency_ms).slice(-1000),
        availabilityFailures: upTo.map((c) => !c.success).slice(-100),
        recentJobIds: upTo.flatMap((c) => (c.job_id === null ? [] : [c.job_id])).slice(-100),
      };
    };
    for (const n of [1, 99, 100, 1_000, 1_001, 1_250, 2_999, 3_000]) expect(storedState(steps[n - 1].state)).toMatchObject(at(n));
    // An older state folded again (a command retried on it) leaves the newer states as they were.
    const older: EndpointAlertsState = steps[1_500].state;
    const again = evolve(older, { type: CHECK_RECORDED, data: { ...checks[1_501], latency_ms: 999_999 } as never });
    expect(again.baselineSamples.at(-1)).toBe(999_999);
    expect(storedState(steps[1_501].state)).toMatchObject(at(1_502));
    expect(storedState(steps[2_999].state)).toMatchObject(at(3_000));
    expect(initialState().baselineSamples.length).toBe(0);
  });
});
