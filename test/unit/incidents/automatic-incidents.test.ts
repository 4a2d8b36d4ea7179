/**
 * Automatic incidents of issue 26 (given events, when a command, then events): the
 * certificate_expiry type and grouping (joins, per-endpoint recoveries, resolution).
 */
import { INCIDENT_OPENED } from '../../../src/incidents/domain/events.js';
import { INVESTIGATING, at, run } from './fixtures.js';

const openAutomatic = (signal: 'availability' | 'latency' | 'certificate', checks = []) =>
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
