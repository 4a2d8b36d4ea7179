import {
  decide,
  evolve,
  initialState,
  type EndpointAlertsEvent,
  type EndpointAlertsState,
  type RecordCheckCommand,
  type SignalSettings,
} from '../../../src/alerting/domain/endpoint-alerts.js';
import { DEFAULT_LATENCY_SETTINGS } from '../../../src/monitoring/domain/endpoint-configuration.js';

export interface CheckSpec {
  success?: boolean;
  latency_ms?: number;
  source?: 'scheduled' | 'manual';
  alert_suppressed?: boolean;
  imported?: boolean;
  job_id?: string | null;
  /** How long the monitor's loop was busy while the request was in flight (ProbeOutcome.loop_busy_ms). */
  loop_busy_ms?: number;
  settings?: Partial<SignalSettings>;
}

let nextCheckId = 1;

/** A RecordCheck command for endpoint 7 of project 3, team 1; scheduled and successful unless told. */
export function command(spec: CheckSpec = {}, base: Partial<SignalSettings> = {}): RecordCheckCommand {
  const check_id = nextCheckId++;
  const success = spec.success ?? true;
  return {
    outcome: {
      success,
      status_code: success ? 200 : 503,
      latency_ms: spec.latency_ms ?? 100,
      time_to_first_byte_ms: 10,
      duration_ms: spec.latency_ms ?? 100,
      body_complete: true,
      failure_reason: success ? null : 'status: 503',
      response_excerpt: null,
      checked_at: new Date(Date.UTC(2026, 10, 21) + check_id * 60_000).toISOString(),
      ...(spec.loop_busy_ms === undefined ? {} : { loop_busy_ms: spec.loop_busy_ms }),
    },
    check_id,
    team_id: 1,
    project_id: 3,
    endpoint_id: 7,
    configuration_version: 1,
    source: spec.source ?? 'scheduled',
    job_id: spec.job_id === undefined ? `job-${check_id}` : spec.job_id,
    imported: spec.imported ?? false,
    alert_suppressed: spec.alert_suppressed ?? false,
    settings: { ...DEFAULT_LATENCY_SETTINGS, ...base, ...spec.settings },
  };
}

export interface Step {
  command: RecordCheckCommand;
  events: EndpointAlertsEvent[];
  state: EndpointAlertsState;
}

/** Runs commands through decide and folds the events with evolve, as the command handler does. */
export function run(commands: RecordCheckCommand[], from: EndpointAlertsState = initialState()): Step[] {
  const steps: Step[] = [];
  let state = from;
  for (const cmd of commands) {
    const events = decide(state, cmd);
    state = events.reduce(evolve, state);
    steps.push({ command: cmd, events, state });
  }
  return steps;
}

export function last<T>(items: T[]): T {
  return items[items.length - 1];
}

export function signalEvents(steps: Step[]): string[] {
  return steps.flatMap((step, index) =>
    step.events
      .filter((event) => event.type !== 'CheckRecorded')
      .map((event) => `${index}:${event.type}:${(event.data as { signal: string }).signal}`),
  );
}
