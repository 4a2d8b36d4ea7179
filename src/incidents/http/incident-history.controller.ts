import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiQuery, ApiTags } from '@nestjs/swagger';
import { Problems } from '../../platform/http/problem.js';
import { QueryReader } from '../../platform/http/query.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { pathId } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { historyAsOf, owningTeam, readIncidentEvents } from '../application/history.js';
import { DataResponse } from '../../platform/http/envelope.dto.js';

class HistoryEventDto {
  @ApiProperty({ type: String, description: 'The event type, e.g. IncidentOpened, CommentAdded.' }) type!: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Position in the incident stream.' }) revision!: number;
  @ApiProperty({ type: String, format: 'date-time', description: 'When it happened.' }) at!: string;
  @ApiProperty({ type: String, format: 'date-time', description: 'When the log recorded it.' }) recorded_at!: string;
  @ApiProperty({ type: String, nullable: true, description: 'token:<id>, admin or system:<component>.' }) actor!: string | null;
  @ApiProperty({ type: String, nullable: true }) request_id!: string | null;
  @ApiProperty({ type: String, description: 'One sentence.' }) summary!: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'object', properties: { from: {}, to: {} } }, description: 'Field -> {from, to}; no from for a creation.' }) changes!: Record<string, unknown>;
}

class IncidentHistoryDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) incident_id!: number;
  @ApiProperty({ type: [HistoryEventDto], description: 'Oldest first, up to `at` when given; each with what it changed.' }) events!: HistoryEventDto[];
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true, description: 'The incident as of `at` (now when absent).' }) state!: Record<string, unknown> | null;
}

class IncidentHistoryResponse extends DataResponse(IncidentHistoryDto) {}

/** Application API for auditors (admin token): every event of an incident and its state as of a time. */
@ApiTags('Auditing')
@ApiBearerAuth()
@Controller('api/v2/teams')
export class IncidentHistoryController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @AdminOnly()
  @Get(':teamID/incidents/:incidentID/history')
  @ApiOperation({ summary: "An incident's events and its state at a time", description: 'For auditors: every event with its time, actor and request id.' })
  @ApiQuery({ name: 'at', required: false, type: String, format: 'date-time', description: 'RFC 3339: the state as of this time.' })
  @ApiOkResponse({ type: IncidentHistoryResponse })
  async history(@Param('teamID') team: string, @Param('incidentID') incident: string, @Query() query: Record<string, unknown>) {
    const teamId = pathId(team, 'The team');
    const incidentId = pathId(incident, 'The incident');
    const recorded = await readIncidentEvents(this.platform.events, incidentId);
    if (owningTeam(recorded) !== teamId) throw Problems.notFound('The incident');
    // Query validation after the path resource (api-decisions: order of checks).
    const q = new QueryReader(query);
    const at = q.timestamp('at');
    q.done();
    const history = historyAsOf(incidentId, recorded, at)!;
    return { data: { incident_id: history.incident_id, events: history.events, state: history.state } };
  }
}
