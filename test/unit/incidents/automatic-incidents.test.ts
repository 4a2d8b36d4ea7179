/**
 * Automatic incidents of issue 26 (given events, when a command, then events): the
 * certificate_expiry type and grouping (joins, per-endpoint recoveries, resolution).
 */
import { IncidentValidationError } from '../../../src/incidents/domain/errors.js';
import { INCIDENT_OPENED } from '../../../src/incidents/domain/events.js';
import { describeEvent } from '../../../src/incidents/domain/history.js';
import type { IncidentCommand } from '../../../src/incidents/domain/incident.js';
import { INVESTIGATING, at, created, failingCheck, run } from './fixtures.js';

const openAutomatic = (signal: 'availability' | 'latency' | 'certificate', checks: ReturnType<typeof failingCheck>[] = []) =>
  run(null, { kind: 'open_automatic', incident_id: 30, team_id: 1, project_id: 5, endpoint_id: 101, signal, title: 'x', detection_reason: 'why', status: INVESTIGATING, checks });

describe('certificate expiry incidents', () => {
  it('a certificate signal opens a warning incident of type certificate_expiry, auto-resolving, with no check linked', () => {
    const { events, state } = openAutomatic('certificate');
    expect(events.map((e) => e.type)).toEqual([INCIDENT_OPENED]);
    expect(state).toMatchObject({ type: 'certificate_expiry', severity: 'warning', source: 'automatic', auto_resolve: true, error_count: 0, detection_reason: 'why' });
  });

  it('resolves on the signal\'s recovery', () => {
    const { events } = run(openAutomatic('certificate').state, { kind: 'resolve_on_recovery' }, at(5));
    expect(events.map((e) => e.type)).toEqual(['IncidentResolved']);
  });
});

describe('grouping: endpoints joining an automatic incident', () => {
  const opened = () => openAutomatic('availability', [failingCheck(900, at(-1), 101)]).state;
  const join = (endpointId: number, checkId: number): IncidentCommand => ({
    kind: 'join_automatic',
    endpoint_id: endpointId,
    signal: 'availability',
    reason: `endpoint ${endpointId} down`,
    checks: [failingCheck(checkId, at(1), endpointId)],
  });

  it('a join adds the endpoint, links its checks in the same append and counts them', () => {
    const { events, state } = run(opened(), join(102, 901), at(1));
    expect(events.map((e) => e.type)).toEqual(['IncidentEndpointJoined', 'IncidentCheckLinked']);
    expect(events[0].data).toMatchObject({ incident_id: 30, endpoint_id: 102, signal: 'availability', reason: 'endpoint 102 down' });
    expect(state).toMatchObject({ endpoint_ids: [101, 102], error_count: 2, last_error_at: at(1), awaiting_recovery: [101, 102] });
  });

  it('an endpoint already waiting for its recovery only links new checks', () => {
    const { state } = run(opened(), join(102, 901), at(1));
    const again = run(state, join(102, 902), at(2));
    expect(again.events.map((e) => e.type)).toEqual(['IncidentCheckLinked']);
    expect(run(again.state, join(102, 902), at(3)).events).toEqual([]);
  });

  it('each recovery is recorded; the incident resolves when the last endpoint has recovered', () => {
    let state = run(opened(), join(102, 901), at(1)).state;
    state = run(state, join(103, 902), at(1)).state;
    const first = run(state, { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(5));
    expect(first.events.map((e) => e.type)).toEqual(['IncidentEndpointRecovered']);
    expect(first.state).toMatchObject({ resolved_at: null, awaiting_recovery: [101, 103] });
    const second = run(first.state, { kind: 'resolve_on_recovery', endpoint_id: 101 }, at(6));
    expect(second.state?.resolved_at).toBeNull();
    const last = run(second.state, { kind: 'resolve_on_recovery', endpoint_id: 103 }, at(7));
    expect(last.events.map((e) => e.type)).toEqual(['IncidentEndpointRecovered', 'IncidentResolved']);
    expect(last.state).toMatchObject({ resolved_at: at(7), awaiting_recovery: [] });
  });

  it('a recovery of an endpoint not waiting (recorded already) changes nothing', () => {
    const state = run(run(opened(), join(102, 901), at(1)).state, { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(5)).state;
    expect(run(state, { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(6)).events).toEqual([]);
  });

  it('an endpoint that recovered and fails again waits for its recovery again', () => {
    let state = run(opened(), join(102, 901), at(1)).state;
    state = run(state, { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(2)).state;
    const rejoined = run(state, join(102, 905), at(3));
    expect(rejoined.events.map((e) => e.type)).toEqual(['IncidentEndpointJoined', 'IncidentCheckLinked']);
    expect(rejoined.state).toMatchObject({ endpoint_ids: [101, 102], awaiting_recovery: [101, 102] });
  });

  it('with auto_resolve off the last recovery is recorded and the incident stays open', () => {
    let state = run(opened(), join(102, 901), at(1)).state;
    state = run(state, { kind: 'update_status', auto_resolve: false }, at(2)).state;
    state = run(state, { kind: 'resolve_on_recovery', endpoint_id: 101 }, at(3)).state;
    const last = run(state, { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(4));
    expect(last.events.map((e) => e.type)).toEqual(['IncidentEndpointRecovered']);
    expect(last.state?.resolved_at).toBeNull();
  });

  it('an ungrouped incident resolves on its recovery as before (no per-endpoint event)', () => {
    expect(run(opened(), { kind: 'resolve_on_recovery', endpoint_id: 101 }, at(2)).events.map((e) => e.type)).toEqual(['IncidentResolved']);
  });

  it('another endpoint\'s recovery (one a merge brought in) does not resolve an ungrouped incident', () => {
    expect(run(opened(), { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(2)).events).toEqual([]);
  });

  it('refuses to join a resolved or a manual incident', () => {
    const resolved = run(opened(), { kind: 'resolve_on_recovery' }, at(2)).state;
    expect(() => run(resolved, join(102, 901), at(3))).toThrow(IncidentValidationError);
    expect(() => run(created(), join(102, 901), at(3))).toThrow(IncidentValidationError);
  });

  it('the history names the join and each recovery', () => {
    const events = run(opened(), join(102, 901), at(1)).events;
    const recovered = run(run(opened(), join(102, 901), at(1)).state, { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(5)).events;
    const entry = (event: (typeof events)[number], revision: number) =>
      describeEvent({ id: 'x', streamId: 'incident-30', revision, type: event.type, data: event.data, position: revision, recordedAt: at(1), metadata: { occurred_at: at(1), actor: 'system:alerting', request_id: null } } as never);
    expect(entry(events[0], 2).summary).toBe('Endpoint 102 joined (grouped availability incident): endpoint 102 down');
    expect(entry(recovered[0], 4).summary).toBe('Endpoint 102 recovered');
    const recoveredState = run(run(opened(), join(102, 901), at(1)).state, { kind: 'resolve_on_recovery', endpoint_id: 102 }, at(5)).state;
    const again = run(recoveredState, join(102, 902), at(6)).events;
    expect(entry(again[0], 5).summary).toBe('Endpoint 102 triggered again (availability): endpoint 102 down');
  });
});
