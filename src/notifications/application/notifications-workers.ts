import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { DeliveryWorker } from './delivery-worker.js';
import { Senders } from './senders.js';

/** The delivery worker runs where processors run (roles all and projector, which have a runner). */
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
    // Hosted by the processor runner (its state and checkpoint where processors keep theirs).
    if (WORKER_ROLES.includes(this.platform.config.role)) await this.platform.runner?.host(this.worker);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker.stop();
    await this.senders.close();
  }
}
