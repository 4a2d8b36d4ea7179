import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AlertStatusResponse } from './alert-status.dto.js';
import { Controller, Get, Inject, Param } from '@nestjs/common';
import { alertStatusView, initialState, stateFromStored } from '../domain/endpoint-alerts.js';
import { ParentSignals } from '../application/parent-signals.js';
import { alertStatusDoc } from '../views/alerting/queries.js';
import { DEFAULT_LATENCY_SETTINGS } from '../../monitoring/domain/endpoint-configuration.js';
import { ENDPOINT_PATH } from '../../monitoring/http/monitoring-paths.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { Problems } from '../../platform/http/problem.js';
import { TokenTeam } from '../../platform/http/token-team.js';
import { RequiresScope } from '../../platform/http/route-auth.js';
import { pathId } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';

/** Public API: the current alert state of one endpoint of the token's team (a deleted one is 404). */
@ApiTags('Alerting')
@ApiBearerAuth()
@Controller('api/public/v2/endpoints')
@PathResources(ENDPOINT_PATH)
export class AlertStatusController {
  private readonly parents: ParentSignals;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.parents = new ParentSignals(platform.events);
  }

  @RequiresScope('monitoring:read')
  @Get(':endpointID/alert-status')
  @ApiOperation({ summary: "An endpoint's alert status", description: 'Availability and latency signals, the latency baseline, the endpoints whose outage suppresses its failing checks, and its own state during maintenance.' })
  @ApiOkResponse({ type: AlertStatusResponse })
  async alertStatus(@Param('endpointID') endpointParam: string, @TokenTeam() teamId: number) {
    const endpointId = pathId(endpointParam, 'The endpoint');
    const doc = await alertStatusDoc(this.platform.reader, teamId, endpointId);
    if (!doc) throw Problems.notFound('The endpoint');
    // The view keeps no recent job ids and no windows of the endpoint's own (the status uses neither).
    const state = doc.state ? stateFromStored({ recentJobIds: [], availabilityFailures: [], latencyExceeded: [], ...doc.state }) : initialState();
    const settings = doc.settings ?? DEFAULT_LATENCY_SETTINGS;
    const [suppression, maintenance] = await Promise.all([this.parents.suppressingNow(endpointId), this.parents.maintenanceState(endpointId)]);
    return { data: { ...alertStatusView(state, { team_id: Number(doc.team_id), endpoint_id: endpointId }, settings), ...suppression, ...maintenance } };
  }
}
