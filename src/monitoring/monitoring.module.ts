import { Module } from '@nestjs/common';

/** The monitoring context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({})
export class MonitoringModule {}
