import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { AutoIncidents } from './auto-incidents.js';
import type { CheckRecorder } from './check-recorder.js';
import { CHECK_RECORDER } from './tokens.js';

const REACTOR_ROLES = ['all', 'projector'];

@Injectable()
export class AlertingWorkers implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly autoIncidents: AutoIncidents;

  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    @Inject(CHECK_RECORDER) recorder: CheckRecorder,
  ) {
    this.autoIncidents = new AutoIncidents(platform, recorder);
  }

  onApplicationBootstrap(): void {
    if (REACTOR_ROLES.includes(this.platform.config.role)) this.autoIncidents.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.autoIncidents.stop();
  }
}
