import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { DeliveryWorker } from './delivery-worker.js';
import { Senders } from './senders.js';

/** The delivery worker runs where projections run (roles all and projector). */
const WORKER_ROLES = ['all', 'projector'];

@Injectable()
export class NotificationsWorkers implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly senders: Senders;
  readonly worker: DeliveryWorker;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    const { config } = platform;
    this.senders = new Senders({ blockPrivate: config.probeBlockPrivate, smtpUrl: config.smtpUrl, emailFrom: config.emailFrom });
    this.worker = new DeliveryWorker(platform, this.senders, { retryScheduleMs: config.notifyRetryScheduleMs ?? undefined });
  }

  async onApplicationBootstrap(): Promise<void> {
    if (WORKER_ROLES.includes(this.platform.config.role)) await this.worker.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker.stop();
    await this.senders.close();
  }
}
