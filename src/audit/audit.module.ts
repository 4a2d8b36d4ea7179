import { Module } from '@nestjs/common';
import { AuditController } from './http/audit.controller.js';

/** The audit context: the hash chain's rules (domain), its verification (application), the route. */
@Module({ controllers: [AuditController] })
export class AuditModule {}
