import { defineProjection } from '../src/platform/projections/projection.js';
import {
  INCIDENT_STATUSES_SEEDED,
  type IncidentStatusesSeededData,
  TEAM_CREATED,
  type TeamCreatedData,
  TOKEN_ISSUED,
  TOKEN_REVOKED,
  TOKEN_USED,
  type TokenIssuedData,
  type TokenRevokedData,
  type TokenUsedData,
} from '../src/tenancy/domain/team.js';

/** Teams, developer tokens (by hash, for authentication) and each team's incident statuses. */
export const tenancyProjection = defineProjection({
  name: 'tenancy',
  version: 1,
  collections: [
    { name: 'teams', indexes: [{ fields: ['team_id'] }] },
    { name: 'tokens', indexes: [{ fields: ['token_hash'], unique: true }, { fields: ['team_id'] }, { fields: ['team_id', 'token_id'] }] },
    { name: 'incident_statuses', indexes: [{ fields: ['team_id', 'id_num'] }, { fields: ['team_id', 'name'] }] },
  ],
  handlers: {
    [TEAM_CREATED]: (event, views) => {
      const data = event.data as TeamCreatedData;
      views.put('teams', { id: String(data.team_id), team_id: data.team_id, name: data.name, created_at: data.created_at });
    },
    [INCIDENT_STATUSES_SEEDED]: (event, views) => {
      const data = event.data as IncidentStatusesSeededData;
      for (const status of data.statuses) {
        views.put('incident_statuses', { ...status, id: String(status.id), id_num: status.id, team_id: data.team_id });
      }
    },
    [TOKEN_ISSUED]: (event, views) => {
      const data = event.data as TokenIssuedData;
      views.put('tokens', { id: String(data.token_id), ...data, revoked_at: null, last_used_at: null });
    },
    [TOKEN_REVOKED]: async (event, views) => {
      const data = event.data as TokenRevokedData;
      const token = await views.get('tokens', String(data.token_id));
      if (token) views.put('tokens', { ...token, revoked_at: data.revoked_at });
    },
    [TOKEN_USED]: async (event, views) => {
      const data = event.data as TokenUsedData;
      const token = await views.get('tokens', String(data.token_id));
      if (token) views.put('tokens', { ...token, last_used_at: data.at });
    },
  },
});
