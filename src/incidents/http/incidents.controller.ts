import { createHash, randomUUID } from 'node:crypto';
import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Req } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { actorOf, type CommandContext } from '../../platform/es/command-context.js';
import { Problems } from '../../platform/http/problem.js';
import { QueryReader } from '../../platform/http/query.js';
import { RequiresScope } from '../../platform/http/route-auth.js';
import { TokenTeam } from '../../platform/http/token-team.js';
import { checkBody, pathId } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { SEVERITIES } from '../domain/events.js';
import { CreateIncident, resolveStatus, UpdateIncidentDetails, UpdateIncidentStatus } from '../application/incident.commands.js';
import { IncidentQueries } from '../views/incidents/queries.js';
import { teamStatuses } from '../application/lookups.js';
import { MergeIncidents } from '../application/merge.command.js';
import { AddCheckpoint, AddComment, DeleteComment, EditCheckpoint, EditComment } from '../application/notes.commands.js';
import { AddCheckpointBody, AddCommentBody, CreateIncidentBody, EditCheckpointBody, EditCommentBody, MergeIncidentsBody, UpdateIncidentBody, UpdateIncidentStatusBody } from './incident.dto.js';
import { CheckpointResponse, CommentResponse, IncidentListResponse, IncidentResponse, IncidentStatusListResponse, LinkedCheckListResponse } from './incident-responses.dto.js';

function contextOf(request: FastifyRequest): CommandContext {
  return { actor: actorOf(request.principal), requestId: String(request.id) };
}

/**
 * Names a merge on the marks it leaves on its sources: derived from the (team-scoped)
 * Idempotency-Key when one is sent, so a retry of a merge that died half-way finishes it;
 * unique otherwise. Hashed: the key is the client's, the id lands in the event log.
 */
function mergeIdOf(request: FastifyRequest): string {
  const key = request.idempotencyKey;
  return key ? `key:${createHash('sha256').update(key).digest('hex').slice(0, 32)}` : `request:${randomUUID()}`;
}

const incidentId = (value: string) => pathId(value, 'The incident');
const READ = () => RequiresScope('incidents:read');
const WRITE = () => RequiresScope('incidents:write', { editor: true });
const MERGED = ApiResponse({ status: 409, description: 'incident_merged: the incident was merged into another and refuses writes.' });
const IDEMPOTENCY = ApiHeader({ name: 'Idempotency-Key', required: false, description: '1-255 printable ASCII characters; replays the first response for 24 hours.' });

/**
 * Public Developer API: incidents (spec: Incidents). Bodies are checked here, at the edge, against
 * their DTOs; the command answers in the decided order: the incident (404), merged (409), the
 * comment or checkpoint (404), then every body error together with the lookups' (one 400).
 */
@ApiTags('Incidents')
@ApiBearerAuth()
@Controller('api/public/v2')
export class IncidentsController {
  private readonly queries: IncidentQueries;

  constructor(
    private readonly commands: CommandBus,
    @Inject(PLATFORM) private readonly platform: Platform,
  ) {
    this.queries = new IncidentQueries(platform);
  }

  @READ()
  @Get('incidents')
  @ApiOperation({ summary: 'List incidents, id descending' })
  @ApiQuery({ name: 'project_id', required: false, type: 'integer', minimum: 1 })
  @ApiQuery({ name: 'endpoint_id', required: false, type: 'integer', minimum: 1 })
  @ApiQuery({ name: 'status_id', required: false, type: 'integer', minimum: 1 })
  @ApiQuery({ name: 'status', required: false, type: String, description: 'Exact status name (case-sensitive); not with status_id.' })
  @ApiQuery({ name: 'state', required: false, enum: ['open', 'resolved'] })
  @ApiQuery({ name: 'severity', required: false, enum: SEVERITIES })
  @ApiQuery({ name: 'type', required: false, type: String, maxLength: 80 })
  @ApiQuery({ name: 'source', required: false, enum: ['automatic', 'manual'] })
  @ApiQuery({ name: 'from', required: false, type: String, format: 'date-time', description: 'RFC 3339; last_error_at at or after.' })
  @ApiQuery({ name: 'to', required: false, type: String, format: 'date-time', description: 'RFC 3339; last_error_at before.' })
  @ApiQuery({ name: 'limit', required: false, type: 'integer', minimum: 1, maximum: 100, description: '1-100, default 50.' })
  @ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page; bound to the same filters.' })
  @ApiOkResponse({ type: IncidentListResponse, description: 'Incident summaries, id descending.' })
  async list(@TokenTeam() team: number, @Query() query: Record<string, unknown>, @Req() request: FastifyRequest) {
    const q = new QueryReader(query);
    const filters = {
      project_id: q.integer('project_id', { min: 1 }),
      endpoint_id: q.integer('endpoint_id', { min: 1 }),
      status_id: q.integer('status_id', { min: 1 }),
      state: q.oneOf('state', ['open', 'resolved'] as const),
      severity: q.oneOf('severity', SEVERITIES),
      type: q.string('type', { maxLength: 80 }),
      source: q.oneOf('source', ['automatic', 'manual'] as const),
      from: q.timestamp('from'),
      to: q.timestamp('to'),
    };
    // The contract: a status is referenced by its id or its exact name, not both.
    const statusName = q.string('status');
    if (statusName !== undefined && filters.status_id !== undefined) q.fail('status', 'conflict', 'use either status or status_id, not both');
    const { limit, cursor } = q.page();
    q.done();
    if (statusName !== undefined) filters.status_id = await this.statusIdNamed(team, statusName, request);
    const defined = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined));
    return this.queries.list(team, defined, limit, cursor);
  }

  /** The id of the team's status named exactly `name`; 0 (no status has it) when none is, so the list is empty as for an unknown status_id. */
  private async statusIdNamed(team: number, name: string, request: FastifyRequest): Promise<number> {
    return resolveStatus(await teamStatuses(this.platform, team, request), { status: name })?.id ?? 0;
  }

  @READ()
  @Get('incidents/:incidentID')
  @ApiOperation({ summary: 'Incident detail' })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiOkResponse({ type: IncidentResponse, description: '`checks` holds the newest 100 linked checks (oldest first); `checks_total` counts them all.' })
  async get(@TokenTeam() team: number, @Param('incidentID') id: string) {
    const detail = await this.queries.detail(team, incidentId(id));
    if (!detail) throw Problems.notFound('The incident');
    return { data: detail };
  }

  @READ()
  @Get('incidents/:incidentID/checks')
  @ApiOperation({ summary: "Every check linked to the incident, newest first (the detail's `checks` holds only the newest 100)" })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiQuery({ name: 'limit', required: false, type: 'integer', minimum: 1, maximum: 100, description: '1-100, default 50.' })
  @ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page.' })
  @ApiOkResponse({ type: LinkedCheckListResponse, description: 'Linked checks, checked_at descending then id descending.' })
  async checks(@TokenTeam() team: number, @Param('incidentID') id: string, @Query() query: Record<string, unknown>) {
    // 404 before 400: the incident is looked up before the query is read.
    const incident = await this.queries.head(team, incidentId(id));
    if (!incident) throw Problems.notFound('The incident');
    const q = new QueryReader(query);
    const { limit, cursor } = q.page();
    q.done();
    return this.queries.checks(incident, limit, cursor);
  }

  @READ()
  @Get('incident-statuses')
  @ApiOperation({ summary: "The team's incident statuses, id ascending" })
  @ApiOkResponse({ type: IncidentStatusListResponse })
  async statuses(@TokenTeam() team: number, @Req() request: FastifyRequest) {
    return { data: await teamStatuses(this.platform, team, request) };
  }

  @WRITE()
  @Post('incidents')
  @HttpCode(201)
  @IDEMPOTENCY
  @ApiBody({ type: CreateIncidentBody })
  @ApiOperation({ summary: 'Create an incident' })
  @ApiResponse({ status: 201, type: IncidentResponse, description: 'The complete incident detail.' })
  @ApiResponse({ status: 400, description: 'Also: a project, endpoint or status that is not the team\'s (not_found), endpoints of another project (conflict).' })
  async create(@TokenTeam() team: number, @Body() body: unknown, @Req() request: FastifyRequest) {
    return { data: await this.commands.execute(new CreateIncident(team, checkBody(CreateIncidentBody, body), contextOf(request), request)) };
  }

  @WRITE()
  @Patch('incidents/:incidentID')
  @ApiBody({ type: UpdateIncidentBody })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiOperation({ summary: 'Update incident details' })
  @ApiOkResponse({ type: IncidentResponse, description: 'The updated incident detail.' })
  @MERGED
  async update(@TokenTeam() team: number, @Param('incidentID') id: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    return { data: await this.commands.execute(new UpdateIncidentDetails(team, incidentId(id), checkBody(UpdateIncidentBody, body), contextOf(request), request)) };
  }

  @WRITE()
  @Patch('incidents/:incidentID/status')
  @ApiBody({ type: UpdateIncidentStatusBody })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiOperation({ summary: 'Update incident status or resolution' })
  @ApiOkResponse({ type: IncidentResponse, description: 'The updated incident detail.' })
  @MERGED
  async updateStatus(@TokenTeam() team: number, @Param('incidentID') id: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    return { data: await this.commands.execute(new UpdateIncidentStatus(team, incidentId(id), checkBody(UpdateIncidentStatusBody, body), contextOf(request), request)) };
  }

  @WRITE()
  @Post('incidents/:incidentID/merge')
  @HttpCode(200)
  @IDEMPOTENCY
  @ApiBody({ type: MergeIncidentsBody })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiOperation({ summary: 'Merge source incidents into this one' })
  @ApiOkResponse({ type: IncidentResponse, description: 'The complete target incident detail.' })
  @MERGED
  async merge(@TokenTeam() team: number, @Param('incidentID') id: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const checked = checkBody(MergeIncidentsBody, body);
    return { data: await this.commands.execute(new MergeIncidents(team, incidentId(id), checked, contextOf(request), mergeIdOf(request))) };
  }

  @WRITE()
  @Post('incidents/:incidentID/comments')
  @HttpCode(201)
  @IDEMPOTENCY
  @ApiBody({ type: AddCommentBody })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiOperation({ summary: 'Add a private comment' })
  @ApiResponse({ status: 201, type: CommentResponse, description: 'The comment.' })
  @MERGED
  async addComment(@TokenTeam() team: number, @Param('incidentID') id: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    return { data: await this.commands.execute(new AddComment(team, incidentId(id), checkBody(AddCommentBody, body), contextOf(request))) };
  }

  @WRITE()
  @Patch('incidents/:incidentID/comments/:commentID')
  @ApiBody({ type: EditCommentBody })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiParam({ name: 'commentID', type: Number })
  @ApiOperation({ summary: 'Pin, unpin or edit a comment' })
  @ApiOkResponse({ type: CommentResponse, description: 'The updated comment.' })
  @MERGED
  async updateComment(@TokenTeam() team: number, @Param('incidentID') id: string, @Param('commentID') commentId: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const checked = checkBody(EditCommentBody, body);
    return { data: await this.commands.execute(new EditComment(team, incidentId(id), pathId(commentId, 'The comment'), checked, contextOf(request))) };
  }

  @WRITE()
  @Delete('incidents/:incidentID/comments/:commentID')
  @HttpCode(204)
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiParam({ name: 'commentID', type: Number })
  @ApiOperation({ summary: 'Delete a comment' })
  @ApiResponse({ status: 204, description: 'Deleted; no body.' })
  @MERGED
  async deleteComment(@TokenTeam() team: number, @Param('incidentID') id: string, @Param('commentID') commentId: string, @Req() request: FastifyRequest): Promise<void> {
    await this.commands.execute(new DeleteComment(team, incidentId(id), pathId(commentId, 'The comment'), contextOf(request)));
  }

  @WRITE()
  @Post('incidents/:incidentID/checkpoints')
  @HttpCode(201)
  @IDEMPOTENCY
  @ApiBody({ type: AddCheckpointBody })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiOperation({ summary: 'Post a status-page checkpoint' })
  @ApiResponse({ status: 201, type: CheckpointResponse, description: 'The checkpoint.' })
  @MERGED
  async addCheckpoint(@TokenTeam() team: number, @Param('incidentID') id: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    return { data: await this.commands.execute(new AddCheckpoint(team, incidentId(id), checkBody(AddCheckpointBody, body), contextOf(request))) };
  }

  @WRITE()
  @Patch('incidents/:incidentID/checkpoints/:checkpointID')
  @ApiBody({ type: EditCheckpointBody })
  @ApiParam({ name: 'incidentID', type: Number })
  @ApiParam({ name: 'checkpointID', type: Number })
  @ApiOperation({ summary: 'Update a checkpoint' })
  @ApiOkResponse({ type: CheckpointResponse, description: 'The updated checkpoint.' })
  @MERGED
  async updateCheckpoint(@TokenTeam() team: number, @Param('incidentID') id: string, @Param('checkpointID') checkpointId: string, @Body() body: unknown, @Req() request: FastifyRequest) {
    const checked = checkBody(EditCheckpointBody, body);
    return { data: await this.commands.execute(new EditCheckpoint(team, incidentId(id), pathId(checkpointId, 'The checkpoint'), checked, contextOf(request))) };
  }
}
