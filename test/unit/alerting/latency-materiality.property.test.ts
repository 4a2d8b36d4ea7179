/**
 * The latency detector against latency series: jitter on an endpoint of any speed never triggers
 * the latency signal (so it never opens a "responding slowly" incident), and a real, sustained
 * regression always does. Default settings, as a new endpoint has them.
 */
import fc from 'fast-check';
import { ALERT_SIGNAL_TRIGGERED } from '../../../src/alerting/domain/endpoint-alerts.js';
import { DEFAULT_LATENCY_SETTINGS } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { command, run } from './support.js';

const SAMPLES = DEFAULT_LATENCY_SETTINGS.latency_min_samples;
const ok = (latency_ms: number) => ({ success: true, latency_ms });
const latencyTriggers = (latencies: number[]) =>
  run(latencies.map((latency) => command(ok(latency))))
    .flatMap((step) => step.events)
    .filter((event) => event.type === ALERT_SIGNAL_TRIGGERED && (event.data as { signal: string }).signal === 'latency');

/** The largest jitter the defaults call immaterial over a base latency. */
const immaterial = (base: number) =>
  Math.max(DEFAULT_LATENCY_SETTINGS.latency_min_increase_ms, Math.floor((base * DEFAULT_LATENCY_SETTINGS.latency_min_increase_percent) / 100));

const series = fc.integer({ min: 1, max: 2_000 }).chain((base) =>
  fc.record({
    base: fc.constant(base),
    jitter: fc.array(fc.integer({ min: 0, max: immaterial(base) }), { minLength: SAMPLES + 10, maxLength: 150 }),
  }),
);

describe('latency detection is material', () => {
  it('never triggers on jitter within the floors, however fast the endpoint (2 ms median, 12-18 ms checks included)', () => {
    fc.assert(
      fc.property(series, ({ base, jitter }) => {
        expect(latencyTriggers(jitter.map((j) => base + j))).toEqual([]);
      }),
      { numRuns: 200, seed: 20261123 },
    );
    expect(latencyTriggers([...Array.from({ length: 60 }, () => 2), 12, 18, 15, 17, 14, 16, 18, 12])).toEqual([]);
  });

  it('triggers on a sustained regression well past the floors and the spread', () => {
    fc.assert(
      fc.property(series, fc.integer({ min: 0, max: 10 }), ({ base, jitter }, extraChecks) => {
        const worst = base + immaterial(base);
        // Past both floors and past sensitivity x the largest spread jitter can make.
        const regressed = Math.ceil(worst * 1.5 + 10 * immaterial(base) + 30);
        const regression = Array.from({ length: DEFAULT_LATENCY_SETTINGS.latency_trigger_count + extraChecks }, () => regressed);
        expect(latencyTriggers([...jitter.map((j) => base + j), ...regression])).toHaveLength(1);
      }),
      { numRuns: 200, seed: 20261123 },
    );
  });
});
