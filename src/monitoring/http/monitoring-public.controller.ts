import { applyDecorators, Controller, Get, Header, Param, Query, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { TokenTeam } from '../../platform/http/token-team.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { QueryReader } from '../../platform/http/query.js';
import { RequiresScope } from '../../platform/http/route-auth.js';
import { pathId } from '../../platform/http/validation.js';
import { CheckReads } from '../application/check-reads.js';
import { MonitoringReads } from '../views/monitoring/queries.js';
import { ENDPOINT_PATH, PROJECT_PATH } from './monitoring-paths.js';
import { CheckListResponse, CheckResponse, EndpointListResponse, EndpointResponse, ProjectListResponse, ProjectResponse } from './public.dto.js';


/** Routes that answer JSON text already serialised say so themselves (Fastify would say text/plain). */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

const PageQueries = () =>
  applyDecorators(
    ApiQuery({ name: 'limit', required: false, type: 'integer', minimum: 1, maximum: 100, description: '1 through 100; default 50.' }),
    ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page.' }),
  );
const EnabledQuery = () => ApiQuery({ name: 'enabled', required: false, enum: ['true', 'false'] });

/** Public monitoring read API (developer tokens with monitoring:read; other teams' resources are 404). */
@ApiTags('Monitoring')
@ApiBearerAuth()
@Controller('api/public/v2')
export class MonitoringPublicController {
  constructor(
    private readonly reads: MonitoringReads,
    private readonly checks: CheckReads,
  ) {}

  @RequiresScope('monitoring:read')
  @Get('projects')
  @ApiOperation({ summary: 'List projects', description: 'Ordered by id ascending.' })
  @PageQueries()
  @ApiOkResponse({ type: ProjectListResponse })
  async listProjects(@Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    const q = new QueryReader(query);
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.projects(teamId, limit, cursor);
  }

  @RequiresScope('monitoring:read')
  @Get('projects/:projectID')
  @ApiOperation({ summary: 'Get a project' })
  @ApiOkResponse({ type: ProjectResponse })
  async getProject(@Param('projectID') projectParam: string, @TokenTeam() teamId: number) {
    return { data: await this.reads.project(teamId, pathId(projectParam, 'The project')) };
  }

  @RequiresScope('monitoring:read')
  @Get('projects/:projectID/endpoints')
  @PathResources(PROJECT_PATH)
  @ApiOperation({ summary: "List a project's endpoints", description: 'Ordered by id ascending.' })
  @EnabledQuery()
  @PageQueries()
  @ApiOkResponse({ type: EndpointListResponse })
  async listProjectEndpoints(@Param('projectID') projectParam: string, @Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    const projectId = pathId(projectParam, 'The project');
    const q = new QueryReader(query);
    const enabled = q.boolean('enabled');
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.endpoints(teamId, { project_id: projectId, enabled }, limit, cursor);
  }

  @RequiresScope('monitoring:read')
  @Get('endpoints')
  @ApiOperation({ summary: 'List endpoints', description: 'Ordered by id ascending.' })
  @ApiQuery({ name: 'project_id', required: false, type: 'integer', minimum: 1 })
  @EnabledQuery()
  @PageQueries()
  @ApiOkResponse({ type: EndpointListResponse })
  async listEndpoints(@Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    const q = new QueryReader(query);
    const project_id = q.integer('project_id', { min: 1 });
    const enabled = q.boolean('enabled');
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.endpoints(teamId, { project_id, enabled }, limit, cursor);
  }

  @RequiresScope('monitoring:read')
  @Get('endpoints/:endpointID')
  @ApiOperation({ summary: 'Get an endpoint' })
  @ApiOkResponse({ type: EndpointResponse })
  @Header('content-type', JSON_CONTENT_TYPE)
  async getEndpoint(@Param('endpointID') endpointParam: string, @TokenTeam() teamId: number, @Req() request: FastifyRequest) {
    return this.reads.endpointJson(teamId, pathId(endpointParam, 'The endpoint'), request);
  }

  @RequiresScope('monitoring:read')
  @Get('endpoints/:endpointID/checks')
  @PathResources(ENDPOINT_PATH)
  @ApiOperation({ summary: "List an endpoint's checks", description: 'Ordered by checked_at descending, then id descending.' })
  @ApiQuery({ name: 'source', required: false, enum: ['scheduled', 'manual'] })
  @ApiQuery({ name: 'success', required: false, enum: ['true', 'false'] })
  @ApiQuery({ name: 'region', required: false, type: String, description: 'Checks taken in this region only; a region with no checks lists none (not an error).' })
  @ApiQuery({ name: 'from', required: false, type: String, format: 'date-time', description: 'RFC 3339, inclusive: checks at or after.' })
  @ApiQuery({ name: 'to', required: false, type: String, format: 'date-time', description: 'RFC 3339, exclusive: checks before.' })
  @PageQueries()
  @ApiOkResponse({ type: CheckListResponse })
  @Header('content-type', JSON_CONTENT_TYPE)
  async listChecks(@Param('endpointID') endpointParam: string, @Query() query: Record<string, unknown>, @TokenTeam() teamId: number, @Req() request: FastifyRequest) {
    const endpointId = pathId(endpointParam, 'The endpoint');
    const q = new QueryReader(query);
    const filters = { source: q.oneOf('source', ['scheduled', 'manual'] as const), success: q.boolean('success'), region: q.string('region'), from: q.timestamp('from'), to: q.timestamp('to') };
    const { limit, cursor } = q.page();
    q.done();
    const defined = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined));
    return this.checks.checksJson(teamId, endpointId, defined, limit, cursor, request);
  }

  @RequiresScope('monitoring:read')
  @Get('endpoints/:endpointID/checks/:checkID')
  @PathResources(ENDPOINT_PATH)
  @ApiOperation({ summary: 'Get a check', description: '404 unless the check belongs to the endpoint and to the token team.' })
  @ApiOkResponse({ type: CheckResponse })
  async getCheck(@Param('endpointID') endpointParam: string, @Param('checkID') checkParam: string, @TokenTeam() teamId: number) {
    const endpointId = pathId(endpointParam, 'The endpoint');
    const checkId = pathId(checkParam, 'The check');
    return { data: await this.checks.check(teamId, endpointId, checkId) };
  }
}
