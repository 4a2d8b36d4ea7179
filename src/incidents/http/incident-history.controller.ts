import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Problems } from '../../platform/http/problem.js';
import { QueryReader } from '../../platform/http/query.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { pathId } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { historyAsOf, owningTeam, readIncidentEvents } from '../application/history.js';

/** Application API for auditors (admin token): every event of an incident and its state as of a time. */
@ApiExcludeController()
@Controller('api/v2/teams')
export class IncidentHistoryController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @AdminOnly()
  @Get(':teamID/incidents/:incidentID/history')
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
