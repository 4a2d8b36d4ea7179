import { Module } from '@nestjs/common';

/** The incidents context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({})
export class IncidentsModule {}
