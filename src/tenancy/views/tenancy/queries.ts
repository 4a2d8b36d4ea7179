import { Inject, Injectable } from '@nestjs/common';
import { CursorCodec, type Pagination } from '../../../platform/http/pagination.js';
import { PLATFORM, type Platform } from '../../../platform/platform.js';
import type { SortDirection } from '../../../platform/read-store/read-store.port.js';
import type { Role, Scope } from '../../../platform/http/route-auth.js';
import type { TeamView } from '../../application/tenancy.commands.js';
import { ViewCache } from '../../../platform/projections/view-cache.js';
import type { ViewReader } from '../../../platform/projections/views.js';
import { INCIDENT_STATUSES, type IncidentStatusDoc, type TeamDoc, TEAMS, TENANCY_VIEW, type TokenDoc, TOKENS } from './view.js';

/** Whether the team exists in the tenancy view. */
export async function teamExists(reader: ViewReader, teamId: number): Promise<boolean> {
  return (await reader.get(TENANCY_VIEW, TEAMS, teamId)) !== null;
}

const statusLists = new WeakMap<ViewReader, ViewCache<IncidentStatusDoc[]>>();

/**
 * The team's incident statuses, id ascending: read on every incident create, and changed only
 * by a status edit, so kept per reader while the collection's stamp holds (a status written by
 * any process is seen by the next read). The list is shared: callers never mutate it.
 */
export async function teamIncidentStatuses(reader: ViewReader, teamId: number, scope?: object): Promise<IncidentStatusDoc[]> {
  let cache = statusLists.get(reader);
  if (!cache) statusLists.set(reader, (cache = new ViewCache(reader, TENANCY_VIEW, INCIDENT_STATUSES, { capacity: 1_000 })));
  const load = async () => (await reader.find(TENANCY_VIEW, INCIDENT_STATUSES, { filter: { team_id: teamId }, sort: [['id_num', 'asc']] })) as unknown as IncidentStatusDoc[];
  return (await cache.get(String(teamId), load, scope)) ?? [];
}

const TEAM_SORT: Array<[string, SortDirection]> = [['team_id', 'asc']];
const TOKEN_SORT: Array<[string, SortDirection]> = [['token_id', 'asc']];

/** A developer token as operators see it: never the token nor its hash. */
export interface TokenSummary {
  id: number;
  team_id: number;
  name: string;
  scopes: Scope[];
  role: Role;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export function presentTeam(row: TeamDoc): TeamView {
  return { id: row.team_id, name: row.name, created_at: row.created_at };
}

export function presentToken(row: TokenDoc): TokenSummary {
  return {
    id: row.token_id,
    team_id: row.team_id,
    name: row.name,
    scopes: row.scopes,
    role: row.role,
    created_at: row.created_at,
    expires_at: row.expires_at ?? null,
    revoked_at: row.revoked_at ?? null,
    last_used_at: row.last_used_at ?? null,
  };
}

/** Operator lists of the tenancy view, paged with the shared signed cursors. */
@Injectable()
export class TenancyReads {
  private readonly cursors: CursorCodec;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
  }

  async teams(limit: number, cursor: string | undefined): Promise<{ data: TeamView[]; pagination: Pagination }> {
    const bound = { list: 'teams' };
    const after = this.cursors.decode(cursor, bound);
    const rows = await this.platform.reader.find(TENANCY_VIEW, TEAMS, { filter: {}, sort: TEAM_SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, TEAM_SORT, bound);
    return { data: (page.rows as unknown as TeamDoc[]).map(presentTeam), pagination: page.pagination };
  }

  /** Revoked and expired tokens included (with `revoked_at`, `expires_at`), oldest first. */
  async tokens(teamId: number, limit: number, cursor: string | undefined): Promise<{ data: TokenSummary[]; pagination: Pagination }> {
    const bound = { list: 'tokens', team_id: teamId };
    const after = this.cursors.decode(cursor, bound);
    const rows = await this.platform.reader.find(TENANCY_VIEW, TOKENS, { filter: { team_id: teamId }, sort: TOKEN_SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, TOKEN_SORT, bound);
    return { data: (page.rows as unknown as TokenDoc[]).map(presentToken), pagination: page.pagination };
  }
}
