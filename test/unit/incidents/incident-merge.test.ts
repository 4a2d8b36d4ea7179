import { IncidentMergedError, IncidentValidationError } from '../../../src/incidents/domain/errors.js';
import { decide, type Incident, type IncidentCommand } from '../../../src/incidents/domain/incident.js';
import { toIncidentDetail } from '../../../src/incidents/domain/detail-view.js';
import { T0, at, created, failingCheck, history, run } from './fixtures.js';

/** Target 10 (endpoints 1,2), source 11 (2,3; resolved) and source 12 (4,1), each with content. */
function scenario() {
  const target = history([
    [{ kind: 'create', incident_id: 10, team_id: 1, project_id: 5, endpoint_ids: [1, 2], title: 'Target', status: { id: 1, name: 'Investigating' }, first_error_at: at(10), last_error_at: at(20) }, at(0)],
    [{ kind: 'link_check', check: failingCheck(500, at(15), 1) }, at(15)],
    [{ kind: 'add_comment', comment_id: 1, body: 'target note' }, at(30)],
  ]).state as Incident;
  const source11 = history([
    [{ kind: 'create', incident_id: 11, team_id: 1, project_id: 5, endpoint_ids: [2, 3], title: 'Source A', status: { id: 1, name: 'Investigating' }, first_error_at: at(5), last_error_at: at(12) }, at(1)],
    [{ kind: 'link_check', check: failingCheck(501, at(6), 3) }, at(6)],
    [{ kind: 'link_check', check: failingCheck(502, at(7), 3) }, at(7)],
    [{ kind: 'add_comment', comment_id: 2, body: 'source A note' }, at(8)],
    [{ kind: 'add_checkpoint', checkpoint_id: 1, title: 'A checkpoint' }, at(9)],
    [{ kind: 'update_status', resolved: true }, at(13)],
  ]).state as Incident;
  const source12 = history([
    [{ kind: 'create', incident_id: 12, team_id: 1, project_id: 5, endpoint_ids: [4, 1], title: 'Source B', status: { id: 1, name: 'Investigating' }, first_error_at: at(11), last_error_at: at(40) }, at(2)],
    [{ kind: 'link_check', check: failingCheck(503, at(40), 4) }, at(40)],
  ]).state as Incident;
  return { target, source11, source12 };
}

const MERGED_AT = at(60);

function mergeAll() {
  const { target, source11, source12 } = scenario();
  const absorbed = run(target, { kind: 'absorb_sources', sources: [source11, source12] }, MERGED_AT).state as Incident;
  const merged11 = run(source11, { kind: 'mark_merged_into', target_id: 10 }, MERGED_AT);
  const merged12 = run(source12, { kind: 'mark_merged_into', target_id: 10 }, MERGED_AT);
  return { target: absorbed, source11: merged11, source12: merged12 };
}

describe('merge: the target', () => {
  it("keeps the target's endpoints first, then each source's new ones in order", () => {
    expect(mergeAll().target.endpoint_ids).toEqual([1, 2, 3, 4]);
  });

  it('sums error_count and spans the earliest first and latest last error', () => {
    expect(mergeAll().target).toMatchObject({ error_count: 1 + 2 + 1, first_error_at: at(5), last_error_at: at(40) });
  });

  it('shows the moved checks, comments and checkpoints in the documented order', () => {
    const detail = toIncidentDetail(mergeAll().target);
    expect(detail.checks.map((c) => c.id)).toEqual([501, 502, 500, 503]);
    expect(detail.comments.map((c) => c.body)).toEqual(['source A note', 'target note']);
    expect(detail.checkpoints.map((c) => c.title)).toEqual(['A checkpoint']);
  });

  it('lists merged incidents as { id, title, merged_at }', () => {
    expect(toIncidentDetail(mergeAll().target).merged_incidents).toEqual([
      { id: 11, title: 'Source A', merged_at: MERGED_AT },
      { id: 12, title: 'Source B', merged_at: MERGED_AT },
    ]);
  });

  it('still accepts writes, including edits to comments that moved in', () => {
    const { state } = run(mergeAll().target, { kind: 'update_comment', comment_id: 2, pinned: true }, at(61));
    expect(state?.comments.get(2)?.pinned).toBe(true);
  });

  it('carries incidents merged earlier into a source along to the target', () => {
    const { target, source11, source12 } = scenario();
    const a = run(source11, { kind: 'absorb_sources', sources: [source12] }, at(50)).state as Incident;
    const final = run(target, { kind: 'absorb_sources', sources: [a] }, MERGED_AT).state;
    expect(toIncidentDetail(final).merged_incidents.map((m) => m.id)).toEqual([12, 11]);
  });
});

describe('merge: the sources', () => {
  it('resolves an open source at merge time and points it at the target', () => {
    const { state, events } = mergeAll().source12;
    expect(events.map((e) => e.type)).toEqual(['IncidentResolved', 'IncidentMergedInto']);
    expect(state).toMatchObject({ resolved_at: MERGED_AT, merged_into_id: 10 });
  });

  it('keeps the resolved_at of a source that was already resolved', () => {
    const { state, events } = mergeAll().source11;
    expect(events.map((e) => e.type)).toEqual(['IncidentMergedInto']);
    expect(state?.resolved_at).toBe(at(13));
  });

  it('stays readable with its own summary while its content lives on the target', () => {
    const detail = toIncidentDetail(mergeAll().source11.state);
    expect(detail).toMatchObject({ id: 11, title: 'Source A', endpoint_ids: [2, 3], error_count: 2, merged_into_id: 10, comments: [], checks: [] });
  });

  const writes: IncidentCommand[] = [
    { kind: 'update_details', changes: { title: 'x' } },
    { kind: 'update_status', resolved: false },
    { kind: 'add_comment', comment_id: 9, body: 'x' },
    { kind: 'update_comment', comment_id: 2, pinned: true },
    { kind: 'delete_comment', comment_id: 2 },
    { kind: 'add_checkpoint', checkpoint_id: 9, title: 'x' },
    { kind: 'update_checkpoint', checkpoint_id: 1, title: 'x' },
    { kind: 'link_check', check: failingCheck(999, at(70)) },
    { kind: 'resolve_on_recovery' },
    { kind: 'mark_merged_into', target_id: 10 },
    { kind: 'absorb_sources', sources: [] },
  ];
  it.each(writes.map((command) => [command.kind, command] as const))('refuses %s with IncidentMergedError', (_kind, command) => {
    const source = mergeAll().source11.state;
    expect(() => decide(source, command, { now: at(70) })).toThrow(IncidentMergedError);
  });

  it('names the target in the error so callers can follow it', () => {
    try {
      decide(mergeAll().source11.state, { kind: 'add_comment', comment_id: 9, body: 'x' }, { now: at(70) });
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toMatchObject({ incidentId: 11, mergedIntoId: 10, code: 'incident_merged' });
    }
  });
});

describe('merge: refused sources', () => {
  function violations(sources: Incident[]): unknown {
    try {
      decide(scenario().target, { kind: 'absorb_sources', sources }, { now: T0 });
    } catch (error) {
      if (error instanceof IncidentValidationError) return error.errors.map((e) => [e.field, e.code]);
      throw error;
    }
    return [];
  }

  it('lists every bad source: none, itself, duplicated, other team, already merged', () => {
    const { target, source11 } = scenario();
    const otherTeam = created({ incident_id: 30, team_id: 2 });
    const alreadyMerged = mergeAll().source12.state as Incident;
    expect(violations([])).toEqual([['source_incident_ids', 'required']]);
    expect(violations([target, source11, source11, otherTeam, alreadyMerged])).toEqual([
      ['source_incident_ids[0]', 'conflict'],
      ['source_incident_ids[2]', 'not_unique'],
      ['source_incident_ids[3]', 'not_found'],
      ['source_incident_ids[4]', 'conflict'],
    ]);
  });

  it('refuses to mark an incident merged into itself', () => {
    expect(() => decide(created(), { kind: 'mark_merged_into', target_id: 10 }, { now: T0 })).toThrow(IncidentValidationError);
  });
});
