/**
 * The quorum decision of an endpoint with regions (issue 25), over random region outcomes:
 * regions fail and recover by their own rule, some stop reporting (unknown), and the endpoint's
 * availability signal must be triggered exactly while at least `region_quorum` known regions
 * are failing, each of its events carrying the evidence as at the decision.
 */
import fc from 'fast-check';
import {
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  REGION_SIGNAL_TRIGGERED,
  alertStatusView,
  decide,
  evolve,
  initialState,
  type AlertSignalTriggeredData,
  type AlertSettings,
  type EndpointAlertsState,
  type RecordCheckCommand,
} from '../../../src/alerting/domain/endpoint-alerts.js';
import { quorumDecision, regionReason } from '../../../src/alerting/domain/regions.js';
import { command } from './support.js';

const INTERVAL_S = 60;
const T0 = Date.UTC(2026, 10, 21);

describe('quorumDecision', () => {
  it('triggers exactly when at least quorum known regions fail; unknown ones count neither way', () => {
    const observation = fc.record({ known: fc.boolean(), failing: fc.boolean() });
    fc.assert(
      fc.property(fc.array(observation, { minLength: 1, maxLength: 16 }), fc.integer({ min: 1, max: 16 }), (observed, quorum) => {
        const regions = observed.map((o, i) => ({ name: `r${i}`, ...o }));
        const { evidence, triggered } = quorumDecision(regions, quorum);
        const failing = regions.filter((r) => r.known && r.failing).map((r) => r.name);
        expect(evidence.failing).toEqual(failing);
        expect(evidence.up).toEqual(regions.filter((r) => r.known && !r.failing).map((r) => r.name));
        expect(evidence.unknown).toEqual(regions.filter((r) => !r.known).map((r) => r.name));
        expect(evidence.quorum).toBe(quorum);
        expect(triggered).toBe(failing.length >= quorum);
      }),
    );
  });

  it('words the evidence as the detection reason', () => {
    expect(regionReason({ failing: ['eu-west', 'us-east'], up: ['ap-south'], unknown: [], quorum: 2 })).toBe('2 of 3 regions failing: eu-west, us-east; ap-south up');
    expect(regionReason({ failing: ['a', 'b'], up: [], unknown: ['c'], quorum: 2 })).toBe('2 of 3 regions failing: a, b; c unknown');
  });
});

interface RegionModel {
  failures: boolean[];
  consecutiveSuccesses: number;
  triggered: boolean;
  lastAt: number | null;
}

describe('regional availability decisions', () => {
  const rulesArb = fc
    .record({ count: fc.integer({ min: 1, max: 3 }), window: fc.integer({ min: 1, max: 4 }), recovery: fc.integer({ min: 1, max: 3 }) })
    .filter((rules) => rules.count <= rules.window);
  const regionNames = ['a', 'b', 'c', 'd'];
  // Each round: which regions report (missing ones go quiet) and whether each check fails.
  const roundArb = fc.array(fc.record({ reports: fc.integer({ min: 0, max: 4 }).map((n) => n > 0), fails: fc.boolean() }), { minLength: 4, maxLength: 4 });

  it('follows the quorum of the regions by their own rules, with the evidence on every endpoint transition', () => {
    fc.assert(
      fc.property(rulesArb, fc.integer({ min: 2, max: 4 }), fc.integer({ min: 1, max: 4 }), fc.array(roundArb, { minLength: 1, maxLength: 25 }), (rules, regionCount, rawQuorum, rounds) => {
        const regions = regionNames.slice(0, regionCount);
        const quorum = Math.min(rawQuorum, regionCount);
        const settings: Partial<AlertSettings> = { regions, region_quorum: quorum, interval_seconds: INTERVAL_S };
        const models = new Map<string, RegionModel>(regions.map((r) => [r, { failures: [], consecutiveSuccesses: 0, triggered: false, lastAt: null }]));
        let state: EndpointAlertsState = initialState();
        let endpointTriggered = false;
        rounds.forEach((round, roundIndex) => {
          regions.forEach((region, index) => {
            const { reports, fails } = round[index];
            if (!reports) return;
            const at = T0 + roundIndex * INTERVAL_S * 1000 + index * 1000;
            const cmd = regionalCommand(region, !fails, at, rules, settings);
            const events = decide(state, cmd);
            for (const event of events) state = evolve(state, event);

            // The model: the region's own rule, then the quorum as at this check.
            const model = models.get(region)!;
            model.failures = [...model.failures, fails].slice(-rules.window);
            model.consecutiveSuccesses = fails ? 0 : model.consecutiveSuccesses + 1;
            model.lastAt = at;
            if (!model.triggered && fails && model.failures.filter(Boolean).length >= rules.count) model.triggered = true;
            else if (model.triggered && model.consecutiveSuccesses >= rules.recovery) model.triggered = false;
            const known = (r: string) => models.get(r)!.lastAt !== null && at - models.get(r)!.lastAt! <= 3 * INTERVAL_S * 1000;
            const failing = regions.filter((r) => known(r) && models.get(r)!.triggered);
            const down = failing.length >= quorum;

            const endpointEvents = events.filter((e) => e.type === ALERT_SIGNAL_TRIGGERED || e.type === ALERT_SIGNAL_RECOVERED).filter((e) => (e.data as AlertSignalTriggeredData).signal === 'availability');
            if (down !== endpointTriggered) {
              expect(endpointEvents.map((e) => e.type)).toEqual([down ? ALERT_SIGNAL_TRIGGERED : ALERT_SIGNAL_RECOVERED]);
              const evidence = (endpointEvents[0].data as AlertSignalTriggeredData).regions!;
              expect(evidence.failing).toEqual(failing);
              expect(evidence.unknown).toEqual(regions.filter((r) => !known(r)));
              expect(evidence.up).toEqual(regions.filter((r) => known(r) && !models.get(r)!.triggered));
              expect(evidence.quorum).toBe(quorum);
              endpointTriggered = down;
            } else {
              expect(endpointEvents).toEqual([]);
            }
            expect(state.signals.availability.state).toBe(endpointTriggered ? 'triggered' : 'ok');
            expect(state.regionSignals?.[region]?.availability.state ?? 'ok').toBe(model.triggered ? 'triggered' : 'ok');
            // A region's checks never move the endpoint's own windows.
            expect(state.availabilityFailures.length).toBe(0);
          });
        });
      }),
      { numRuns: 300 },
    );
  });

  it('opens nothing while one region of three fails alone, and triggers when a second joins it', () => {
    const settings: Partial<AlertSettings> = { regions: ['a', 'b', 'c'], region_quorum: 2, interval_seconds: INTERVAL_S };
    const rules = { count: 3, window: 5, recovery: 3 };
    let state = initialState();
    const triggers: AlertSignalTriggeredData[] = [];
    const regionTriggers: string[] = [];
    const step = (region: string, success: boolean, at: number) => {
      for (const event of decide(state, regionalCommand(region, success, at, rules, settings))) {
        state = evolve(state, event);
        if (event.type === REGION_SIGNAL_TRIGGERED) regionTriggers.push(`${event.data.region}:${event.data.signal}`);
        if (event.type === ALERT_SIGNAL_TRIGGERED) triggers.push(event.data as AlertSignalTriggeredData);
      }
    };
    for (let round = 0; round < 10; round++) {
      const at = T0 + round * INTERVAL_S * 1000;
      step('a', false, at);
      step('b', true, at + 1);
      step('c', true, at + 2);
    }
    expect(triggers).toEqual([]);
    // The region's own signal is an event of its own (visible in the history and alert status).
    expect(regionTriggers).toEqual(['a:availability']);
    expect(state.regionSignals?.a?.availability.state).toBe('triggered');
    const view = alertStatusView(state, { team_id: 1, endpoint_id: 7 }, { ...command().settings, ...settings }, new Date(T0 + 9 * INTERVAL_S * 1000 + 3));
    expect(view.regions?.map((r) => [r.name, r.state, r.signals[0].state])).toEqual([
      ['a', 'known', 'triggered'],
      ['b', 'known', 'ok'],
      ['c', 'known', 'ok'],
    ]);
    expect(view.quorum?.availability).toMatchObject({ failing: ['a'], up: ['b', 'c'], unknown: [], failing_count: 1, triggered: false });

    for (let round = 10; round < 13; round++) {
      const at = T0 + round * INTERVAL_S * 1000;
      step('a', false, at);
      step('b', false, at + 1);
      step('c', true, at + 2);
    }
    expect(triggers).toHaveLength(1);
    expect(triggers[0].regions).toEqual({ failing: ['a', 'b'], up: ['c'], unknown: [], quorum: 2 });
  });
});

describe('the quorum horizon: three intervals', () => {
  const settings: Partial<AlertSettings> = { regions: ['a', 'b', 'c'], region_quorum: 2, interval_seconds: INTERVAL_S };
  const rules = { count: 1, window: 1, recovery: 1 };
  /** At a's check of slot 0: a and b failing, c not heard from yet. */
  const TRIGGERED = 'AlertSignalTriggered at a: failing a,b; unknown c';

  /** Regions a and b failing, c up; b's check lands first in each slot, a's and c's a few ms later (probers are not in step). */
  function outage() {
    let state = initialState();
    const changes: string[] = [];
    const step = (region: string, success: boolean, at: number) => {
      for (const event of decide(state, regionalCommand(region, success, at, rules, settings))) {
        state = evolve(state, event);
        if (event.type === ALERT_SIGNAL_TRIGGERED || event.type === ALERT_SIGNAL_RECOVERED) {
          const data = event.data as AlertSignalTriggeredData;
          if (data.signal === 'availability') changes.push(`${event.type} at ${region}: failing ${data.regions!.failing.join(',')}; unknown ${data.regions!.unknown.join(',')}`);
        }
      }
    };
    const slot = (round: number, regions: string[]) => {
      const at = T0 + round * INTERVAL_S * 1000;
      if (regions.includes('b')) step('b', false, at);
      if (regions.includes('a')) step('a', false, at + 5);
      if (regions.includes('c')) step('c', true, at + 6);
    };
    /** The alert-status quorum as at `at`: [region, known/unknown] and the availability evidence. */
    const statusAt = (at: number) => {
      const view = alertStatusView(state, { team_id: 1, endpoint_id: 7 }, { ...command().settings, ...settings }, new Date(at));
      return { regions: view.regions!.map((r) => [r.name, r.state]), availability: view.quorum!.availability };
    };
    return { slot, step, changes, statusAt };
  }

  it('a region last seen 2.5 intervals ago is known and failing; more than three intervals ago, unknown', () => {
    const { slot, step, changes, statusAt } = outage();
    slot(0, ['a', 'b', 'c']); // b's newest check at T0, a's at T0 + 5 ms, c's at T0 + 6 ms
    const interval = INTERVAL_S * 1000;

    expect(statusAt(T0 + 2.5 * interval)).toMatchObject({
      regions: [['a', 'known'], ['b', 'known'], ['c', 'known']],
      availability: { failing: ['a', 'b'], up: ['c'], unknown: [], triggered: true },
    });
    expect(statusAt(T0 + 3 * interval)).toMatchObject({ availability: { failing: ['a', 'b'], unknown: [], triggered: true } });
    expect(statusAt(T0 + 3 * interval + 1)).toMatchObject({
      regions: [['a', 'known'], ['b', 'unknown'], ['c', 'known']],
      availability: { failing: ['a'], up: ['c'], unknown: ['b'], triggered: false },
    });

    // Decided at a check: a's check 2.5 intervals after b's keeps the outage (b known, failing) ...
    step('a', false, T0 + 2.5 * interval);
    expect(changes).toEqual([TRIGGERED]);
    // ... and one just past three intervals after b's ends it (b unknown).
    step('a', false, T0 + 3 * interval + 1);
    expect(changes).toEqual([TRIGGERED, 'AlertSignalRecovered at a: failing a; unknown b']);
  });

  it('one missed slot of a failing region does not end an outage held by exactly the quorum', () => {
    const { slot, changes } = outage();
    slot(0, ['a', 'b', 'c']);
    expect(changes).toEqual([TRIGGERED]);
    slot(1, ['a', 'c']); // b's slot 1 is missed
    slot(2, ['a', 'c']); // b's slot 2 comes late: a and c first, b's newest check is 2 intervals and 5 ms old
    slot(2, ['b']);
    slot(3, ['a', 'b', 'c']);
    expect(changes).toEqual([TRIGGERED]);
  });

  it('a failing region silent for more than three intervals stops holding the outage open', () => {
    const { slot, changes } = outage();
    slot(0, ['a', 'b', 'c']);
    slot(1, ['a', 'c']);
    slot(2, ['a', 'c']);
    expect(changes).toEqual([TRIGGERED]);
    slot(3, ['a', 'c']); // b's newest check is now three intervals and 5 ms old
    expect(changes).toEqual([TRIGGERED, 'AlertSignalRecovered at a: failing a; unknown b']);
  });
});

function regionalCommand(region: string, success: boolean, at: number, rules: { count: number; window: number; recovery: number }, settings: Partial<AlertSettings>): RecordCheckCommand {
  const cmd = command({ success }, { latency_detection_mode: 'off', latency_trigger_count: rules.count, latency_trigger_window: rules.window, latency_recovery_count: rules.recovery });
  return {
    ...cmd,
    outcome: { ...cmd.outcome, checked_at: new Date(at).toISOString() },
    region,
    regional: true,
    settings: { ...cmd.settings, ...settings },
  };
}
