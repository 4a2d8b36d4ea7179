import {
  CheckpointNotFoundError,
  CommentNotFoundError,
  IncidentAlreadyExistsError,
  IncidentNotFoundError,
  IncidentValidationError,
} from '../../../src/incidents/domain/errors.js';
import { decide, type Incident } from '../../../src/incidents/domain/incident.js';
import { toIncidentDetail } from '../../../src/incidents/domain/detail-view.js';
import { IDENTIFIED, INVESTIGATING, MONITORING, T0, at, createCommand, created, failingCheck, run } from './fixtures.js';

describe('manual create', () => {
  it('applies the documented defaults', () => {
    const detail = toIncidentDetail(created());
    expect(detail).toMatchObject({
      id: 10,
      team_id: 1,
      project_id: 5,
      endpoint_id: 101,
      endpoint_ids: [101, 102],
      type: 'manual',
      source: 'manual',
      severity: 'warning',
      auto_resolve: false,
      detection_reason: '',
      metadata: {},
      status_id: INVESTIGATING.id,
      status_name: 'Investigating',
      error_count: 0,
      first_error_at: T0,
      last_error_at: T0,
      resolved_at: null,
      created_at: T0,
      updated_at: T0,
      merged_into_id: null,
      comments: [],
      checkpoints: [],
      checks: [],
      merged_incidents: [],
    });
  });

  it('has a null primary endpoint when created for a project only', () => {
    expect(toIncidentDetail(created({ endpoint_ids: [] })).endpoint_id).toBeNull();
  });

  it('stores error times given with an offset as UTC with milliseconds', () => {
    const incident = created({ first_error_at: '2026-03-01T12:00:00+02:00', last_error_at: '2026-03-01T10:30:00.5Z' });
    expect(incident.first_error_at).toBe('2026-03-01T10:00:00.000Z');
    expect(incident.last_error_at).toBe('2026-03-01T10:30:00.500Z');
  });

  it('defaults last_error_at to first_error_at', () => {
    expect(created({ first_error_at: '2026-02-01T00:00:00Z' }).last_error_at).toBe('2026-02-01T00:00:00.000Z');
  });

  it('refuses last_error_at before first_error_at', () => {
    const command = createCommand({ first_error_at: at(10), last_error_at: at(5) });
    expect(() => decide(null, command, { now: T0 })).toThrow(IncidentValidationError);
  });

  it('refuses to open the same incident twice', () => {
    expect(() => decide(created(), createCommand(), { now: T0 })).toThrow(IncidentAlreadyExistsError);
  });

  it('refuses writes to an incident that does not exist', () => {
    expect(() => decide(null, { kind: 'add_comment', comment_id: 1, body: 'x' }, { now: T0 })).toThrow(IncidentNotFoundError);
  });
});

describe('automatic open, failing checks and recovery', () => {
  const open = (signal: 'availability' | 'latency') =>
    run(null, {
      kind: 'open_automatic',
      incident_id: 20,
      team_id: 1,
      project_id: 5,
      endpoint_id: 101,
      signal,
      title: 'api.example.com is down',
      status: INVESTIGATING,
      checks: [failingCheck(900, at(-1))],
    });

  it('opens an availability incident as critical, automatic, auto-resolving, with the triggering check linked', () => {
    const detail = toIncidentDetail(open('availability').state);
    expect(detail).toMatchObject({ source: 'automatic', type: 'availability', severity: 'critical', auto_resolve: true, error_count: 1 });
    expect(detail.first_error_at).toBe(at(-1));
    expect(detail.checks.map((c) => c.id)).toEqual([900]);
  });

  it('opens a latency incident as a warning', () => {
    expect(open('latency').state?.severity).toBe('warning');
  });

  it('links every further failing check, bumping error_count and last_error_at', () => {
    const { state } = run(open('availability').state, { kind: 'link_check', check: failingCheck(901, at(3)) }, at(3));
    expect(state).toMatchObject({ error_count: 2, last_error_at: at(3) });
  });

  it('adds the endpoint of a linked check from another endpoint', () => {
    const { state } = run(open('availability').state, { kind: 'link_check', check: failingCheck(901, at(3), 777) }, at(3));
    expect(state?.endpoint_ids).toEqual([101, 777]);
  });

  it('does not count a check linked twice', () => {
    const { events } = run(open('availability').state, { kind: 'link_check', check: failingCheck(900, at(-1)) });
    expect(events).toEqual([]);
  });

  it('never moves last_error_at back for a late check', () => {
    const later = run(open('availability').state, { kind: 'link_check', check: failingCheck(901, at(10)) }, at(10)).state;
    const { state } = run(later, { kind: 'link_check', check: failingCheck(902, at(2)) }, at(11));
    expect(state).toMatchObject({ error_count: 3, last_error_at: at(10) });
  });

  it('resolves on recovery when auto_resolve is on', () => {
    const { state, events } = run(open('availability').state, { kind: 'resolve_on_recovery' }, at(5));
    expect(state?.resolved_at).toBe(at(5));
    expect(events[0]).toMatchObject({ type: 'IncidentResolved', data: { by: 'automatic' } });
  });

  it('stays open on recovery when auto_resolve is off, recording the recovery', () => {
    const manual = run(open('availability').state, { kind: 'update_status', auto_resolve: false }).state;
    const { state, events } = run(manual, { kind: 'resolve_on_recovery', endpoint_id: 101 }, at(5));
    expect(events.map((event) => event.type)).toEqual(['IncidentEndpointRecovered']);
    expect(state?.resolved_at).toBeNull();
  });

  it('resolves when auto_resolve is turned back on after the recovery, saying why', () => {
    const kept = run(open('availability').state, { kind: 'update_status', auto_resolve: false }).state;
    const recovered = run(kept, { kind: 'resolve_on_recovery', endpoint_id: 101 }, at(5)).state;
    const { state, events } = run(recovered, { kind: 'update_status', auto_resolve: true }, at(6));
    expect(events.map((event) => event.type)).toEqual(['IncidentAutoResolveChanged', 'IncidentResolved']);
    expect(events[1].data).toMatchObject({ by: 'automatic', reason: expect.stringContaining('every endpoint had recovered') });
    expect(state?.resolved_at).toBe(at(6));
  });

  it('stays open when auto_resolve is turned back on while its endpoint still fails', () => {
    const kept = run(open('availability').state, { kind: 'update_status', auto_resolve: false }).state;
    const { state, events } = run(kept, { kind: 'update_status', auto_resolve: true }, at(6));
    expect(events.map((event) => event.type)).toEqual(['IncidentAutoResolveChanged']);
    expect(state?.resolved_at).toBeNull();
  });

  it('waits for its endpoint again when it triggers again after a recovery kept it open', () => {
    const kept = run(open('availability').state, { kind: 'update_status', auto_resolve: false }).state;
    const recovered = run(kept, { kind: 'resolve_on_recovery', endpoint_id: 101 }, at(5)).state;
    const again = run(recovered, { kind: 'join_automatic', endpoint_id: 101, signal: 'availability', reason: 'down again' }, at(6));
    expect(again.events[0]).toMatchObject({ type: 'IncidentEndpointJoined', data: { endpoint_id: 101, again: true } });
    expect(run(again.state, { kind: 'update_status', auto_resolve: true }, at(7)).events.map((event) => event.type)).toEqual(['IncidentAutoResolveChanged']);
  });
});

describe('an alert awaited as a whole (SLO burn alerts)', () => {
  const ticket = (sequence: number) => ({ name: 'SLO burn alert (ticket)', sequence });
  const keptOpen = () => {
    const opened = run(null, { kind: 'open_automatic', incident_id: 30, team_id: 1, project_id: 5, endpoint_id: 101, signal: 'slo_burn', title: 'SLO burning', status: INVESTIGATING }).state;
    return run(opened, { kind: 'update_status', auto_resolve: false }).state;
  };
  const ended = () => run(keptOpen(), { kind: 'resolve_on_recovery', alert: ticket(4) }, at(5)).state;

  it('resolves when the alert ends with auto_resolve on, recording no end', () => {
    const opened = run(null, { kind: 'open_automatic', incident_id: 30, team_id: 1, project_id: 5, endpoint_id: 101, signal: 'slo_burn', title: 'SLO burning', status: INVESTIGATING }).state;
    const { events } = run(opened, { kind: 'resolve_on_recovery', alert: ticket(4) }, at(5));
    expect(events.map((event) => event.type)).toEqual(['IncidentResolved']);
  });

  it('records the end once with auto_resolve off, and stays open', () => {
    const { state, events } = run(keptOpen(), { kind: 'resolve_on_recovery', alert: ticket(4) }, at(5));
    expect(events).toEqual([{ type: 'IncidentAlertEnded', data: { incident_id: 30, alert: 'SLO burn alert (ticket)', sequence: 4, ended_at: at(5) } }]);
    expect(state?.resolved_at).toBeNull();
    expect(run(state, { kind: 'resolve_on_recovery', alert: ticket(6) }, at(6)).events).toEqual([]);
  });

  it('resolves when auto_resolve is turned on after the end, saying why', () => {
    const { events } = run(ended(), { kind: 'update_status', auto_resolve: true }, at(6));
    expect(events.map((event) => event.type)).toEqual(['IncidentAutoResolveChanged', 'IncidentResolved']);
    expect(events[1].data).toMatchObject({ by: 'automatic', reason: 'automatic resolution turned on after its alert had ended' });
  });

  it('awaits the alert again when it triggers again, so turning auto_resolve on leaves it open', () => {
    const again = run(ended(), { kind: 'alert_triggered_again', alert: ticket(7), reason: 'burning again' }, at(6));
    expect(again.events).toEqual([
      { type: 'IncidentAlertTriggeredAgain', data: { incident_id: 30, alert: 'SLO burn alert (ticket)', sequence: 7, reason: 'burning again', triggered_at: at(6) } },
    ]);
    expect(run(again.state, { kind: 'update_status', auto_resolve: true }, at(7)).events.map((event) => event.type)).toEqual(['IncidentAutoResolveChanged']);
  });

  it('changes nothing for a transition handled again after a later one was recorded', () => {
    const again = run(ended(), { kind: 'alert_triggered_again', alert: ticket(7), reason: 'burning again' }, at(6)).state;
    // The end (sequence 4) and the trigger (7) handled again: neither is recorded twice.
    expect(run(again, { kind: 'resolve_on_recovery', alert: ticket(4) }, at(8)).events).toEqual([]);
    expect(run(again, { kind: 'alert_triggered_again', alert: ticket(7), reason: 'burning again' }, at(8)).events).toEqual([]);
    // Nor is the trigger that opened it, which found no end to await again.
    expect(run(keptOpen(), { kind: 'alert_triggered_again', alert: ticket(2), reason: 'opened' }, at(8)).events).toEqual([]);
  });
});

describe('update details', () => {
  it('records only the fields that changed, with their previous values', () => {
    const { events } = run(created(), { kind: 'update_details', changes: { title: 'Checkout is slow', severity: 'warning', type: 'manual' } }, at(1));
    expect(events).toEqual([
      { type: 'IncidentDetailsUpdated', data: { incident_id: 10, changes: { title: { from: 'Checkout is failing', to: 'Checkout is slow' } }, updated_at: at(1) } },
    ]);
  });

  it('returns no events when every value is already stored', () => {
    const incident = created({ metadata: { a: 1, b: 2 } });
    const { events } = run(incident, { kind: 'update_details', changes: { title: incident.title, metadata: { b: 2, a: 1 }, first_error_at: '2026-03-01T11:00:00+01:00' } });
    expect(events).toEqual([]);
  });

  it('moves the primary endpoint with endpoint_ids and updated_at with the change', () => {
    const { state } = run(created(), { kind: 'update_details', changes: { endpoint_ids: [102, 103] } }, at(2));
    expect(toIncidentDetail(state)).toMatchObject({ endpoint_id: 102, endpoint_ids: [102, 103], updated_at: at(2) });
  });

  it("refuses a last_error_at before the incident's first_error_at", () => {
    const incident = created({ first_error_at: at(10), last_error_at: at(20) });
    expect(() => decide(incident, { kind: 'update_details', changes: { last_error_at: at(5) } }, { now: T0 })).toThrow(IncidentValidationError);
  });
});

describe('update status', () => {
  it('changes the status by id and name', () => {
    const { state } = run(created(), { kind: 'update_status', status: IDENTIFIED }, at(1));
    expect(state).toMatchObject({ status_id: 2, status_name: 'Identified' });
  });

  it('returns no events for the status it already has', () => {
    expect(run(created(), { kind: 'update_status', status: INVESTIGATING }).events).toEqual([]);
  });

  it('records the resolution time on resolved: true', () => {
    expect(run(created(), { kind: 'update_status', resolved: true }, at(5)).state?.resolved_at).toBe(at(5));
  });

  it('keeps the first resolved_at when resolved again', () => {
    const resolvedOnce = run(created(), { kind: 'update_status', resolved: true }, at(5)).state;
    const { state, events } = run(resolvedOnce, { kind: 'update_status', resolved: true }, at(9));
    expect(events).toEqual([]);
    expect(state?.resolved_at).toBe(at(5));
  });

  it('reopens and clears resolved_at on resolved: false', () => {
    const resolvedOnce = run(created(), { kind: 'update_status', resolved: true }, at(5)).state;
    const { state, events } = run(resolvedOnce, { kind: 'update_status', resolved: false }, at(6));
    expect(state?.resolved_at).toBeNull();
    expect(events[0]).toMatchObject({ type: 'IncidentReopened', data: { previous_resolved_at: at(5) } });
  });

  it('records a fresh resolved_at after a reopen', () => {
    const reopened = run(run(created(), { kind: 'update_status', resolved: true }, at(5)).state, { kind: 'update_status', resolved: false }, at(6)).state;
    expect(run(reopened, { kind: 'update_status', resolved: true }, at(8)).state?.resolved_at).toBe(at(8));
  });

  it('returns no events for resolved: false on an open incident', () => {
    expect(run(created(), { kind: 'update_status', resolved: false }).events).toEqual([]);
  });

  it('applies status, resolution and auto_resolve together', () => {
    const { state, events } = run(created(), { kind: 'update_status', status: MONITORING, resolved: true, auto_resolve: true }, at(1));
    expect(events.map((e) => e.type)).toEqual(['IncidentStatusChanged', 'IncidentResolved', 'IncidentAutoResolveChanged']);
    expect(state).toMatchObject({ status_name: 'Monitoring', resolved_at: at(1), auto_resolve: true });
  });
});

describe('comments', () => {
  const withComment = () => run(created(), { kind: 'add_comment', comment_id: 7, body: 'Looking into it' }, at(1)).state as Incident;

  it('adds an unpinned comment with matching created and updated times', () => {
    expect(toIncidentDetail(withComment()).comments).toEqual([{ id: 7, body: 'Looking into it', pinned: false, created_at: at(1), updated_at: at(1) }]);
  });

  it('pins and edits a comment, moving its updated_at only', () => {
    const { state } = run(withComment(), { kind: 'update_comment', comment_id: 7, pinned: true, body: 'Root cause found' }, at(4));
    expect(state?.comments.get(7)).toEqual({ id: 7, body: 'Root cause found', pinned: true, created_at: at(1), updated_at: at(4) });
  });

  it('returns no events for an edit that changes nothing', () => {
    expect(run(withComment(), { kind: 'update_comment', comment_id: 7, pinned: false }).events).toEqual([]);
  });

  it('deletes a comment', () => {
    expect(run(withComment(), { kind: 'delete_comment', comment_id: 7 }, at(2)).state?.comments.toArray()).toEqual([]);
  });

  it('refuses an unknown or deleted comment id as not found', () => {
    const deleted = run(withComment(), { kind: 'delete_comment', comment_id: 7 }, at(2)).state;
    expect(() => decide(withComment(), { kind: 'update_comment', comment_id: 8, pinned: true }, { now: T0 })).toThrow(CommentNotFoundError);
    expect(() => decide(deleted, { kind: 'delete_comment', comment_id: 7 }, { now: T0 })).toThrow(CommentNotFoundError);
  });
});

describe('checkpoints', () => {
  it("labels a checkpoint with the incident's status name at posting time by default", () => {
    const identified = run(created(), { kind: 'update_status', status: IDENTIFIED }, at(1)).state;
    const posted = run(identified, { kind: 'add_checkpoint', checkpoint_id: 3, title: 'Fix deployed' }, at(2)).state;
    const later = run(posted, { kind: 'update_status', status: MONITORING }, at(3)).state;
    expect(toIncidentDetail(later).checkpoints).toEqual([
      { id: 3, title: 'Fix deployed', body: '', status_label: 'Identified', created_at: at(2), updated_at: at(2) },
    ]);
  });

  it('keeps an explicit status_label', () => {
    const { state } = run(created(), { kind: 'add_checkpoint', checkpoint_id: 3, title: 'Degraded', status_label: 'Partial outage' });
    expect(state?.checkpoints.get(3)?.status_label).toBe('Partial outage');
  });

  it('updates title, body and label, recording what changed', () => {
    const posted = run(created(), { kind: 'add_checkpoint', checkpoint_id: 3, title: 'Degraded', body: 'Slow' }, at(1)).state;
    const { state, events } = run(posted, { kind: 'update_checkpoint', checkpoint_id: 3, body: 'Recovering', status_label: 'Monitoring', title: 'Degraded' }, at(2));
    expect(events[0]).toMatchObject({ data: { changes: { body: { from: 'Slow', to: 'Recovering' }, status_label: { from: 'Investigating', to: 'Monitoring' } } } });
    expect(state?.checkpoints.get(3)).toMatchObject({ title: 'Degraded', body: 'Recovering', status_label: 'Monitoring', updated_at: at(2) });
  });

  it('refuses an unknown checkpoint id as not found', () => {
    expect(() => decide(created(), { kind: 'update_checkpoint', checkpoint_id: 99, title: 'x' }, { now: T0 })).toThrow(CheckpointNotFoundError);
  });
});
