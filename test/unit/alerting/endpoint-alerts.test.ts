import {
  alertStatusView,
  decide,
  evolve,
  initialState,
  storedState,
  type AlertSignalTriggeredData,
  type EndpointAlertsState,
} from '../../../src/alerting/domain/endpoint-alerts.js';
import type { CheckRecordedData } from '../../../src/checks/domain/check.js';
import { DEFAULT_LATENCY_SETTINGS } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { command, last, run, signalEvents, type CheckSpec } from './support.js';

const ok = (latency_ms = 100): CheckSpec => ({ success: true, latency_ms });
const fail: CheckSpec = { success: false, latency_ms: 30 };
const FIXED_500 = { latency_detection_mode: 'fixed' as const, latency_fixed_threshold_ms: 500 };

function recorded(step: { events: { type: string; data: unknown }[] }): CheckRecordedData {
  const event = step.events.find((e) => e.type === 'CheckRecorded');
  if (!event) throw new Error('no CheckRecorded event');
  return event.data as CheckRecordedData;
}

function signalState(state: EndpointAlertsState, type: 'availability' | 'latency') {
  return state.signals[type].state;
}

describe('latency threshold on each check', () => {
  it('fixed mode flags a successful check strictly above the fixed threshold', () => {
    const steps = run([ok(501), ok(500), { success: false, latency_ms: 900 }].map((spec) => command(spec, FIXED_500)));
    expect(steps.map((s) => [recorded(s).latency_threshold_ms, recorded(s).latency_anomaly])).toEqual([
      [500, true],
      [500, false],
      [500, false],
    ]);
  });

  it('off mode applies no threshold and flags nothing', () => {
    const [step] = run([command(ok(99_999), { latency_detection_mode: 'off' })]);
    expect(recorded(step)).toMatchObject({ latency_threshold_ms: null, latency_anomaly: false });
  });

  it('auto mode has no threshold until min_samples checks, then judges against the earlier ones', () => {
    const statistical = { latency_min_increase_ms: 0, latency_min_increase_percent: 0 };
    const steps = run([...Array.from({ length: 20 }, () => command(ok(100), statistical)), command(ok(116), statistical), command(ok(115), statistical)]);
    expect(recorded(steps[19]).latency_threshold_ms).toBeNull();
    // the 21st check is judged against the 20 before it (median 100, MAD 0, spread floor 5 ms)
    expect(recorded(steps[20])).toMatchObject({ latency_threshold_ms: 115, latency_anomaly: true });
    expect(recorded(steps[21])).toMatchObject({ latency_threshold_ms: 115, latency_anomaly: false });
  });

  it('records the outcome, ids and inputs unchanged in CheckRecorded', () => {
    const cmd = command({ success: false, latency_ms: 42, source: 'manual', alert_suppressed: true });
    const [event] = decide(initialState(), cmd);
    expect(event).toEqual({
      type: 'CheckRecorded',
      data: {
        ...cmd.outcome,
        // the prober's region (local by default), as the recorder writes it
        region: 'local',
        check_id: cmd.check_id,
        team_id: 1,
        project_id: 3,
        endpoint_id: 7,
        configuration_version: 1,
        source: 'manual',
        job_id: cmd.job_id,
        alert_suppressed: true,
        imported: false,
        latency_anomaly: false,
        latency_threshold_ms: null,
      },
    });
  });
});

describe('availability signal (3 of the last 5, 3 to recover)', () => {
  it('triggers exactly when the third failure of the window arrives', () => {
    const steps = run([ok(), fail, ok(), fail, ok(), fail].map((spec) => command(spec)));
    expect(signalEvents(steps)).toEqual(['5:AlertSignalTriggered:availability']);
    const triggered = last(steps).events[1].data as AlertSignalTriggeredData;
    expect(triggered).toEqual({
      endpoint_id: 7,
      team_id: 1,
      project_id: 3,
      signal: 'availability',
      check_id: last(steps).command.check_id,
      at: last(steps).command.outcome.checked_at,
    });
  });

  it('does not trigger when older failures have left the window', () => {
    const steps = run([fail, fail, ok(), ok(), ok(), fail].map((spec) => command(spec)));
    expect(signalEvents(steps)).toEqual([]);
  });

  it('recovers after 3 consecutive successes; a failure in between starts the count again', () => {
    const steps = run([fail, fail, fail, ok(), ok(), fail, ok(), ok(), ok()].map((spec) => command(spec)));
    expect(signalEvents(steps)).toEqual(['2:AlertSignalTriggered:availability', '8:AlertSignalRecovered:availability']);
    expect(alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS).signals[0]).toEqual({
      type: 'availability',
      state: 'ok',
      since: last(steps).command.outcome.checked_at,
      incident_id: null,
    });
  });

  it('shows the linked incident while triggered and clears it on recovery', () => {
    const steps = run([fail, fail, fail].map((spec) => command(spec)));
    const linked = evolve(last(steps).state, {
      type: 'AlertSignalIncidentLinked',
      data: { endpoint_id: 7, signal: 'availability', incident_id: 41 },
    });
    expect(linked.signals.availability).toMatchObject({ state: 'triggered', incident_id: 41 });
    const recovered = last(run([ok(), ok(), ok()].map((spec) => command(spec)), linked)).state;
    expect(recovered.signals.availability).toMatchObject({ state: 'ok', incident_id: null });
  });
});

describe('latency signal (fixed 500 ms, 3 of the last 5 successful checks)', () => {
  it('triggers on the third slow success; failures are not judged', () => {
    const steps = run([ok(600), ok(100), fail, ok(600), fail, ok(600)].map((spec) => command(spec, FIXED_500)));
    expect(signalEvents(steps)).toEqual(['5:AlertSignalTriggered:latency']);
    expect(last(steps).events[1].data).toMatchObject({ signal: 'latency', threshold_ms: 500 });
  });

  it('recovers after 3 consecutive successes under the threshold, failures not breaking the run', () => {
    const slow = [ok(600), ok(600), ok(600)];
    const steps = run([...slow, ok(100), ok(600), ok(100), ok(100), fail, ok(100)].map((spec) => command(spec, FIXED_500)));
    expect(signalEvents(steps)).toEqual(['2:AlertSignalTriggered:latency', '8:AlertSignalRecovered:latency']);
  });

  it('recovers on the next check once detection is switched off', () => {
    const slow = [ok(600), ok(600), ok(600)].map((spec) => command(spec, FIXED_500));
    const steps = run([...slow, command(ok(600), { latency_detection_mode: 'off' })]);
    expect(signalEvents(steps)).toEqual(['2:AlertSignalTriggered:latency', '3:AlertSignalRecovered:latency']);
  });

  it('forgets slow checks judged before detection was switched off', () => {
    const slow = [ok(600), ok(600)].map((spec) => command(spec, FIXED_500));
    const steps = run([...slow, command(ok(600), { latency_detection_mode: 'off' }), command(ok(600), FIXED_500)]);
    expect(signalEvents(steps)).toEqual([]);
  });
});

describe('latency measured while the monitor itself was busy (fixed 500 ms, floor 25 ms)', () => {
  // At saturation a response waits in the socket while the monitor's loop runs other work, and
  // that wait reads as target latency: a target answering in 1 ms read as 13-400 ms.
  const busy = (latency_ms: number, loop_busy_ms: number): CheckSpec => ({ success: true, latency_ms, loop_busy_ms });

  it('leaves unjudged a check over the threshold only with the busy time in it: no anomaly, no window, no signal', () => {
    const steps = run([busy(600, 150), busy(600, 150), busy(600, 150)].map((spec) => command(spec, FIXED_500)));
    expect(signalEvents(steps)).toEqual([]);
    expect(recorded(last(steps))).toMatchObject({ latency_anomaly: false, latency_threshold_ms: 500, latency_unjudged: true });
    expect(last(steps).state.latencyExceeded.toArray()).toEqual([]);
    expect(last(steps).state.baselineSamples.toArray()).toEqual([]);
  });

  it('judges exceeding a check over the threshold even without the busy time, out of the baseline', () => {
    const steps = run([busy(900, 150), busy(900, 150), busy(900, 150)].map((spec) => command(spec, FIXED_500)));
    expect(signalEvents(steps)).toEqual(['2:AlertSignalTriggered:latency']);
    expect(recorded(last(steps))).toMatchObject({ latency_anomaly: true, latency_inflated: true });
    expect(recorded(last(steps)).latency_unjudged).toBeUndefined();
    expect(last(steps).state.baselineSamples.toArray()).toEqual([]);
  });

  it('judges within a check under the threshold; busy time above the floor keeps it out of the baseline', () => {
    const steps = run([busy(100, 150), busy(100, 25)].map((spec) => command(spec, FIXED_500)));
    expect(recorded(steps[0])).toMatchObject({ latency_anomaly: false, latency_inflated: true });
    expect(recorded(steps[1]).latency_inflated).toBeUndefined();
    expect(storedState(last(steps).state)).toMatchObject({ latencyExceeded: [false, false], consecutiveUnder: 2, baselineSamples: [100] });
  });

  it('does not recover a triggered signal on unjudged checks', () => {
    const slow = [ok(600), ok(600), ok(600)];
    const steps = run([...slow, busy(600, 150), busy(600, 150), busy(600, 150), ok(100), ok(100), ok(100)].map((spec) => command(spec, FIXED_500)));
    expect(signalEvents(steps)).toEqual(['2:AlertSignalTriggered:latency', '8:AlertSignalRecovered:latency']);
    expect(storedState(steps[5].state)).toMatchObject({ latencyExceeded: [true, true, true], consecutiveUnder: 0, baselineSamples: [600, 600, 600] });
  });
});

describe('checks that never move signals or the baseline', () => {
  const ignored: [string, CheckSpec][] = [
    ['suppressed', { alert_suppressed: true }],
    ['manual', { source: 'manual' }],
    ['imported', { imported: true, job_id: null }],
  ];

  it.each(ignored)('%s failures and slow checks raise no signal', (_name, flags) => {
    const specs = [...Array.from({ length: 5 }, () => ({ ...fail, ...flags })), ...Array.from({ length: 5 }, () => ({ ...ok(900), ...flags }))];
    const steps = run(specs.map((spec) => command(spec, FIXED_500)));
    // Failures a maintenance window hid may make the endpoint fail during maintenance (which
    // suppresses its dependents: dependencies.test.ts), never move a signal.
    expect(signalEvents(steps).filter((event) => !event.includes(':AlertMaintenanceFailure'))).toEqual([]);
    // still judged for display
    expect(recorded(last(steps))).toMatchObject({ latency_threshold_ms: 500, latency_anomaly: true });
  });

  it.each(ignored)('%s checks do not feed the baseline', (_name, flags) => {
    const steps = run(Array.from({ length: 25 }, () => command({ ...ok(100), ...flags })));
    expect(alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS).latency_baseline).toBeNull();
  });

  it('a suppressed success does not count toward recovery', () => {
    const steps = run([fail, fail, fail, ok(), ok(), { ...ok(), alert_suppressed: true }].map((spec) => command(spec)));
    expect(signalState(last(steps).state, 'availability')).toBe('triggered');
  });
});

describe('redelivered probe job', () => {
  it('records nothing the second time', () => {
    const first = command({ ...fail, job_id: 'job-x' });
    const [step] = run([first]);
    const again = command({ ...fail, job_id: 'job-x' });
    expect(decide(step.state, again)).toEqual([]);
  });
});

describe('alert status view', () => {
  it('lists both signals as ok and no baseline for a new endpoint', () => {
    expect(alertStatusView(initialState(), { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS)).toEqual({
      team_id: 1,
      endpoint_id: 7,
      latency_baseline: null,
      signals: [
        { type: 'availability', state: 'ok', since: null, incident_id: null },
        { type: 'latency', state: 'ok', since: null, incident_id: null },
      ],
      flapping: false,
    });
  });

  it('shows the baseline once min_samples successful checks exist, with its materiality floors', () => {
    const steps = run(Array.from({ length: 20 }, (_, i) => command(ok(i % 2 === 0 ? 100 : 110))));
    expect(alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS).latency_baseline).toEqual({
      samples: 20,
      median_ms: 105,
      mad_ms: 5,
      // statistically 105 + 3 x max(1.4826 x 5, 5.25) = 127.239; materially 105 x 1.25 = 131.25
      threshold_ms: 131,
      computed_at: last(steps).command.outcome.checked_at,
      min_increase_ms: 25,
      min_increase_percent: 25,
    });
  });
});
