import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { autoIncidentsReactor } from '../reactors/auto-incidents.js';

/**
 * Starts the automatic-incident reactor on this process's processor runner (roles all and
 * projector have one); the runner stops it with the projections.
 */
@Injectable()
export class AlertingWorkers implements OnApplicationBootstrap {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.platform.runner?.run(autoIncidentsReactor(this.platform));
  }
}
