import { Module } from '@nestjs/common';
import { sloCommandHandlers } from './application/slo.commands.js';
import { SloReads } from './views/slos/queries.js';
import { SloWorkers } from './application/slo-workers.js';
import { SlosAdminController } from './http/slos-admin.controller.js';
import { SlosPublicController } from './http/slos-public.controller.js';

/** The slos context: SLO provisioning (application API), figures (Developer API), burn-rate alerts, metrics. */
@Module({
  controllers: [SlosAdminController, SlosPublicController],
  providers: [...sloCommandHandlers, SloReads, SloWorkers],
})
export class SlosModule {}
