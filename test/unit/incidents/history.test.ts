import type { RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import type { IncidentEvent } from '../../../src/incidents/domain/events.js';
import { toLinkedCheck } from '../../../src/incidents/domain/events.js';
import { toIncidentDetail } from '../../../src/incidents/domain/detail-view.js';
import { describeEvent, stateAt } from '../../../src/incidents/domain/history.js';
import type { Incident } from '../../../src/incidents/domain/incident.js';
import { replay } from '../../../src/incidents/domain/incident.js';
import { IDENTIFIED, at, failingCheck, history } from './fixtures.js';

/** Wraps decided events as the store would return them, recorded at their own event times. */
function recorded(events: IncidentEvent[], times: string[]): RecordedEvent[] {
  return events.map((event, revision) => ({
    id: `evt-${revision}`,
    streamId: 'incident-10',
    type: event.type,
    schemaVersion: 1,
    data: event.data,
    metadata: { actor: 'token:7', request_id: `req-${revision}`, correlation_id: null, causation_id: null, occurred_at: times[revision]! },
    revision,
    position: 100 + revision,
    recordedAt: times[revision]!,
  }));
}

function lifecycle() {
  const steps = history([
    [{ kind: 'create', incident_id: 10, team_id: 1, project_id: 5, endpoint_ids: [1], title: 'API down', status: { id: 1, name: 'Investigating' } }, at(0)],
    [{ kind: 'link_check', check: failingCheck(500, at(1), 1) }, at(1)],
    [{ kind: 'update_status', status: IDENTIFIED }, at(2)],
    [{ kind: 'add_comment', comment_id: 1, body: 'DB failover' }, at(3)],
    [{ kind: 'update_details', changes: { title: 'API down: DB failover', severity: 'critical' } }, at(4)],
    [{ kind: 'add_checkpoint', checkpoint_id: 1, title: 'Fix rolling out' }, at(5)],
    [{ kind: 'update_comment', comment_id: 1, pinned: true }, at(6)],
    [{ kind: 'update_status', resolved: true }, at(7)],
  ]);
  const times = [0, 1, 2, 3, 4, 5, 6, 7].map(at);
  return { ...steps, stream: recorded(steps.events, times) };
}

describe('replay', () => {
  it('folding the stored events gives the same detail as the state built command by command', () => {
    const { state, stream } = lifecycle();
    expect(toIncidentDetail(stateAt(stream))).toEqual(toIncidentDetail(state));
  });

  it('folding a merge target and source from their events gives the same details', () => {
    const { state: source } = lifecycle();
    const target = history([
      [{ kind: 'create', incident_id: 20, team_id: 1, project_id: 5, endpoint_ids: [2], title: 'Target', status: { id: 1, name: 'Investigating' } }, at(0)],
      [{ kind: 'absorb_sources', sources: [source as Incident] }, at(9)],
    ]);
    expect(toIncidentDetail(replay(target.events))).toEqual(toIncidentDetail(target.state));
  });
});

describe('stateAt', () => {
  it('shows the incident as it stood at a past time', () => {
    const { stream } = lifecycle();
    const past = toIncidentDetail(stateAt(stream, at(3)));
    expect(past).toMatchObject({ title: 'API down', severity: 'warning', status_name: 'Identified', resolved_at: null, error_count: 1, updated_at: at(3) });
    expect(past.comments).toEqual([{ id: 1, body: 'DB failover', pinned: false, created_at: at(3), updated_at: at(3) }]);
    expect(past.checkpoints).toEqual([]);
  });

  it('accepts the time with any RFC 3339 offset', () => {
    const { stream } = lifecycle();
    const fourMinutesIn = '2026-03-01T12:04:00+02:00';
    expect(stateAt(stream, fourMinutesIn)?.title).toBe('API down: DB failover');
  });

  it('is null before the incident was opened', () => {
    expect(stateAt(lifecycle().stream, at(-1))).toBeNull();
  });

  it('refuses a time that is not RFC 3339', () => {
    expect(() => stateAt(lifecycle().stream, 'yesterday')).toThrow(RangeError);
  });
});

describe('describeEvent', () => {
  it('names who changed what, when, in which request', () => {
    const entry = describeEvent(lifecycle().stream[4]!);
    expect(entry).toEqual({
      type: 'IncidentDetailsUpdated',
      revision: 4,
      at: at(4),
      recorded_at: at(4),
      actor: 'token:7',
      request_id: 'req-4',
      summary: 'Changed title, severity',
      changes: { title: { from: 'API down', to: 'API down: DB failover' }, severity: { from: 'warning', to: 'critical' } },
    });
  });

  it('describes every step of a lifecycle with a sentence and its changes', () => {
    const entries = lifecycle().stream.map(describeEvent);
    expect(entries.map((e) => [e.summary, e.changes])).toEqual([
      [expect.stringContaining('opened manually: "API down"'), expect.objectContaining({ title: { to: 'API down' }, status_name: { to: 'Investigating' } })],
      ['Failing check 500 of endpoint 1 linked (status 503: status: 503)', { checks: { to: 500 } }],
      ['Status changed from Investigating to Identified', { status_id: { from: 1, to: 2 }, status_name: { from: 'Investigating', to: 'Identified' } }],
      ['Comment 1 added', { 'comments[1]': { to: { body: 'DB failover', pinned: false } } }],
      ['Changed title, severity', expect.any(Object)],
      ['Checkpoint 1 posted: "Fix rolling out"', { 'checkpoints[1]': { to: { title: 'Fix rolling out', body: '', status_label: 'Identified' } } }],
      ['Comment 1 edited', { 'comments[1].pinned': { from: false, to: true } }],
      ['Resolved (manual)', { resolved_at: { from: null, to: at(7) } }],
    ]);
  });
});

describe('linked checks', () => {
  it('never carry a response excerpt into the incident', () => {
    const check = toLinkedCheck({
      check_id: 5, team_id: 1, project_id: 5, endpoint_id: 1, configuration_version: 2, source: 'scheduled', job_id: null,
      alert_suppressed: false, latency_anomaly: false, latency_threshold_ms: null, imported: false,
      success: false, status_code: 500, latency_ms: 10, time_to_first_byte_ms: 8, duration_ms: 12, body_complete: true,
      failure_reason: 'status: 500', response_excerpt: '<html>secret stack trace</html>', checked_at: at(1),
    });
    expect(JSON.stringify(check)).not.toContain('secret');
    expect(check).toMatchObject({ id: 5, response_excerpt_omitted: true });
  });
});
