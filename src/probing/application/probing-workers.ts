import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CHECK_RECORDER } from './tokens.js';
import type { ProbeRecorder } from './probe-recorder.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import type { HttpProber } from '../prober/http-prober.js';
import { DEFAULT_PROBER_OPTIONS, ProberWorker } from './prober-worker.js';
import { Scheduler } from './scheduler.js';
import { HTTP_PROBER } from './tokens.js';

const PROBER_ROLES = ['all', 'prober'];
const SCHEDULER_ROLES = ['all', 'scheduler'];

/** Starts the prober worker and the scheduler in the roles that run them. */
@Injectable()
export class ProbingWorkers implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly worker: ProberWorker;
  readonly scheduler: Scheduler;

  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    @Inject(CHECK_RECORDER) recorder: ProbeRecorder,
    @Inject(HTTP_PROBER) private readonly prober: HttpProber,
  ) {
    this.worker = new ProberWorker(platform, recorder, prober, { ...DEFAULT_PROBER_OPTIONS, maxInFlight: platform.config.proberMaxInFlight });
    this.scheduler = new Scheduler(platform);
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.platform.transport) return;
    if (PROBER_ROLES.includes(this.platform.config.role)) await this.worker.start();
    if (SCHEDULER_ROLES.includes(this.platform.config.role)) this.scheduler.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.scheduler.stop();
    await this.worker.stop();
    await this.prober.close();
  }
}
