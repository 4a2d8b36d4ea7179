import { Module } from '@nestjs/common';
import { MonitoringModule } from '../monitoring/monitoring.module.js';
import { PublicStatusReads } from './application/public-status.js';
import { statusPageCommandHandlers } from './application/status-page.commands.js';
import { StatusPageReads } from './views/status-pages/queries.js';
import { StatusPagesAdminController } from './http/status-pages-admin.controller.js';
import { StatusPagesPublicRoutes } from './http/status-pages-public.routes.js';

/** The status-pages context: provisioning (application API) and the public pages, JSON and feeds. */
@Module({
  imports: [MonitoringModule],
  controllers: [StatusPagesAdminController],
  providers: [...statusPageCommandHandlers, StatusPageReads, PublicStatusReads, StatusPagesPublicRoutes],
})
export class StatusPagesModule {}
