/**
 * The tenancy view (projection `tenancy`), defined here once: written by `projection.ts`, read
 * through `queries.ts` by the operator lists, the team path guard and every context that needs a
 * team's incident statuses, and by token verification.
 */
import type { TokenIssuedData } from '../../domain/team.js';

export const TENANCY_VIEW = 'tenancy';

export const TEAMS = 'teams';
export const TOKENS = 'tokens';
export const INCIDENT_STATUSES = 'incident_statuses';

export interface TeamDoc {
  id: string;
  team_id: number;
  name: string;
  created_at: string;
}

/** A developer token by id; only its SHA-256 (`token_hash`, unique) is kept. */
export interface TokenDoc extends TokenIssuedData {
  id: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** One of a team's incident statuses; `id` is the status id as a string, `id_num` the number. */
export interface IncidentStatusDoc {
  id: string;
  id_num: number;
  team_id: number;
  name: string;
  is_default: boolean;
  created_at: string;
}
