import { Module } from '@nestjs/common';
import { AlertingModule } from '../alerting/alerting.module.js';
import { PLATFORM, type Platform } from '../platform/platform.js';
import { ProbingWorkers } from './application/probing-workers.js';
import { HTTP_PROBER } from './application/tokens.js';
import { ProbingController } from './http/probing.controller.js';
import { createHttpProber } from './prober/http-prober.js';

/** The probing context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({
  imports: [AlertingModule],
  controllers: [ProbingController],
  providers: [
    {
      provide: HTTP_PROBER,
      inject: [PLATFORM],
      useFactory: (platform: Platform) => createHttpProber({ blockPrivate: platform.config.probeBlockPrivate }),
    },
    ProbingWorkers,
  ],
})
export class ProbingModule {}
