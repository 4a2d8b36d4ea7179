import type { IncidentEvent, LinkedCheck } from '../../../src/incidents/domain/events.js';
import { decide, evolve, type Incident, type IncidentCommand, type IncidentState } from '../../../src/incidents/domain/incident.js';

export const INVESTIGATING = { id: 1, name: 'Investigating' };
export const IDENTIFIED = { id: 2, name: 'Identified' };
export const MONITORING = { id: 3, name: 'Monitoring' };

export const T0 = '2026-03-01T10:00:00.000Z';

/** `T0` plus `minutes`, as stored timestamps look. */
export function at(minutes: number): string {
  return new Date(Date.parse(T0) + minutes * 60_000).toISOString();
}

/** Runs a command against the state and folds its events back in, like a handler would. */
export function run(state: IncidentState, command: IncidentCommand, now = T0): { state: IncidentState; events: IncidentEvent[] } {
  const events = decide(state, command, { now });
  return { state: events.reduce(evolve, state), events };
}

/** Applies commands in sequence, each at its own time; returns the final state and every event. */
export function history(steps: [IncidentCommand, string][], from: IncidentState = null): { state: IncidentState; events: IncidentEvent[] } {
  let state = from;
  const events: IncidentEvent[] = [];
  for (const [command, now] of steps) {
    const result = run(state, command, now);
    state = result.state;
    events.push(...result.events);
  }
  return { state, events };
}

export function createCommand(overrides: Partial<Extract<IncidentCommand, { kind: 'create' }>> = {}): IncidentCommand {
  return { kind: 'create', incident_id: 10, team_id: 1, project_id: 5, endpoint_ids: [101, 102], title: 'Checkout is failing', status: INVESTIGATING, ...overrides };
}

export function created(overrides: Partial<Extract<IncidentCommand, { kind: 'create' }>> = {}, now = T0): Incident {
  return run(null, createCommand(overrides), now).state as Incident;
}

export function failingCheck(id: number, checkedAt: string, endpointId = 101): LinkedCheck {
  return {
    id,
    endpoint_id: endpointId,
    configuration_version: 1,
    success: false,
    status_code: 503,
    latency_ms: 120,
    time_to_first_byte_ms: 100,
    duration_ms: 130,
    source: 'scheduled',
    body_complete: true,
    latency_anomaly: false,
    latency_threshold_ms: null,
    alert_suppressed: false,
    failure_reason: 'status: 503',
    response_excerpt_omitted: true,
    checked_at: checkedAt,
  };
}
