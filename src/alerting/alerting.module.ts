import { Module } from '@nestjs/common';
import { AlertingWorkers } from './application/alerting-workers.js';
import { AlertStatusController } from './http/alert-status.controller.js';

/** The alerting context's Nest wiring: the alert-status route and the automatic-incident reactor. */
@Module({
  controllers: [AlertStatusController],
  providers: [AlertingWorkers],
})
export class AlertingModule {}
