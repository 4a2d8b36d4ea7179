import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { PathResources } from '../../platform/http/path-resources.js';
import { QueryReader } from '../../platform/http/query.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { pathId, validateBody } from '../../platform/http/validation.js';
import { commandContext } from '../../tenancy/http/teams.controller.js';
import { TEAM_PATH } from '../../tenancy/http/team-path.js';
import { CreateSlo, DeleteSlo, UpdateSlo } from '../application/slo.commands.js';
import { SloReads } from '../views/slos/queries.js';
import { SLO_PATH } from './slo-path.js';
import { CreateSloBody, selectionRequired, SloListResponse, SloResponse, UpdateSloBody } from './slos.dto.js';

/** Without the keys the client did not send. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Application API (admin token): a team's service level objectives. */
@ApiTags('SLOs (application API)')
@ApiBearerAuth()
@Controller('api/v2/teams/:teamID/slos')
@PathResources(TEAM_PATH, SLO_PATH)
export class SlosAdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly reads: SloReads,
  ) {}

  @AdminOnly()
  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create an SLO' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiBody({ type: CreateSloBody })
  @ApiResponse({ status: 201, type: SloResponse, description: 'The SLO with its figures now.' })
  @ApiResponse({ status: 400, description: 'validation_failed (an endpoint or project of another team included: code not_found).' })
  @ApiResponse({ status: 404, description: 'Unknown team.' })
  async create(@Param('teamID') teamParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const input = defined(validateBody(CreateSloBody, body, selectionRequired(body)));
    const sloId = await this.commands.execute(new CreateSlo(teamId, input, commandContext(request)));
    return { data: await this.reads.one(teamId, sloId) };
  }

  @AdminOnly()
  @Get()
  @ApiOperation({ summary: 'List the team\'s SLOs' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiQuery({ name: 'limit', required: false, type: Number, description: '1 through 100; default 50.' })
  @ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page.' })
  @ApiResponse({ status: 200, type: SloListResponse, description: 'By id ascending.' })
  async list(@Param('teamID') teamParam: string, @Query() query: Record<string, unknown>) {
    const q = new QueryReader(query ?? {});
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.list(pathId(teamParam, 'The team'), limit, cursor, 'admin');
  }

  @AdminOnly()
  @Get(':sloID')
  @ApiOperation({ summary: 'One SLO' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiParam({ name: 'sloID', type: Number })
  @ApiResponse({ status: 200, type: SloResponse, description: 'The SLO with its figures now.' })
  @ApiResponse({ status: 404, description: 'Unknown team, or no such SLO in the team.' })
  async one(@Param('teamID') teamParam: string, @Param('sloID') sloParam: string) {
    return { data: await this.reads.one(pathId(teamParam, 'The team'), pathId(sloParam, 'The SLO')) };
  }

  @AdminOnly()
  @Patch(':sloID')
  @ApiOperation({ summary: 'Change an SLO (any field, at least one)' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiParam({ name: 'sloID', type: Number })
  @ApiBody({ type: UpdateSloBody })
  @ApiResponse({ status: 200, type: SloResponse, description: 'The SLO with its figures now.' })
  async update(@Param('teamID') teamParam: string, @Param('sloID') sloParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const sloId = pathId(sloParam, 'The SLO');
    const input = defined(validateBody(UpdateSloBody, body));
    await this.commands.execute(new UpdateSlo(teamId, sloId, input, commandContext(request)));
    return { data: await this.reads.one(teamId, sloId) };
  }

  @AdminOnly()
  @Delete(':sloID')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an SLO (its alerts end with it)' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiParam({ name: 'sloID', type: Number })
  @ApiResponse({ status: 204, description: 'Deleted.' })
  async remove(@Param('teamID') teamParam: string, @Param('sloID') sloParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new DeleteSlo(pathId(teamParam, 'The team'), pathId(sloParam, 'The SLO'), commandContext(request)));
  }
}
