import fc from 'fast-check';
import { computeBaseline } from '../../../src/alerting/domain/baseline.js';
import { decide, evolve, initialState, RECENT_JOB_IDS, type RecordCheckCommand } from '../../../src/alerting/domain/endpoint-alerts.js';
import type { CheckRecordedData } from '../../../src/checks/domain/check.js';
import type { LatencySettings } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { command } from './support.js';

type SignalName = 'ok' | 'triggered';
interface Expected {
  dropped: boolean;
  threshold: number | null;
  anomaly: boolean;
  availability: SignalName;
  latency: SignalName;
}

const settingsArb: fc.Arbitrary<LatencySettings> = fc.record({
  latency_detection_mode: fc.constantFrom('auto' as const, 'fixed' as const, 'off' as const),
  latency_fixed_threshold_ms: fc.integer({ min: 50, max: 300 }),
  latency_sensitivity: fc.integer({ min: 0, max: 4 }),
  latency_min_samples: fc.integer({ min: 1, max: 8 }),
  latency_trigger_count: fc.integer({ min: 1, max: 5 }),
  latency_trigger_window: fc.integer({ min: 1, max: 6 }),
  latency_recovery_count: fc.integer({ min: 1, max: 4 }),
  latency_min_increase_ms: fc.integer({ min: 0, max: 60 }),
  latency_min_increase_percent: fc.integer({ min: 0, max: 100 }),
});

const checkArb = fc.record({
  success: fc.boolean(),
  latency_ms: fc.integer({ min: 10, max: 400 }),
  source: fc.constantFrom('scheduled' as const, 'scheduled' as const, 'scheduled' as const, 'manual' as const),
  alert_suppressed: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  imported: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  // mostly fresh jobs, sometimes a redelivery of one of a few job ids
  job_id: fc.oneof({ arbitrary: fc.constant(undefined), weight: 9 }, { arbitrary: fc.constantFrom('a', 'b', 'c'), weight: 1 }),
  settings: settingsArb,
});

const lastN = <T>(items: T[], n: number) => items.slice(Math.max(0, items.length - n));

/** The rules of api-decisions applied to the whole history at each step, without any running counters. */
function bruteForce(commands: RecordCheckCommand[]): Expected[] {
  const recordedJobs: string[] = [];
  const counted: { success: boolean; latency: number; threshold: number | null }[] = [];
  let availability: SignalName = 'ok';
  let latency: SignalName = 'ok';
  return commands.map((cmd) => {
    const { success, latency_ms } = cmd.outcome;
    // redelivery is recognised among the last RECENT_JOB_IDS recorded jobs (a documented bound)
    if (cmd.job_id !== null && lastN(recordedJobs, RECENT_JOB_IDS).includes(cmd.job_id)) {
      return { dropped: true, threshold: null, anomaly: false, availability, latency };
    }
    if (cmd.job_id !== null) recordedJobs.push(cmd.job_id);
    const s = cmd.settings;
    const pastLatencies = counted.filter((c) => c.success).map((c) => c.latency);
    const threshold =
      s.latency_detection_mode === 'fixed' ? s.latency_fixed_threshold_ms
      : s.latency_detection_mode === 'off' ? null
      : computeBaseline(pastLatencies, s, 'any')?.threshold_ms ?? null;
    const anomaly = threshold !== null && success && latency_ms > threshold;
    const counts = cmd.source === 'scheduled' && !cmd.alert_suppressed && !cmd.imported;
    if (!counts) return { dropped: false, threshold, anomaly, availability, latency };
    counted.push({ success, latency: latency_ms, threshold });

    const outcomes = counted.map((c) => c.success);
    if (availability === 'ok' && !success) {
      if (lastN(outcomes, s.latency_trigger_window).filter((ok) => !ok).length >= s.latency_trigger_count) availability = 'triggered';
    } else if (availability === 'triggered' && outcomes.length >= s.latency_recovery_count && lastN(outcomes, s.latency_recovery_count).every(Boolean)) {
      availability = 'ok';
    }

    if (threshold === null) {
      latency = 'ok';
    } else if (success) {
      // judged: successful counted checks since the last counted check without a threshold
      const sinceReset = counted.slice(counted.map((c) => c.threshold).lastIndexOf(null) + 1);
      const exceeded = sinceReset.filter((c) => c.success).map((c) => c.latency > (c.threshold as number));
      if (latency === 'ok' && anomaly) {
        if (lastN(exceeded, s.latency_trigger_window).filter(Boolean).length >= s.latency_trigger_count) latency = 'triggered';
      } else if (latency === 'triggered' && !anomaly && exceeded.length >= s.latency_recovery_count && lastN(exceeded, s.latency_recovery_count).every((x) => !x)) {
        latency = 'ok';
      }
    }
    return { dropped: false, threshold, anomaly, availability, latency };
  });
}

function folded(commands: RecordCheckCommand[]): Expected[] {
  let state = initialState();
  return commands.map((cmd) => {
    const events = decide(state, cmd);
    state = events.reduce(evolve, state);
    const check = events.find((e) => e.type === 'CheckRecorded')?.data as CheckRecordedData | undefined;
    return {
      dropped: events.length === 0,
      threshold: check?.latency_threshold_ms ?? null,
      anomaly: check?.latency_anomaly ?? false,
      availability: state.signals.availability.state,
      latency: state.signals.latency.state,
    };
  });
}

describe('endpoint alerts, folded step by step', () => {
  it('agrees with the rules recomputed from the whole history at every check', () => {
    fc.assert(
      fc.property(settingsArb, fc.array(checkArb, { maxLength: 120, size: 'large' }), fc.boolean(), (base, checks, vary) => {
        // half the runs keep one configuration; the other half change it on every check
        const commands = checks.map(({ settings, ...spec }) => command({ ...spec, settings: vary ? settings : base }));
        expect(folded(commands)).toEqual(bruteForce(commands));
      }),
      // shrinking sequences of 100+ checks takes minutes: report the first counterexample as is
      { numRuns: 300, endOnFailure: true },
    );
  });
});
