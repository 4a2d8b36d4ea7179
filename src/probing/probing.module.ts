import { Module } from '@nestjs/common';
import { MonitoringModule } from '../monitoring/monitoring.module.js';
import { PLATFORM, type Platform } from '../platform/platform.js';
import { ProbingWorkers } from './application/probing-workers.js';
import { ProbeRecorder } from './application/probe-recorder.js';
import { CHECK_RECORDER, HTTP_PROBER } from './application/tokens.js';
import { ProbingController } from './http/probing.controller.js';
import { RegionsController } from './http/regions.controller.js';
import { createHttpProber } from './prober/http-prober.js';

/** The probing context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({
  imports: [MonitoringModule],
  controllers: [ProbingController, RegionsController],
  providers: [
    {
      provide: HTTP_PROBER,
      inject: [PLATFORM],
      useFactory: (platform: Platform) => createHttpProber({ blockPrivate: platform.config.probeBlockPrivate, region: platform.config.probeRegion }),
    },
    { provide: CHECK_RECORDER, inject: [PLATFORM], useFactory: (platform: Platform) => new ProbeRecorder(platform) },
    ProbingWorkers,
  ],
})
export class ProbingModule {}
