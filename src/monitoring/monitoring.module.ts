import { Module } from '@nestjs/common';
import { monitoringCommandHandlers } from './application/monitoring.commands.js';
import { MonitoringReads } from './application/monitoring.reads.js';
import { MonitoringAdminController } from './http/monitoring-admin.controller.js';
import { MonitoringPublicController } from './http/monitoring-public.controller.js';

/** The monitoring context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({
  controllers: [MonitoringAdminController, MonitoringPublicController],
  providers: [...monitoringCommandHandlers, MonitoringReads],
  exports: [MonitoringReads],
})
export class MonitoringModule {}
