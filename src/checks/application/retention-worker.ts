import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PeriodicTask } from '../../platform/periodic-task.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { CheckRetention, RetentionBusyError, type CarriedOverTypes } from './retention.js';

/** Which other contexts' old events in a check stream retention may cut (see CarriedOverTypes). */
export const CARRIED_OVER_TYPES = Symbol('CARRIED_OVER_TYPES');

const RETENTION_ROLES = ['all', 'projector'];
const HOUR_MS = 3_600_000;
/** The first pass waits this long after start: a starting service first catches up its views (and short-lived test services never prune). */
const FIRST_PASS_DELAY_MS = 5 * 60_000;

/**
 * Applies check retention every hour in the roles that run projections (all, projector). The
 * retention lease in the coordination store lets one process at a time do it; the others skip
 * the hour. Each pass also gives freed pages back to the file system and drops rebuild
 * generations left behind by a crash or a restart.
 */
@Injectable()
export class RetentionWorker implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly task = new PeriodicTask(() => this.pass(), { firstDelayMs: FIRST_PASS_DELAY_MS, everyMs: HOUR_MS });

  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    @Inject(CARRIED_OVER_TYPES) private readonly carriedOver: CarriedOverTypes,
  ) {}

  onApplicationBootstrap(): void {
    if (!RETENTION_ROLES.includes(this.platform.config.role) || !this.platform.runner) return;
    this.task.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.task.stop();
  }

  /** One hourly pass; failures are logged and retried next hour. */
  async pass(now = Date.now()): Promise<void> {
    const { platform } = this;
    const retention = new CheckRetention(platform.events, { days: platform.config.checkRetentionDays, carriedOver: this.carriedOver, storedEvents: platform.storedEvents });
    try {
      await platform.views.reclaimSpace?.();
      const dropped = (await platform.runner?.dropStaleGenerations()) ?? [];
      if (dropped.length > 0) platform.logger.info({ dropped }, 'dropped stale projection generations');
      const result = await retention.apply(now, { coordination: platform.coordination, owner: platform.instanceId, shouldStop: this.task.stopping });
      if (result.summaries > 0 || result.removed > 0) platform.logger.info(result, 'check retention applied');
    } catch (error) {
      if (error instanceof RetentionBusyError) return;
      platform.logger.warn({ err: error }, 'check retention failed; next attempt in an hour');
    }
  }
}
