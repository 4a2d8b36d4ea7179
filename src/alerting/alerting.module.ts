import { Module } from '@nestjs/common';
import { PLATFORM, type Platform } from '../platform/platform.js';
import { AlertingWorkers } from './application/alerting-workers.js';
import { CheckRecorder } from './application/check-recorder.js';
import { CHECK_RECORDER } from './application/tokens.js';
import { AlertStatusController } from './http/alert-status.controller.js';

/** The alerting context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({
  controllers: [AlertStatusController],
  providers: [
    { provide: CHECK_RECORDER, inject: [PLATFORM], useFactory: (platform: Platform) => new CheckRecorder(platform) },
    AlertingWorkers,
  ],
  exports: [CHECK_RECORDER],
})
export class AlertingModule {}
