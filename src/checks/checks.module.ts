import { Module } from '@nestjs/common';
import { RetentionWorker } from './application/retention-worker.js';

/**
 * The checks context's Nest wiring: hourly retention. Its recorder is composed by the prober
 * (src/probing/application/probe-recorder.ts) with alerting's judge and monitoring's maintenance
 * coverage, so this context depends on nothing but the platform.
 */
@Module({
  providers: [RetentionWorker],
})
export class ChecksModule {}
