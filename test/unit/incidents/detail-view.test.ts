import { toIncidentDetail, toIncidentSummary } from '../../../src/incidents/domain/detail-view.js';
import { IncidentNotFoundError } from '../../../src/incidents/domain/errors.js';
import { parseRfc3339 } from '../../../src/platform/time/rfc3339.js';
import type { IncidentCommand } from '../../../src/incidents/domain/incident.js';
import { at, created, failingCheck, history } from './fixtures.js';

const SPEC_SUMMARY_FIELDS = [
  'id', 'team_id', 'project_id', 'endpoint_id', 'endpoint_ids', 'title', 'type', 'source', 'severity', 'auto_resolve',
  'detection_reason', 'metadata', 'status_id', 'status_name', 'error_count', 'first_error_at', 'last_error_at',
  'resolved_at', 'created_at', 'updated_at',
];

describe('incident views', () => {
  it('a summary has exactly the spec fields plus merged_into_id', () => {
    expect(Object.keys(toIncidentSummary(created())).sort()).toEqual([...SPEC_SUMMARY_FIELDS, 'merged_into_id'].sort());
  });

  it('a detail adds comments, checkpoints, checks, the additive checks_total and merged_incidents', () => {
    const keys = Object.keys(toIncidentDetail(created()));
    expect(keys.sort()).toEqual([...SPEC_SUMMARY_FIELDS, 'merged_into_id', 'comments', 'checkpoints', 'checks', 'checks_total', 'merged_incidents'].sort());
  });

  it('holds the newest 100 checks by checked_at, oldest first, and counts them all', () => {
    // 150 checks linked out of time order: 0..149 minutes, linked in a shuffled order.
    const minutes = Array.from({ length: 150 }, (_, i) => (i * 37) % 150);
    const { state } = history([
      [{ kind: 'create', incident_id: 1, team_id: 1, project_id: 1, endpoint_ids: [101], title: 't', status: { id: 1, name: 'Investigating' } }, at(0)],
      ...minutes.map((m): [IncidentCommand, string] => [{ kind: 'link_check', check: failingCheck(1000 + m, at(m)) }, at(200)]),
    ]);
    const detail = toIncidentDetail(state);
    expect(detail.checks_total).toBe(150);
    expect(detail.checks.map((c) => c.id)).toEqual(Array.from({ length: 100 }, (_, i) => 1050 + i));
  });

  it('orders checks by checked_at even when linked out of order', () => {
    const { state } = history([
      [{ kind: 'create', incident_id: 1, team_id: 1, project_id: 1, endpoint_ids: [101], title: 't', status: { id: 1, name: 'Investigating' } }, at(0)],
      [{ kind: 'link_check', check: failingCheck(3, at(9)) }, at(9)],
      [{ kind: 'link_check', check: failingCheck(2, at(4)) }, at(10)],
      [{ kind: 'link_check', check: failingCheck(1, at(4)) }, at(11)],
    ]);
    expect(toIncidentDetail(state).checks.map((c) => c.id)).toEqual([1, 2, 3]);
  });

  it('refuses to render an incident that does not exist', () => {
    expect(() => toIncidentDetail(null)).toThrow(IncidentNotFoundError);
  });
});

describe('RFC 3339 input times', () => {
  it.each([
    ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01t10:00:00z', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T15:30:00+05:30', '2026-03-01T10:00:00.000Z'],
    ['2026-03-01T05:00:00.123456789-05:00', '2026-03-01T10:00:00.123Z'],
    ['2024-02-29T00:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('reads %s as %s', (input, utc) => {
    expect(new Date(parseRfc3339(input)!).toISOString()).toBe(utc);
  });

  it.each(['2026-03-01 10:00:00Z', '2026-03-01T10:00Z', '2026-13-01T10:00:00Z', '2025-02-29T00:00:00Z', '2026-03-01T24:00:00Z', '2026-03-01T10:00:60Z', '2026-03-01T10:00:00+2:00', 'Sun, 01 Mar 2026 10:00:00 GMT'])(
    'rejects %s',
    (input) => {
      expect(parseRfc3339(input)).toBeNull();
    },
  );
});
