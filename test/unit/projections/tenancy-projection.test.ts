import { tenancyProjection } from '../../../src/tenancy/views/tenancy/projection.js';
import { given } from '../../support/projection-spec.js';

const T = '2026-11-23T10:00:00.000Z';
const issued = (token_id: number, token_hash: string) => ({
  type: 'TokenIssued',
  data: { token_id, team_id: 1, name: `t${token_id}`, scopes: ['incidents:read'], role: 'viewer', token_hash, created_at: T, expires_at: null },
});

describe('tenancy projection', () => {
  it('keeps teams, their seeded incident statuses and tokens by id', async () => {
    const views = await given(tenancyProjection, [
      { type: 'TeamCreated', data: { team_id: 1, name: 'Acme', created_at: T } },
      { type: 'IncidentStatusesSeeded', data: { team_id: 1, statuses: [{ id: 4, name: 'Investigating', is_default: true, created_at: T }] } },
      issued(7, 'hash-7'),
    ]);
    expect(views.documents('teams')).toEqual([{ id: '1', team_id: 1, name: 'Acme', created_at: T }]);
    expect(views.documents('incident_statuses')).toEqual([{ id: '4', id_num: 4, team_id: 1, name: 'Investigating', is_default: true, created_at: T }]);
    expect(views.document('tokens', '7')).toMatchObject({ token_hash: 'hash-7', revoked_at: null, last_used_at: null, scopes: ['incidents:read'] });
  });

  it('marks a token revoked and records its last use, and ignores events of a token it never saw', async () => {
    const views = await given(tenancyProjection, [
      issued(7, 'hash-7'),
      { type: 'TokenUsed', data: { token_id: 7, team_id: 1, at: '2026-11-23T11:00:00.000Z' } },
      { type: 'TokenRevoked', data: { token_id: 7, team_id: 1, revoked_at: '2026-11-23T11:30:00.000Z' } },
      { type: 'TokenRevoked', data: { token_id: 99, team_id: 1, revoked_at: '2026-11-23T11:30:00.000Z' } },
    ]);
    expect(views.documents('tokens')).toHaveLength(1);
    expect(views.document('tokens', '7')).toMatchObject({ last_used_at: '2026-11-23T11:00:00.000Z', revoked_at: '2026-11-23T11:30:00.000Z' });
  });
});
