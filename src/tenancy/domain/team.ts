import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { Role, Scope } from '../../platform/auth/scopes.js';

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

// ---------------------------------------------------------------------------------------------
// Decisions

export type TeamEvent =
  | { type: typeof TEAM_CREATED; data: TeamCreatedData }
  | { type: typeof INCIDENT_STATUSES_SEEDED; data: IncidentStatusesSeededData }
  | { type: typeof TOKEN_ISSUED; data: TokenIssuedData }
  | { type: typeof TOKEN_REVOKED; data: TokenRevokedData };

export type TeamCommand =
  | { kind: 'create_team'; team_id: number; name: string; statuses: IncidentStatusesSeededData['statuses']; created_at: string }
  | { kind: 'issue_token'; token: TokenIssuedData }
  | { kind: 'revoke_token'; team_id: number; token_id: number; revoked_at: string };

/** The team (or one of its tokens) the command names does not exist. The edge answers 404. */
export class TeamNotFoundError extends Error {
  constructor(readonly teamId: number) {
    super(`Team ${teamId} not found`);
    this.name = 'TeamNotFoundError';
  }
}

export class TokenNotFoundError extends Error {
  constructor(readonly tokenId: number) {
    super(`Token ${tokenId} not found`);
    this.name = 'TokenNotFoundError';
  }
}

export function decide(state: TeamState, command: TeamCommand): TeamEvent[] {
  switch (command.kind) {
    case 'create_team':
      if (state.exists) return [];
      return [
        { type: TEAM_CREATED, data: { team_id: command.team_id, name: command.name, created_at: command.created_at } },
        { type: INCIDENT_STATUSES_SEEDED, data: { team_id: command.team_id, statuses: command.statuses } },
      ];
    case 'issue_token':
      if (!state.exists) throw new TeamNotFoundError(command.token.team_id);
      return [{ type: TOKEN_ISSUED, data: command.token }];
    case 'revoke_token': {
      if (!state.exists) throw new TeamNotFoundError(command.team_id);
      const token = state.tokens.get(command.token_id);
      if (!token) throw new TokenNotFoundError(command.token_id);
      if (token.revoked) return [];
      return [{ type: TOKEN_REVOKED, data: { token_id: command.token_id, team_id: command.team_id, revoked_at: command.revoked_at } }];
    }
  }
}
