import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiExcludeController } from '@nestjs/swagger';
import { ArrayMinSize, ArrayUnique, IsArray, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import type { FastifyRequest } from 'fastify';
import { actorOf, type CommandContext } from '../../platform/es/command-context.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { pathId, validateBody } from '../../platform/http/validation.js';
import { IsRfc3339 } from '../../platform/http/validators.js';
import { Problems } from '../../platform/http/problem.js';
import { AdminOnly, SCOPES, type Role, type Scope } from '../../platform/http/route-auth.js';
import { QueryReader, toTimestamp } from '../../platform/http/query.js';
import { CreateTeam, IssueToken, RevokeToken } from '../application/tenancy.commands.js';
import { TenancyReads } from '../application/tenancy.reads.js';
import { TEAM_PATH } from './team-path.js';

class CreateTeamBody {
  @IsString() @MinLength(1) @MaxLength(200) name!: string;
}

class IssueTokenBody {
  @IsString() @MinLength(1) @MaxLength(200) name!: string;
  @IsArray() @ArrayMinSize(1) @ArrayUnique() @IsIn(SCOPES, { each: true }) scopes!: Scope[];
  @IsIn(['editor', 'viewer']) role!: Role;
  @IsOptional() @IsRfc3339() expires_at?: string | null;
}

export function commandContext(request: FastifyRequest): CommandContext {
  return { actor: actorOf(request.principal), requestId: String(request.id) };
}

/** Provisioning for operators (application API, admin token): teams and developer tokens. */
@ApiExcludeController()
@Controller('api/v2/teams')
@PathResources(TEAM_PATH)
export class TeamsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly reads: TenancyReads,
  ) {}

  @AdminOnly()
  @Get()
  async listTeams(@Query() query: Record<string, unknown>) {
    const q = new QueryReader(query);
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.teams(limit, cursor);
  }

  @AdminOnly()
  @Post()
  @HttpCode(201)
  async createTeam(@Body() body: unknown, @Req() request: FastifyRequest) {
    const input = validateBody(CreateTeamBody, body);
    return { data: await this.commands.execute(new CreateTeam(input.name, commandContext(request))) };
  }

  /** A replay with the same Idempotency-Key answers the token's metadata with `token: null`. */
  @AdminOnly({ secretFields: ['token'] })
  @Post(':teamID/tokens')
  @HttpCode(201)
  async issueToken(@Param('teamID') teamParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const input = validateBody(IssueTokenBody, body);
    const expires_at = input.expires_at ? toTimestamp(input.expires_at) : null;
    if (expires_at && Date.parse(expires_at) <= Date.now()) {
      throw Problems.validation([{ field: 'expires_at', code: 'out_of_range', message: 'must be in the future' }]);
    }
    const issued = await this.commands.execute(new IssueToken(teamId, { name: input.name, scopes: input.scopes, role: input.role, expires_at }, commandContext(request)));
    return { data: issued };
  }

  @AdminOnly()
  @Get(':teamID/tokens')
  async listTokens(@Param('teamID') teamParam: string, @Query() query: Record<string, unknown>) {
    const teamId = pathId(teamParam, 'The team');
    const q = new QueryReader(query);
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.tokens(teamId, limit, cursor);
  }

  @AdminOnly()
  @Delete(':teamID/tokens/:tokenID')
  @HttpCode(204)
  async revokeToken(@Param('teamID') teamParam: string, @Param('tokenID') tokenParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new RevokeToken(pathId(teamParam, 'The team'), pathId(tokenParam, 'The token'), commandContext(request)));
  }
}
