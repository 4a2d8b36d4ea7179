import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { PathResources } from '../../platform/http/path-resources.js';
import { QueryReader } from '../../platform/http/query.js';
import { RequiresScope } from '../../platform/http/route-auth.js';
import { TokenTeam } from '../../platform/http/token-team.js';
import { pathId } from '../../platform/http/validation.js';
import { SloReads } from '../views/slos/queries.js';
import { SLO_PATH } from './slo-path.js';
import { SloListResponse, SloResponse } from './slos.dto.js';

/** Developer API (scope analytics:read): the token's team's SLOs with their figures now. */
@ApiTags('SLOs')
@ApiBearerAuth()
@Controller('api/public/v2/slos')
export class SlosPublicController {
  constructor(private readonly reads: SloReads) {}

  @RequiresScope('analytics:read')
  @Get()
  @ApiOperation({ summary: 'List SLOs', description: 'Ordered by id ascending.' })
  @ApiQuery({ name: 'limit', required: false, type: 'integer', minimum: 1, maximum: 100, description: '1 through 100; default 50.' })
  @ApiQuery({ name: 'cursor', required: false, type: String, description: 'pagination.next_cursor of the previous page.' })
  @ApiOkResponse({ type: SloListResponse })
  async list(@Query() query: Record<string, unknown>, @TokenTeam() teamId: number) {
    const q = new QueryReader(query ?? {});
    const { limit, cursor } = q.page();
    q.done();
    return this.reads.list(teamId, limit, cursor, 'public');
  }

  @RequiresScope('analytics:read')
  @Get(':sloID')
  @PathResources(SLO_PATH)
  @ApiOperation({ summary: 'One SLO: good and total checks, error budget, burn rates, alerts, status' })
  @ApiParam({ name: 'sloID', type: Number })
  @ApiOkResponse({ type: SloResponse })
  @ApiResponse({ status: 404, description: 'No such SLO in the token\'s team.' })
  async one(@Param('sloID') sloParam: string, @TokenTeam() teamId: number) {
    return { data: await this.reads.one(teamId, pathId(sloParam, 'The SLO')) };
  }
}
