import { type DynamicModule, Module } from '@nestjs/common';
import { PLATFORM, type Platform } from '../platform/platform.js';
import type { CarriedOverTypes } from './application/retention.js';
import { CARRIED_OVER_TYPES, RetentionWorker } from './application/retention-worker.js';

/**
 * The checks context's Nest wiring: hourly retention. Its recorder is composed by the prober
 * (src/probing/application/probe-recorder.ts) with alerting's judge and monitoring's maintenance
 * coverage, and the composition root says which other contexts' old events retention may cut
 * (`carriedOver`), so this context depends on nothing but the platform.
 */
@Module({})
export class ChecksModule {
  static forRoot(carriedOver: (platform: Platform) => CarriedOverTypes): DynamicModule {
    return {
      module: ChecksModule,
      providers: [{ provide: CARRIED_OVER_TYPES, inject: [PLATFORM], useFactory: carriedOver }, RetentionWorker],
    };
  }
}
