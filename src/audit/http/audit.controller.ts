import { Controller, Get, Inject, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { PathResources } from '../../platform/http/path-resources.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { TEAM_PATH } from '../../tenancy/http/team-path.js';
import { pathId } from '../../platform/http/validation.js';
import { verifyHistory } from '../application/verify.js';

class BrokenStreamDto {
  @ApiProperty({ type: String, example: 'incident-42' }) stream!: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'The first revision of the stream that does not verify.' }) revision!: number;
  @ApiProperty({ type: String, enum: ['missing', 'altered', 'reordered'] }) problem!: string;
}

class AuditVerificationDto {
  @ApiProperty({ type: Boolean, description: "Every chain of the team's streams holds." }) intact!: boolean;
  @ApiProperty({ type: 'integer', minimum: 0 }) streams_checked!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) events_checked!: number;
  @ApiProperty({ type: [BrokenStreamDto] }) broken!: BrokenStreamDto[];
}

class AuditVerificationResponse {
  @ApiProperty({ type: AuditVerificationDto }) data!: AuditVerificationDto;
}

/** Application API for auditors (admin token): the team's hash chains walked now (docs/audit.md). */
@ApiTags('Auditing')
@ApiBearerAuth()
@Controller('api/v2/teams')
@PathResources(TEAM_PATH)
export class AuditController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @AdminOnly()
  @Get(':teamID/audit/verify')
  @ApiOperation({
    summary: "Verify the hash chains of the team's streams",
    description: 'Walks every stream holding an event of the team, as stored, and names the first revision of each broken one (docs/audit.md).',
  })
  @ApiOkResponse({ type: AuditVerificationResponse })
  async verify(@Param('teamID') team: string) {
    const report = await verifyHistory(this.platform.storedEvents, { teamId: pathId(team, 'The team') });
    return {
      data: {
        intact: report.intact,
        streams_checked: report.streams_checked,
        events_checked: report.events_checked,
        broken: report.broken.map(({ stream, revision, problem }) => ({ stream, revision, problem })),
      },
    };
  }
}
