import { Module } from '@nestjs/common';
import { AnalyticsController } from './http/analytics.controller.js';

/** The analytics context's Nest wiring: controllers, command/query handlers, background workers. */
@Module({ controllers: [AnalyticsController] })
export class AnalyticsModule {}
