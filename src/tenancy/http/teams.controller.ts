import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { actorOf, type CommandContext } from '../../platform/es/command-context.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { pathId, validateBody } from '../../platform/http/validation.js';
import { Problems } from '../../platform/http/problem.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { QueryReader, toTimestamp } from '../../platform/http/query.js';
import { CreateTeam, IssueToken, RevokeToken } from '../application/tenancy.commands.js';
import { TenancyReads } from '../views/tenancy/queries.js';
import { TEAM_PATH } from './team-path.js';
import { CreateTeamBody, IssuedTokenResponse, IssueTokenBody, TeamListResponse, TeamResponse, TokenListResponse } from './tenancy.dto.js';

const PageQueries = () => (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
  ApiQuery({ name: 'limit', required: false, type: 'integer', minimum: 1, maximum: 100, description: '1 through 100; default 50.' })(target, key, descriptor);
  ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page.' })(target, key, descriptor);
};

export function commandContext(request: FastifyRequest): CommandContext {
  return { actor: actorOf(request.principal), requestId: String(request.id) };
}

/** Provisioning for operators (application API, admin token): teams and developer tokens. */
@ApiTags('Teams')
@ApiBearerAuth()
@Controller('api/v2/teams')
@PathResources(TEAM_PATH)
export class TeamsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly reads: TenancyReads,
  ) {}

  @AdminOnly()
  @Get()
  @ApiOperation({ summary: 'List teams', description: 'By id ascending.' })
  @PageQueries()
  @ApiOkResponse({ type: TeamListResponse })
  async listTeams(@Query() query: Record<string, unknown>) {
    const q = new QueryReader(query);
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.teams(limit, cursor);
  }

  @AdminOnly()
  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a team', description: 'Seeds the incident statuses Investigating (default), Identified, Monitoring.' })
  @ApiBody({ type: CreateTeamBody })
  @ApiResponse({ status: 201, type: TeamResponse })
  async createTeam(@Body() body: unknown, @Req() request: FastifyRequest) {
    const input = validateBody(CreateTeamBody, body);
    return { data: await this.commands.execute(new CreateTeam(input.name, commandContext(request))) };
  }

  /** A replay with the same Idempotency-Key answers the token's metadata with `token: null`. */
  @AdminOnly({ secretFields: ['token'] })
  @Post(':teamID/tokens')
  @HttpCode(201)
  @ApiOperation({ summary: 'Issue a developer token', description: 'The token appears only in this answer.' })
  @ApiParam({ name: 'teamID' })
  @ApiBody({ type: IssueTokenBody })
  @ApiResponse({ status: 201, type: IssuedTokenResponse })
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
  @ApiOperation({ summary: "List a team's developer tokens", description: 'Never the token itself nor its hash.' })
  @PageQueries()
  @ApiOkResponse({ type: TokenListResponse })
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
  @ApiOperation({ summary: 'Revoke a developer token', description: 'Refused (401) from then on; revoking twice is 204 again.' })
  @ApiResponse({ status: 204, description: 'Revoked.' })
  async revokeToken(@Param('teamID') teamParam: string, @Param('tokenID') tokenParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new RevokeToken(pathId(teamParam, 'The team'), pathId(tokenParam, 'The token'), commandContext(request)));
  }
}
