import { defineProjection } from '../../../platform/projections/projection.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
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
} from '../../domain/team.js';
import {
  INCIDENT_STATUSES,
  type IncidentStatusDoc,
  TEAMS,
  TENANCY_VIEW,
  type TeamDoc,
  type TokenDoc,
  TOKENS,
} from './view.js';

const asDoc = (doc: TeamDoc | TokenDoc | IncidentStatusDoc): Doc => doc as unknown as Doc;

/** Teams, developer tokens (by hash, for authentication) and each team's incident statuses (names and types: view.ts). */
export const tenancyProjection = defineProjection({
  name: TENANCY_VIEW,
  version: 1,
  collections: [
    { name: TEAMS, indexes: [{ fields: ['team_id'] }] },
    { name: TOKENS, indexes: [{ fields: ['token_hash'], unique: true }, { fields: ['team_id'] }, { fields: ['team_id', 'token_id'] }] },
    { name: INCIDENT_STATUSES, indexes: [{ fields: ['team_id', 'id_num'] }, { fields: ['team_id', 'name'] }] },
  ],
  handlers: {
    [TEAM_CREATED]: (event, views) => {
      const data = event.data as TeamCreatedData;
      views.put(TEAMS, asDoc({ id: String(data.team_id), team_id: data.team_id, name: data.name, created_at: data.created_at }));
    },
    [INCIDENT_STATUSES_SEEDED]: (event, views) => {
      const data = event.data as IncidentStatusesSeededData;
      for (const status of data.statuses) {
        views.put(INCIDENT_STATUSES, asDoc({ ...status, id: String(status.id), id_num: status.id, team_id: data.team_id }));
      }
    },
    [TOKEN_ISSUED]: (event, views) => {
      const data = event.data as TokenIssuedData;
      views.put(TOKENS, asDoc({ id: String(data.token_id), ...data, revoked_at: null, last_used_at: null }));
    },
    [TOKEN_REVOKED]: async (event, views) => {
      const data = event.data as TokenRevokedData;
      const token = await views.get(TOKENS, String(data.token_id));
      if (token) views.put(TOKENS, { ...token, revoked_at: data.revoked_at });
    },
    [TOKEN_USED]: async (event, views) => {
      const data = event.data as TokenUsedData;
      const token = await views.get(TOKENS, String(data.token_id));
      if (token) views.put(TOKENS, { ...token, last_used_at: data.at });
    },
  },
});
