/**
 * Dependencies never hide a failure of an endpoint whose parents are up: over any interleaving of
 * parent signal changes and checks of the dependent (through the real recorder), a failing check
 * is suppressed exactly when a probed parent is triggered at the time, and the dependent's
 * availability signal moves as the rules say over the checks that were not suppressed.
 */
import fc from 'fast-check';
import { DependencyWorld } from './dependency-support.js';

const DEPENDENT = 20;
const PARENTS = [10, 11];
/** Registered and triggered, but disabled: never suppresses. */
const DISABLED_PARENT = 12;
const RULES = { latency_detection_mode: 'off' as const, latency_trigger_count: 2, latency_trigger_window: 3, latency_recovery_count: 2 };

type Step = { kind: 'parent'; id: number; state: 'triggered' | 'ok' } | { kind: 'check'; success: boolean };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('parent' as const), id: fc.constantFrom(...PARENTS, DISABLED_PARENT), state: fc.constantFrom('triggered' as const, 'ok' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('check' as const), success: fc.boolean() }), weight: 3 },
);

/** The availability rule over the counted (unsuppressed) checks, from the whole history at each step. */
function expectedSignals(counted: Array<{ success: boolean; check_id: number }>): Array<{ type: string; check_id: number }> {
  const out: Array<{ type: string; check_id: number }> = [];
  let triggered = false;
  counted.forEach((check, i) => {
    const window = counted.slice(Math.max(0, i + 1 - RULES.latency_trigger_window), i + 1);
    const streak = counted.slice(0, i + 1).reverse().findIndex((c) => !c.success);
    const successes = streak === -1 ? i + 1 : streak;
    if (!triggered && !check.success && window.filter((c) => !c.success).length >= RULES.latency_trigger_count) {
      triggered = true;
      out.push({ type: 'AlertSignalTriggered', check_id: check.check_id });
    } else if (triggered && successes >= RULES.latency_recovery_count) {
      triggered = false;
      out.push({ type: 'AlertSignalRecovered', check_id: check.check_id });
    }
  });
  return out;
}

it('a failure is suppressed only while a probed parent is triggered, and the signal follows the unsuppressed checks', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 30 }), async (steps) => {
      const world = new DependencyWorld();
      try {
        for (const id of PARENTS) await world.endpoint(id);
        await world.endpoint(DISABLED_PARENT, { enabled: false });
        await world.endpoint(DEPENDENT, { configuration: { ...RULES, depends_on: [...PARENTS, DISABLED_PARENT] } });
        const parentState = new Map<number, 'triggered' | 'ok'>();
        const counted: Array<{ success: boolean; check_id: number }> = [];
        for (const step of steps) {
          if (step.kind === 'parent') {
            if ((parentState.get(step.id) ?? 'ok') === step.state) continue;
            parentState.set(step.id, step.state);
            await world.parentSignal(step.id, step.state);
            continue;
          }
          const down = PARENTS.filter((id) => parentState.get(id) === 'triggered');
          const check = await world.check(DEPENDENT, step.success);
          const suppressed = !step.success && down.length > 0;
          // Parents up (or not probed): the failure is never hidden.
          expect(check.alert_suppressed).toBe(suppressed);
          expect(check.suppressed_by).toEqual(suppressed ? down : undefined);
          expect(check.failure_reason).toBe(step.success ? null : 'status: 503');
          if (!suppressed) counted.push({ success: step.success, check_id: check.check_id });
        }
        expect(await world.signals(DEPENDENT)).toEqual(expectedSignals(counted));
      } finally {
        await world.close();
      }
    }),
    { numRuns: 60 },
  );
});
