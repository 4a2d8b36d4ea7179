import { Controller, HttpCode, Inject, Param, Post, Req } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { MonitoringReads } from '../../monitoring/views/monitoring/queries.js';
import { CheckResponse, EndpointResponse } from '../../monitoring/http/public.dto.js';
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { CHECK_RECORDER } from '../application/tokens.js';
import type { ProbeRecorder } from '../application/probe-recorder.js';
import { toLinkedCheck } from '../../incidents/domain/events.js';
import { actorOf } from '../../platform/es/command-context.js';
import { recordDestinationVerified } from '../application/destination-verification.js';
import { Problems } from '../../platform/http/problem.js';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { pathId } from '../../platform/http/validation.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { verificationUrl, type EndpointSnapshot } from '../../monitoring/domain/endpoint-snapshot.js';
import type { HttpProber } from '../prober/http-prober.js';
import { HTTP_PROBER } from '../application/tokens.js';
import { createdAt } from '../../platform/http/http-conventions.js';

/** Application API (admin token): run a check now, verify an endpoint's destination. */
@ApiTags('Probing')
@ApiBearerAuth()
@Controller('api/v2/teams/:teamID/endpoints/:endpointID')
export class ProbingController {
  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    @Inject(CHECK_RECORDER) private readonly recorder: ProbeRecorder,
    @Inject(HTTP_PROBER) private readonly prober: HttpProber,
    private readonly reads: MonitoringReads,
  ) {}

  @AdminOnly()
  @Post('checks')
  @HttpCode(201)
  @ApiOperation({ summary: 'Run a check now', description: 'A manual check; it never changes alert signals.' })
  @ApiResponse({ status: 201, type: CheckResponse })
  @ApiResponse({ status: 409, description: 'destination_not_verified.' })
  async runCheck(@Param('teamID') teamParam: string, @Param('endpointID') endpointParam: string, @Req() request: FastifyRequest) {
    const endpoint = await this.endpointOf(teamParam, endpointParam);
    if (!endpoint.destination_verified) {
      throw Problems.conflict('destination_not_verified', 'Verify the endpoint destination before checking it.');
    }
    const outcome = await this.prober.probe(endpoint.configuration);
    const result = await this.recorder.record({ jobId: `manual:${randomUUID()}`, source: 'manual', endpoint, outcome, region: this.platform.config.probeRegion });
    if (!result.check) throw Problems.internal();
    await this.platform.freshness.require({ append: result.append, appended: result.events });
    const check = toLinkedCheck(result.check);
    createdAt(request, `/api/public/v2/endpoints/${endpoint.endpoint_id}/checks/${check.id}`);
    return { data: check };
  }

  @AdminOnly()
  @Post('verify-destination')
  @HttpCode(200)
  @ApiOperation({ summary: "Verify the endpoint's destination", description: 'verification_url must answer 2xx with verification_token as its trimmed body.' })
  @ApiOkResponse({ type: EndpointResponse })
  @ApiResponse({ status: 422, description: 'verification_failed: the reason is in detail.' })
  async verifyDestination(@Param('teamID') teamParam: string, @Param('endpointID') endpointParam: string, @Req() request: FastifyRequest) {
    const endpoint = await this.endpointOf(teamParam, endpointParam);
    const url = verificationUrl(endpoint);
    if (url === null) throw Problems.unprocessable('verification_failed', 'The endpoint URL has no host to verify.');
    const verdict = await this.prober.fetchVerification(url, endpoint.verification_token);
    const logged = { team_id: endpoint.team_id, endpoint_id: endpoint.endpoint_id, request_id: String(request.id) };
    if (!verdict.ok) {
      this.platform.logger.info({ ...logged, reason: verdict.reason }, 'endpoint failed destination verification');
      throw Problems.unprocessable('verification_failed', `Destination verification failed: ${verdict.reason}`);
    }
    const context = { actor: actorOf(request.principal), requestId: String(request.id) };
    const { endpoint: verified, written } = await recordDestinationVerified(this.platform.events, this.recorder.endpoints, endpoint, context);
    if (written.append) this.platform.logger.info(logged, 'endpoint destination verified');
    // The endpoint as every other route presents it (coverage included), once the views show the write.
    await this.platform.freshness.require(written);
    return { data: await this.reads.endpoint(verified.team_id, verified.endpoint_id) };
  }

  private async endpointOf(teamParam: string, endpointParam: string): Promise<EndpointSnapshot> {
    const teamId = pathId(teamParam, 'The team');
    const endpointId = pathId(endpointParam, 'The endpoint');
    const endpoint = await this.recorder.loadEndpoint(endpointId);
    if (!endpoint || endpoint.team_id !== teamId) throw Problems.notFound('The endpoint');
    return endpoint;
  }
}
