import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiParam, ApiProperty, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { DataResponse, ListResponse } from '../../platform/http/envelope.dto.js';
import type { FastifyRequest } from 'fastify';
import { PathResources } from '../../platform/http/path-resources.js';
import { Problems } from '../../platform/http/problem.js';
import { QueryReader } from '../../platform/http/query.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { pathId, validateBody } from '../../platform/http/validation.js';
import { commandContext } from '../../tenancy/http/teams.controller.js';
import { TEAM_PATH } from '../../tenancy/http/team-path.js';
import { CreateStatusPage, DeleteStatusPage, UpdateStatusPage } from '../application/status-page.commands.js';
import { StatusPageReads } from '../views/status-pages/queries.js';
import { STATUS_PAGE_PATH } from './status-page-path.js';
import { CreateStatusPageBody, StatusPageDto, UpdateStatusPageBody } from './status-pages.dto.js';

/** Without the keys the client did not send. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** Application API (admin token): a team's public status pages. */
class StatusPageResponse extends DataResponse(StatusPageDto) {}

class StatusPageListResponse extends ListResponse(StatusPageDto) {}

@ApiTags('Status pages (application API)')
@ApiBearerAuth()
@Controller('api/v2/teams/:teamID/status-pages')
@PathResources(TEAM_PATH, STATUS_PAGE_PATH)
export class StatusPagesAdminController {
  constructor(
    private readonly commands: CommandBus,
    private readonly reads: StatusPageReads,
  ) {}

  @AdminOnly()
  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a status page' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiBody({ type: CreateStatusPageBody })
  @ApiResponse({ status: 201, type: StatusPageResponse, description: 'The status page.' })
  @ApiResponse({ status: 400, description: 'validation_failed (a component naming another team\'s endpoint included).' })
  @ApiResponse({ status: 404, description: 'Unknown team.' })
  @ApiResponse({ status: 409, description: 'slug_taken.' })
  async create(@Param('teamID') teamParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const input = defined(validateBody(CreateStatusPageBody, body));
    const pageId = await this.commands.execute(new CreateStatusPage(teamId, input, commandContext(request)));
    return { data: await this.reads.one(teamId, pageId) };
  }

  @AdminOnly()
  @Get()
  @ApiOperation({ summary: 'List the team\'s status pages' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiQuery({ name: 'limit', required: false, type: Number, description: '1 through 100; default 50.' })
  @ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page.' })
  @ApiResponse({ status: 200, type: StatusPageListResponse, description: 'By id ascending.' })
  async list(@Param('teamID') teamParam: string, @Query() query: Record<string, unknown>) {
    const q = new QueryReader(query ?? {});
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.list(pathId(teamParam, 'The team'), limit, cursor);
  }

  @AdminOnly()
  @Get(':pageID')
  @ApiOperation({ summary: 'One status page' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiParam({ name: 'pageID', type: Number })
  @ApiResponse({ status: 200, type: StatusPageResponse, description: 'The status page.' })
  @ApiResponse({ status: 404, description: 'Unknown team, or no such page in the team.' })
  async one(@Param('teamID') teamParam: string, @Param('pageID') pageParam: string) {
    return { data: await this.reads.one(pathId(teamParam, 'The team'), pathId(pageParam, 'The status page')) };
  }

  @AdminOnly()
  @Patch(':pageID')
  @ApiOperation({ summary: 'Change a status page (any field, at least one)' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiParam({ name: 'pageID', type: Number })
  @ApiBody({ type: UpdateStatusPageBody })
  @ApiResponse({ status: 200, type: StatusPageResponse, description: 'The status page.' })
  @ApiResponse({ status: 409, description: 'slug_taken.' })
  async update(@Param('teamID') teamParam: string, @Param('pageID') pageParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const pageId = pathId(pageParam, 'The status page');
    const input = defined(validateBody(UpdateStatusPageBody, body));
    if (Object.keys(input).length === 0) throw Problems.validation([{ field: 'body', code: 'required', message: 'must change at least one field' }]);
    await this.commands.execute(new UpdateStatusPage(teamId, pageId, input, commandContext(request)));
    return { data: await this.reads.one(teamId, pageId) };
  }

  @AdminOnly()
  @Delete(':pageID')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a status page (its slug becomes free)' })
  @ApiParam({ name: 'teamID', type: Number })
  @ApiParam({ name: 'pageID', type: Number })
  @ApiResponse({ status: 204, description: 'Deleted.' })
  async remove(@Param('teamID') teamParam: string, @Param('pageID') pageParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new DeleteStatusPage(pathId(teamParam, 'The team'), pathId(pageParam, 'The status page'), commandContext(request)));
  }
}
