import { randomBytes } from 'node:crypto';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import { sha256 } from '../../platform/http/http-conventions.js';
import { Problems } from '../../platform/http/problem.js';
import type { Role, Scope } from '../../platform/http/route-auth.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import {
  DEFAULT_INCIDENT_STATUSES,
  INCIDENT_STATUSES_SEEDED,
  TEAM_CREATED,
  TOKEN_ISSUED,
  TOKEN_REVOKED,
  teamAggregate,
  teamStream,
} from '../domain/team.js';

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

const VIEWS = ['tenancy'];

@CommandHandler(CreateTeam)
export class CreateTeamHandler implements ICommandHandler<CreateTeam> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ name, context }: CreateTeam): Promise<TeamView> {
    const { events, ids, freshness } = this.platform;
    const teamId = await ids.next('team');
    const created_at = new Date().toISOString();
    const statusIds = await ids.reserve('incident_status', DEFAULT_INCIDENT_STATUSES.length);
    const statuses = DEFAULT_INCIDENT_STATUSES.map((status, index) => ({
      id: statusIds.first + index,
      name: status,
      is_default: index === 0,
      created_at,
    }));
    const { append } = await runStreamCommand(events, teamStream(teamId), teamAggregate, context, () => ({
      events: [
        { type: TEAM_CREATED, data: { team_id: teamId, name, created_at } },
        { type: INCIDENT_STATUSES_SEEDED, data: { team_id: teamId, statuses } },
      ],
      result: undefined,
    }));
    await freshness.require(append!.position, VIEWS);
    return { id: teamId, name, created_at };
  }
}

@CommandHandler(IssueToken)
export class IssueTokenHandler implements ICommandHandler<IssueToken> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: IssueToken): Promise<IssuedToken> {
    const { events, ids, freshness } = this.platform;
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const created_at = new Date().toISOString();
    const { append, result, replayed } = await runStreamCommand(events, teamStream(teamId), teamAggregate, context, async (state) => {
      if (!state.exists) throw Problems.notFound('The team');
      const tokenId = await ids.next('token');
      const data = { token_id: tokenId, team_id: teamId, name: input.name, scopes: input.scopes, role: input.role, token_hash: sha256(token), created_at, expires_at: input.expires_at };
      return { events: [{ type: TOKEN_ISSUED, data }], result: tokenId };
    });
    await freshness.require(append!.position, VIEWS);
    return { id: result, ...(replayed ? {} : { token }), name: input.name, scopes: input.scopes, role: input.role, created_at, expires_at: input.expires_at };
  }
}

@CommandHandler(RevokeToken)
export class RevokeTokenHandler implements ICommandHandler<RevokeToken> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, tokenId, context }: RevokeToken): Promise<void> {
    const { events, freshness } = this.platform;
    const { append } = await runStreamCommand(events, teamStream(teamId), teamAggregate, context, (state) => {
      const token = state.tokens.get(tokenId);
      if (!state.exists || !token) throw Problems.notFound('The token');
      if (token.revoked) return { events: [], result: undefined };
      return { events: [{ type: TOKEN_REVOKED, data: { token_id: tokenId, team_id: teamId, revoked_at: new Date().toISOString() } }], result: undefined };
    });
    if (append) await freshness.require(append.position, VIEWS);
  }
}
