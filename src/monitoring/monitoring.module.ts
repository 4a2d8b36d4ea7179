import { Module } from '@nestjs/common';
import { monitoringCommandHandlers } from './application/monitoring.commands.js';
import { CheckReads } from './application/check-reads.js';
import { MonitoringReads } from './views/monitoring/queries.js';
import { MonitoringAdminController } from './http/monitoring-admin.controller.js';
import { MonitoringPublicController } from './http/monitoring-public.controller.js';

/** The monitoring context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({
  controllers: [MonitoringAdminController, MonitoringPublicController],
  providers: [...monitoringCommandHandlers, MonitoringReads, CheckReads],
  exports: [MonitoringReads],
})
export class MonitoringModule {}
