import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { MONITORING_VIEW, PROJECTS } from '../../monitoring/views/monitoring/view.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { Problems, type FieldError } from '../../platform/http/problem.js';
import { QueryReader } from '../../platform/http/query.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { pathId, validateBody } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { commandContext } from '../../tenancy/http/teams.controller.js';
import { TEAM_PATH } from '../../tenancy/http/team-path.js';
import { CreateChannel, DeleteChannel, RotateChannelSecret, TestChannel, UpdateChannel } from '../application/channel.commands.js';
import { ChannelReads, presentChannel } from '../reactors/notifications/queries.js';
import { toChannelDoc } from '../domain/channel-view.js';
import { CHANNEL_PATH } from './channel-path.js';
import { configErrors, CreateChannelBody, UpdateChannelBody } from './channels.dto.js';
import { ChannelListResponse, ChannelResponse, ChannelWithSecretResponse, DeliveryListResponse, TestAcceptedResponse } from './channels.responses.js';

const PageQueries = () => (target: object, key: string | symbol, descriptor: PropertyDescriptor) => {
  ApiQuery({ name: 'limit', required: false, type: Number, description: '1 through 100; default 50.' })(target, key, descriptor);
  ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page.' })(target, key, descriptor);
};

function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * Application API (admin token): a team's notification channels and their deliveries, described
 * in the application API's document (/api/v2/openapi.json).
 */
@ApiTags('Notification channels')
@ApiBearerAuth()
@Controller('api/v2/teams/:teamID/notification-channels')
@PathResources(TEAM_PATH, CHANNEL_PATH)
export class NotificationChannelsController {
  constructor(
    private readonly commands: CommandBus,
    private readonly reads: ChannelReads,
    @Inject(PLATFORM) private readonly platform: Platform,
  ) {}

  /** `project_ids` must name projects of the team (400 otherwise, like every id in a body). */
  private async projectErrors(teamId: number, ids: number[] | null | undefined): Promise<FieldError[]> {
    if (!ids || ids.length === 0) return [];
    const rows = await this.platform.reader.getMany(MONITORING_VIEW, PROJECTS, ids);
    const known = new Set(rows.filter((row) => row.team_id === teamId).map((row) => Number(row.project_id)));
    const unknown = ids.filter((id) => !known.has(id));
    return unknown.length === 0 ? [] : [{ field: 'project_ids', code: 'not_found', message: `does not name projects of this team: ${unknown.join(', ')}` }];
  }

  @AdminOnly({ secretFields: ['secret'] })
  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a notification channel', description: 'The answer carries `data.secret` (webhook) once; replays of the request answer `secret: null`.' })
  @ApiBody({ type: CreateChannelBody })
  @ApiResponse({ status: 201, type: ChannelWithSecretResponse })
  async create(@Param('teamID') teamParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const raw = (body ?? {}) as Record<string, unknown>;
    const input = defined(validateBody(CreateChannelBody, body, configErrors(raw.kind, raw.config, true)));
    const projectErrors = await this.projectErrors(teamId, input.project_ids);
    if (projectErrors.length > 0) throw Problems.validation(projectErrors);
    const { channel, secret } = await this.commands.execute(
      new CreateChannel(teamId, { ...input, config: defined({ ...input.config }) }, commandContext(request)),
    );
    const response = { data: { ...presentChannel(toChannelDoc(channel)), ...(input.kind === 'webhook' ? { secret } : {}) } };
    return response;
  }

  @AdminOnly()
  @Get()
  @ApiOperation({ summary: "List the team's notification channels", description: 'Ordered by id ascending.' })
  @PageQueries()
  @ApiResponse({ status: 200, type: ChannelListResponse })
  async list(@Param('teamID') teamParam: string, @Query() query: Record<string, unknown>) {
    const q = new QueryReader(query);
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.channels(pathId(teamParam, 'The team'), limit, cursor);
  }

  @AdminOnly()
  @Get(':channelID')
  @ApiOperation({ summary: 'Get a notification channel' })
  @ApiResponse({ status: 200, type: ChannelResponse })
  async get(@Param('teamID') teamParam: string, @Param('channelID') channelParam: string) {
    return { data: await this.reads.channel(pathId(teamParam, 'The team'), pathId(channelParam, 'The notification channel')) };
  }

  @AdminOnly()
  @Patch(':channelID')
  @ApiOperation({ summary: 'Change a notification channel', description: 'Its kind cannot change. `enabled: true` also re-enables a channel the service disabled after a 410.' })
  @ApiBody({ type: UpdateChannelBody })
  @ApiResponse({ status: 200, type: ChannelResponse })
  async update(@Param('teamID') teamParam: string, @Param('channelID') channelParam: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const channelId = pathId(channelParam, 'The notification channel');
    const current = await this.reads.channel(teamId, channelId);
    const raw = (body ?? {}) as Record<string, unknown>;
    const input = defined(validateBody(UpdateChannelBody, body, configErrors(current.kind, raw.config, false)));
    if (Object.keys(input).length === 0) throw Problems.validation([{ field: 'body', code: 'required', message: 'must change at least one field' }]);
    const projectErrors = await this.projectErrors(teamId, input.project_ids);
    if (projectErrors.length > 0) throw Problems.validation(projectErrors);
    const changes = { ...input, ...(input.config ? { config: defined({ ...input.config }) } : {}) };
    const channel = await this.commands.execute(new UpdateChannel(teamId, channelId, changes, commandContext(request)));
    return { data: presentChannel(toChannelDoc(channel)) };
  }

  @AdminOnly()
  @Delete(':channelID')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a notification channel', description: 'Its pending deliveries are cancelled.' })
  @ApiNoContentResponse()
  async remove(@Param('teamID') teamParam: string, @Param('channelID') channelParam: string, @Req() request: FastifyRequest) {
    await this.commands.execute(new DeleteChannel(pathId(teamParam, 'The team'), pathId(channelParam, 'The notification channel'), commandContext(request)));
  }

  @AdminOnly()
  @Post(':channelID/test')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a ping now', description: 'Even to a disabled channel and whatever its events filter. Answers the delivery id.' })
  @ApiResponse({ status: 202, type: TestAcceptedResponse })
  async test(@Param('teamID') teamParam: string, @Param('channelID') channelParam: string, @Req() request: FastifyRequest) {
    const result = await this.commands.execute(new TestChannel(pathId(teamParam, 'The team'), pathId(channelParam, 'The notification channel'), commandContext(request)));
    return { data: { delivery_id: result.delivery_id, type: 'ping' } };
  }

  @AdminOnly({ secretFields: ['secret'] })
  @Post(':channelID/rotate-secret')
  @HttpCode(200)
  @ApiOperation({ summary: 'Rotate the signing secret (webhook)', description: 'Answers the new secret once; for 24 hours deliveries carry signatures under both.' })
  @ApiResponse({ status: 200, type: ChannelWithSecretResponse })
  async rotate(@Param('teamID') teamParam: string, @Param('channelID') channelParam: string, @Req() request: FastifyRequest) {
    const teamId = pathId(teamParam, 'The team');
    const channelId = pathId(channelParam, 'The notification channel');
    const { channel, secret } = await this.commands.execute(new RotateChannelSecret(teamId, channelId, commandContext(request)));
    const response = { data: { ...presentChannel(toChannelDoc(channel)), secret } };
    return response;
  }

  @AdminOnly()
  @Get(':channelID/deliveries')
  @ApiOperation({ summary: "List a channel's deliveries", description: 'Newest first.' })
  @PageQueries()
  @ApiResponse({ status: 200, type: DeliveryListResponse })
  async deliveries(@Param('teamID') teamParam: string, @Param('channelID') channelParam: string, @Query() query: Record<string, unknown>) {
    const q = new QueryReader(query);
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.deliveries(pathId(teamParam, 'The team'), pathId(channelParam, 'The notification channel'), limit, cursor);
  }
}
