import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { Role, Scope } from '../../platform/http/route-auth.js';

export const TEAM_CREATED = 'TeamCreated';
export const INCIDENT_STATUSES_SEEDED = 'IncidentStatusesSeeded';
export const TOKEN_ISSUED = 'TokenIssued';
export const TOKEN_REVOKED = 'TokenRevoked';
export const TOKEN_USED = 'TokenUsed';

export const DEFAULT_INCIDENT_STATUSES = ['Investigating', 'Identified', 'Monitoring'] as const;

export const teamStream = (teamId: number) => `team-${teamId}`;

export interface TeamCreatedData {
  team_id: number;
  name: string;
  created_at: string;
}

export interface IncidentStatusesSeededData {
  team_id: number;
  statuses: Array<{ id: number; name: string; is_default: boolean; created_at: string }>;
}

/** Only the SHA-256 of the token is ever stored. */
export interface TokenIssuedData {
  token_id: number;
  team_id: number;
  name: string;
  scopes: Scope[];
  role: Role;
  token_hash: string;
  created_at: string;
  expires_at: string | null;
}

export interface TokenRevokedData {
  token_id: number;
  team_id: number;
  revoked_at: string;
}

export interface TokenUsedData {
  token_id: number;
  team_id: number;
  at: string;
}

export interface TeamState {
  exists: boolean;
  teamId: number | null;
  tokens: Map<number, { revoked: boolean }>;
}

export const teamAggregate = {
  initial: (): TeamState => ({ exists: false, teamId: null, tokens: new Map() }),
  evolve(state: TeamState, event: RecordedEvent): TeamState {
    switch (event.type) {
      case TEAM_CREATED:
        return { ...state, exists: true, teamId: (event.data as TeamCreatedData).team_id };
      case TOKEN_ISSUED: {
        const tokens = new Map(state.tokens);
        tokens.set((event.data as TokenIssuedData).token_id, { revoked: false });
        return { ...state, tokens };
      }
      case TOKEN_REVOKED: {
        const tokens = new Map(state.tokens);
        tokens.set((event.data as TokenRevokedData).token_id, { revoked: true });
        return { ...state, tokens };
      }
      default:
        return state;
    }
  },
};
