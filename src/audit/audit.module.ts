import { Module } from '@nestjs/common';
import { AuditController, AuditKeyController } from './http/audit.controller.js';

/** The audit context: the hash chain's rules (domain), its verification (application), the route. */
@Module({ controllers: [AuditController, AuditKeyController] })
export class AuditModule {}
