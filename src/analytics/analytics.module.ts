import { Module } from '@nestjs/common';

/** The analytics context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({})
export class AnalyticsModule {}
