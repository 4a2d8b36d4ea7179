import { Module } from '@nestjs/common';

/** The probing context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({})
export class ProbingModule {}
