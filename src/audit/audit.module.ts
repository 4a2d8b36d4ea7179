import { Module } from '@nestjs/common';
import { AuditVerificationWorker } from './application/verification-worker.js';
import { AuditController, AuditKeyController } from './http/audit.controller.js';

/** The audit context: verification of the hash chains (daily and on demand), the signed export, the routes. */
@Module({ controllers: [AuditController, AuditKeyController], providers: [AuditVerificationWorker] })
export class AuditModule {}
