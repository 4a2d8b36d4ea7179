import { applyDecorators, Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import type { AppConfig } from '../../platform/config/config.js';
import { Problems } from '../../platform/http/problem.js';
import { TokenTeam } from '../../platform/http/token-team.js';
import { RequiresScope } from '../../platform/http/route-auth.js';
import { pathId } from '../../platform/http/validation.js';
import { retentionHorizon } from '../../checks/domain/check-summary.js';
import { AnalyticsQuery } from '../views/rollups/queries.js';
import { AnalyticsReads } from '../application/analytics-reads.js';
import { Slices } from '../application/slices.js';
import { ViewAnalyticsFacts } from '../views/endpoints/queries.js';
import { REGION_NAME } from '../../platform/config/region.js';
import { DEFAULT_BUCKETS, DEFAULT_WINDOW, MAX_BUCKETS, WINDOWS, parseAnalyticsWindow, parseRegionFilter, type AnalyticsWindow } from '../domain/window.js';
import { endpointAnalyticsSchema, projectAnalyticsSchema, teamAnalyticsSchema, wrapped } from './analytics.schemas.js';

export const V2_TEAM_ANALYTICS_PATH = '/api/public/v2/analytics';

const WindowQuery = () =>
  applyDecorators(
    ApiQuery({ name: 'window', required: false, enum: Object.keys(WINDOWS), description: `Default ${DEFAULT_WINDOW}. Ignored when from and to are given.` }),
    ApiQuery({ name: 'from', required: false, type: String, format: 'date-time', description: 'RFC 3339, inclusive; only together with to.' }),
    ApiQuery({ name: 'to', required: false, type: String, format: 'date-time', description: 'RFC 3339, exclusive; only together with from. Range at most 90 days.' }),
    ApiQuery({ name: 'buckets', required: false, type: 'integer', minimum: 1, maximum: MAX_BUCKETS, description: `Series buckets, default ${DEFAULT_BUCKETS}.` }),
    ApiResponse({ status: 400, description: 'Invalid query: every problem listed in `errors`.' }),
    ApiResponse({ status: 401, description: 'Missing or invalid token.' }),
    ApiResponse({ status: 403, description: 'The token lacks analytics:read.' }),
  );

function windowOf(query: Record<string, unknown>): AnalyticsWindow {
  const result = parseAnalyticsWindow(query ?? {}, Date.now());
  if (!result.ok) throw Problems.validation(result.errors);
  return result.window;
}

/**
 * The v1 route's deprecation, on every answer it gives (errors of authentication and rate limit
 * included, so the spec's "its responses carry Deprecation: true" holds for all of them).
 */
function v1DeprecationHeaders(config: AppConfig): Record<string, string> {
  return {
    deprecation: 'true',
    link: `<${V2_TEAM_ANALYTICS_PATH}>; rel="successor-version"`,
    ...(config.v1SunsetAt ? { sunset: new Date(config.v1SunsetAt).toUTCString() } : {}),
  };
}

/** Aggregated figures of a team, a project or an endpoint (scope analytics:read). */
@ApiTags('Analytics')
@ApiBearerAuth()
@Controller()
export class AnalyticsController {
  private readonly query: AnalyticsReads;
  private readonly facts: ViewAnalyticsFacts;

  constructor(@Inject(PLATFORM) platform: Platform) {
    // Analytics read through the store's off-thread connection where it has one (a SQLite file),
    // so their long statements run on a worker while the event loop serves other requests.
    const views = platform.views.offThread?.() ?? platform.views;
    const reader = platform.reader.over(views);
    // One Slices for the query and its facts: all analytics work shares the same turns of the loop.
    const slices = new Slices();
    this.facts = new ViewAnalyticsFacts(reader, views, slices);
    const retentionDays = platform.config.checkRetentionDays;
    const query = new AnalyticsQuery(
      views,
      this.facts,
      () => this.facts.collections(),
      { rawHorizon: () => retentionHorizon(Date.now(), retentionDays) },
      slices,
    );
    this.query = new AnalyticsReads(reader, query);
  }

  @RequiresScope('analytics:read')
  @Get('api/public/v2/analytics')
  @ApiOperation({ summary: 'Team analytics' })
  @WindowQuery()
  @ApiOkResponse({ schema: wrapped(teamAnalyticsSchema) })
  async team(@Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    return { data: await this.query.team(teamId, windowOf(query)) };
  }

  @RequiresScope('analytics:read')
  @Get('api/public/v2/projects/:projectID/analytics')
  @ApiOperation({ summary: 'Project analytics' })
  @ApiParam({ name: 'projectID', type: Number })
  @WindowQuery()
  @ApiOkResponse({ schema: wrapped(projectAnalyticsSchema) })
  @ApiResponse({ status: 404, description: 'No such project in the token\'s team.' })
  async project(@Param('projectID') projectParam: string, @Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    const projectId = pathId(projectParam, 'The project');
    // 404 before 400 (api-decisions, order of checks): the project is looked up before the query is read.
    if (!(await this.facts.project(teamId, projectId))) throw Problems.notFound('The project');
    return { data: await this.query.project(teamId, projectId, windowOf(query)) };
  }

  @RequiresScope('analytics:read')
  @Get('api/public/v2/endpoints/:endpointID/analytics')
  @ApiOperation({ summary: 'Endpoint analytics' })
  @ApiParam({ name: 'endpointID', type: Number })
  @WindowQuery()
  @ApiQuery({
    name: 'region',
    required: false,
    type: String,
    pattern: REGION_NAME.source,
    description:
      'Only the checks recorded in this probe region count, in every figure and in current. Without it every applicable check counts. A region no check came from gives the figures of no checks; a value that is not a region name (1-32 of a-z, 0-9, -) is a 400.',
  })
  @ApiOkResponse({ schema: wrapped(endpointAnalyticsSchema) })
  @ApiResponse({ status: 404, description: 'No such endpoint in the token\'s team.' })
  async endpoint(@Param('endpointID') endpointParam: string, @Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    const endpointId = pathId(endpointParam, 'The endpoint');
    const { window, region } = await this.endpointQueryOf(teamId, endpointId, query);
    const data = await this.query.endpoint(teamId, endpointId, window, region);
    if (!data) throw Problems.notFound('The endpoint');
    return { data };
  }

  /**
   * The window and `?region=` of the endpoint route, every problem of both listed together. A bad
   * query on an endpoint the token cannot see is 404 (order of checks); the endpoint is looked up
   * only then, so a good query's answer costs no extra read (the answer's own read says 404).
   */
  private async endpointQueryOf(teamId: number, endpointId: number, query: Record<string, unknown>): Promise<{ window: AnalyticsWindow; region: string | undefined }> {
    const result = parseAnalyticsWindow(query ?? {}, Date.now());
    const errors = result.ok ? [] : [...result.errors];
    const region = parseRegionFilter(query ?? {}, errors);
    if (result.ok && errors.length === 0) return { window: result.window, region };
    const visible = await this.facts.endpoints(teamId, { kind: 'endpoint', id: endpointId });
    throw visible.length > 0 ? Problems.validation(errors) : Problems.notFound('The endpoint');
  }

  /** Version 1: the team object without the `data` wrapper, marked deprecated (v1DeprecationHeaders). */
  @RequiresScope('analytics:read', { headers: v1DeprecationHeaders })
  @Get('api/public/v1/analytics')
  @ApiOperation({
    summary: 'Team analytics (version 1, deprecated)',
    deprecated: true,
    description: 'The v2 team analytics object without the data wrapper. Headers on every answer: Deprecation: true, Link to the successor, Sunset once a date is set.',
  })
  @WindowQuery()
  @ApiOkResponse({ schema: teamAnalyticsSchema })
  async teamV1(@Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    return this.query.team(teamId, windowOf(query));
  }
}
