import { randomBytes } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import { sha256 } from '../../platform/http/http-conventions.js';
import type { Role, Scope } from '../../platform/auth/scopes.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { ViewsBehindError } from '../../platform/projections/views.js';
import { decide, DEFAULT_INCIDENT_STATUSES, teamAggregate, teamStream, type TeamCommand } from '../domain/team.js';

export const TOKEN_PREFIX = 'mon_pat_';

export interface TeamView {
  id: number;
  name: string;
  created_at: string;
}

export interface IssuedToken {
  id: number;
  /** The raw token, shown once: absent when an earlier attempt of a keyed request issued it (only its hash is kept). */
  token?: string;
  name: string;
  scopes: Scope[];
  role: Role;
  created_at: string;
  expires_at: string | null;
}

export class CreateTeam extends Command<TeamView> {
  constructor(readonly name: string, readonly context: CommandContext) {
    super();
  }
}

export class IssueToken extends Command<IssuedToken> {
  constructor(
    readonly teamId: number,
    readonly input: { name: string; scopes: Scope[]; role: Role; expires_at: string | null },
    readonly context: CommandContext,
  ) {
    super();
  }
}

export class RevokeToken extends Command<void> {
  constructor(readonly teamId: number, readonly tokenId: number, readonly context: CommandContext) {
    super();
  }
}

@CommandHandler(CreateTeam)
export class CreateTeamHandler implements ICommandHandler<CreateTeam> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ name, context }: CreateTeam): Promise<TeamView> {
    const { ids, freshness } = this.platform;
    const teamId = await ids.next('team');
    const created_at = new Date().toISOString();
    const statusIds = await ids.reserve('incident_status', DEFAULT_INCIDENT_STATUSES.length);
    const statuses = DEFAULT_INCIDENT_STATUSES.map((status, index) => ({ id: statusIds.first + index, name: status, is_default: index === 0, created_at }));
    await freshness.require(await runTeamCommand(this.platform, teamId, context, { kind: 'create_team', team_id: teamId, name, statuses, created_at }));
    return { id: teamId, name, created_at };
  }
}

@CommandHandler(IssueToken)
export class IssueTokenHandler implements ICommandHandler<IssueToken> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: IssueToken): Promise<IssuedToken> {
    const { ids, freshness } = this.platform;
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const created_at = new Date().toISOString();
    const tokenId = await ids.next('token');
    const issued = { token_id: tokenId, team_id: teamId, name: input.name, scopes: input.scopes, role: input.role, token_hash: sha256(token), created_at, expires_at: input.expires_at };
    const written = await runTeamCommand(this.platform, teamId, context, { kind: 'issue_token', token: issued });
    const answer: IssuedToken = { id: tokenId, ...(written.replayed ? {} : { token }), name: input.name, scopes: input.scopes, role: input.role, created_at, expires_at: input.expires_at };
    // The token is shown once: a 202 (views behind) must carry it too, or it is lost.
    await freshness.require(written).catch(ViewsBehindError.carrying(answer));
    return answer;
  }
}

@CommandHandler(RevokeToken)
export class RevokeTokenHandler implements ICommandHandler<RevokeToken> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, tokenId, context }: RevokeToken): Promise<void> {
    const revoked_at = new Date().toISOString();
    await this.platform.freshness.require(await runTeamCommand(this.platform, teamId, context, { kind: 'revoke_token', team_id: teamId, token_id: tokenId, revoked_at }));
  }
}

/** One command on a team's stream through the tenancy decider. */
function runTeamCommand(platform: Platform, teamId: number, context: CommandContext, command: TeamCommand) {
  return runStreamCommand(platform.events, teamStream(teamId), teamAggregate, context, (state) => ({ events: decide(state, command), result: undefined }));
}
