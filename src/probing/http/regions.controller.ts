import { Controller, Get, Inject } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { AdminOnly } from '../../platform/http/route-auth.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { summarizeRegions } from '../domain/regions.js';
import { scheduleRows } from '../views/probing/queries.js';

class RegionDto {
  @ApiProperty({ type: String, example: 'eu-west' }) name!: string;
  @ApiProperty({ type: 'integer', description: 'Prober processes of the region running now (announcement renewed within twice its lease period).' }) probers!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: "The latest announcement of one of the region's probers; null if none was seen." }) last_seen_at!: string | null;
  @ApiProperty({ type: 'integer', description: 'Endpoints whose regions name it.' }) endpoints!: number;
  @ApiProperty({ type: String, nullable: true, description: 'Set when endpoints name the region and no prober serves it.' }) warning!: string | null;
}

class RegionListResponse {
  @ApiProperty({ type: [RegionDto] }) data!: RegionDto[];
}

/** Application API (admin token): the probe regions, their probers and the regions endpoints name. */
@ApiTags('Probing')
@ApiBearerAuth()
@Controller('api/v2/regions')
export class RegionsController {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  @AdminOnly()
  @Get()
  @ApiOperation({
    summary: 'List probe regions',
    description: 'Regions with a prober (announced while it runs) or named by an endpoint, by name. A region endpoints name and no prober serves carries a warning.',
  })
  @ApiOkResponse({ type: RegionListResponse })
  async listRegions() {
    const [leases, rows] = await Promise.all([
      this.platform.coordination.listLeases(),
      scheduleRows(this.platform.reader),
    ]);
    return { data: summarizeRegions(leases, rows.map((row) => row.snapshot?.configuration?.regions ?? []), Date.now()) };
  }
}
