/**
 * Flapping (issue 26 item 3) in the alerting decider: given the checks so far, when a check is
 * recorded, then the signal events it causes. Checks are one minute apart.
 */
import { alertStatusView, initialState, type AlertSettings, type EndpointAlertsEvent, type RecordCheckCommand } from '../../../src/alerting/domain/endpoint-alerts.js';
import { DEFAULT_LATENCY_SETTINGS } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { command, last, run, type Step } from './support.js';

/** Every check can change the availability signal: 1 failure triggers, 1 success recovers. */
const SWIFT = { latency_detection_mode: 'off' as const, latency_trigger_count: 1, latency_trigger_window: 1, latency_recovery_count: 1 };

const checks = (pattern: string, settings: Record<string, unknown>) => [...pattern].map((c) => command({ success: c === '+' }, { ...SWIFT, ...settings }));

/** `index:Type[:flapping]` for each signal event. */
function signalLog(steps: Step[]): string[] {
  return steps.flatMap((step, index) =>
    step.events
      .filter((event: EndpointAlertsEvent) => event.type !== 'CheckRecorded')
      .map((event) => `${index}:${event.type.replace('AlertSignal', '')}${(event.data as { flapping?: boolean }).flapping ? ':flapping' : ''}`),
  );
}

describe('flapping', () => {
  it('by default, 5 changes within an hour are not flapping and the 6th starts it, after the change it marks', () => {
    const log = signalLog(run(checks('+-+-+-+', {})));
    expect(log).toEqual(['1:Triggered', '2:Recovered', '3:Triggered', '4:Recovered', '5:Triggered', '6:Recovered:flapping', '6:FlappingStarted']);
  });

  it('counts only the changes within the window', () => {
    // A change a minute, a 2-minute window: never more than 2 changes in it.
    expect(signalLog(run(checks('-+-+-+-+', { flap_threshold: 3, flap_window_seconds: 120 }))).filter((e) => e.includes('Flapping'))).toEqual([]);
    // The same changes with a 3-minute window: the third one starts flapping.
    expect(signalLog(run(checks('-+-+', { flap_threshold: 3, flap_window_seconds: 180 })))).toEqual(['0:Triggered', '1:Recovered', '2:Triggered:flapping', '2:FlappingStarted', '3:Recovered:flapping']);
  });

  it('marks every change while flapping and starts it once', () => {
    const log = signalLog(run(checks('-+-+-+-', { flap_threshold: 2, flap_window_seconds: 3_600 })));
    expect(log).toEqual([
      '0:Triggered',
      '1:Recovered:flapping',
      '1:FlappingStarted',
      '2:Triggered:flapping',
      '3:Recovered:flapping',
      '4:Triggered:flapping',
      '5:Recovered:flapping',
      '6:Triggered:flapping',
    ]);
  });

  it('stops on the first check that finds the signal recovered for a whole window, and not before', () => {
    const settings = { flap_threshold: 2, flap_window_seconds: 300 };
    // Recovered at check 1; checks 2-5 are 1-4 minutes later, check 6 is 5 minutes later.
    const steps = run(checks('-++++++', settings));
    expect(signalLog(steps)).toEqual(['0:Triggered', '1:Recovered:flapping', '1:FlappingStarted', '6:FlappingStopped']);
    expect(alertStatusView(steps[5].state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS).flapping).toBe(true);
    expect(alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS).flapping).toBe(false);
  });

  it('a trigger before the window is over keeps it flapping; the window counts from the last recovery', () => {
    const settings = { flap_threshold: 2, flap_window_seconds: 180 };
    const log = signalLog(run(checks('-++-++++', settings)));
    expect(log).toEqual(['0:Triggered', '1:Recovered:flapping', '1:FlappingStarted', '3:Triggered:flapping', '4:Recovered:flapping', '7:FlappingStopped']);
  });

  it('does not stop while the signal is triggered, however long', () => {
    const log = signalLog(run(checks('-+------', { flap_threshold: 2, flap_window_seconds: 120 })));
    expect(log).toEqual(['0:Triggered', '1:Recovered:flapping', '1:FlappingStarted', '2:Triggered:flapping']);
  });

  it('suppressed checks neither change the signal nor end flapping', () => {
    // The last two checks come a whole window (2 minutes) after the recovery.
    const settings = { ...SWIFT, flap_threshold: 2, flap_window_seconds: 120 };
    const steps = run([
      command({ success: false }, settings),
      command({ success: true }, settings),
      command({ success: true, alert_suppressed: true }, settings),
      command({ success: true, alert_suppressed: true }, settings),
    ]);
    expect(signalLog(steps)).toEqual(['0:Triggered', '1:Recovered:flapping', '1:FlappingStarted']);
    expect(last(steps).state.flap?.flapping).toBe(true);
  });

  it('goes on from a state stored before flapping existed (no flap field)', () => {
    const { flap: _flap, ...stored } = initialState();
    const steps = run(checks('-+', { flap_threshold: 2 }), stored);
    expect(signalLog(steps)).toEqual(['0:Triggered', '1:Recovered:flapping', '1:FlappingStarted']);
  });

  it('an endpoint with regions flaps by the same rule when its quorum swings', () => {
    // Regions a, b, c, quorum 2, each region's own signal swift: a fails throughout, c is up, b alternates.
    const settings: Partial<AlertSettings> = { ...SWIFT, regions: ['a', 'b', 'c'], region_quorum: 2, interval_seconds: 60, flap_threshold: 3, flap_window_seconds: 3_600 };
    const regional = (region: string, success: boolean): RecordCheckCommand => {
      const cmd = command({ success }, settings);
      return { ...cmd, region, regional: true };
    };
    const rounds = [0, 1, 2, 3].flatMap((round) => [regional('a', false), regional('b', round % 2 === 1), regional('c', true)]);
    const steps = run(rounds);
    // The endpoint's own signal events (the regions' signals change on their own events).
    const endpointLog = signalLog(steps).filter((entry) => !entry.includes('RegionSignal'));
    expect(endpointLog).toEqual(['1:Triggered', '4:Recovered', '7:Triggered:flapping', '7:FlappingStarted', '10:Recovered:flapping']);
    expect(alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, { ...DEFAULT_LATENCY_SETTINGS, ...settings }).flapping).toBe(true);
  });
});
