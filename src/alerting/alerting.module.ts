import { Module } from '@nestjs/common';

/** The alerting context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({})
export class AlertingModule {}
