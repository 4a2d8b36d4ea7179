import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Gauge } from 'prom-client';
import { PeriodicTask } from '../../platform/periodic-task.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { BURN_WINDOWS } from '../domain/events.js';
import { sloBurnReactor } from '../reactors/burn-alerts.js';
import { SloReads } from '../views/slos/queries.js';
import { repairSlos, type SloRepairResult } from './slo-repair.js';

/** The repair's first pass waits this long after start: a starting service first catches up its views (and short-lived test services never repair). */
const REPAIR_FIRST_DELAY_MS = 5 * 60_000;
const DAY_MS = 86_400_000;

export interface SloGaugeReading {
  slo: string;
  remaining: number | null;
  burns: Record<string, number | null>;
}

/**
 * Every live SLO's gauge values now. The counts go through analytics' GoodChecks, whose reads
 * run in slices of the event loop (analytics' Slices), so a scrape with many SLOs does not hold
 * the loop for the whole reading (bench `slo-gauges`).
 */
export async function readSloGauges(reads: Pick<SloReads, 'all' | 'present'>, now = Date.now()): Promise<SloGaugeReading[]> {
  const out: SloGaugeReading[] = [];
  for (const doc of await reads.all()) {
    const object = await reads.present(doc, now);
    const remaining = object.error_budget.remaining_percent === null ? null : object.error_budget.remaining_percent / 100;
    out.push({ slo: String(doc.slo_id), remaining, burns: object.burn_rates });
  }
  return out;
}

/**
 * Starts the burn-rate alert reactor on this process's processor runner (roles all and
 * projector have one) with the SLO repair pass (`repairSlos`: five minutes after start, then
 * daily; it appends nothing unless an earlier version left an SLO to repair, and says so at
 * warn), and, on the roles that serve the APIs (all, api), the SLO gauges of `/metrics`,
 * computed at scrape time (one reading per scrape for both gauges).
 */
@Injectable()
export class SloWorkers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly repairTask = new PeriodicTask(async () => void (await this.repair()), { firstDelayMs: REPAIR_FIRST_DELAY_MS, everyMs: DAY_MS });

  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    private readonly reads: SloReads,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.platform.config.role === 'all' || this.platform.config.role === 'api') this.watchSlos();
    if (!this.platform.runner) return;
    await this.platform.runner.run(sloBurnReactor(this.platform));
    this.repairTask.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.repairTask.stop();
  }

  /** One repair pass over every live SLO; failures are logged and retried at the next pass. */
  async repair(): Promise<SloRepairResult | null> {
    try {
      const result = await repairSlos(this.platform, await this.reads.all(), this.repairTask.stopping);
      if (result.endpointsDropped > 0 || result.projectsEmptied > 0) this.platform.logger.warn(result, 'SLOs repaired: deleted endpoints or empty projects an earlier version left');
      return result;
    } catch (error) {
      this.platform.logger.warn({ err: error }, 'SLO repair failed; next attempt in a day');
      return null;
    }
  }

  private watchSlos(): void {
    const registry = this.platform.metrics.registry;
    let reading: Promise<SloGaugeReading[]> | null = null;
    const refresh = () => (reading ??= readSloGauges(this.reads).finally(() => setImmediate(() => (reading = null))));
    const logger = this.platform.logger;
    new Gauge({
      name: 'monitor_slo_error_budget_remaining_ratio',
      help: 'Share of the SLO\'s error budget left over its window (1 = untouched, negative = exceeded); absent while the window holds no check.',
      labelNames: ['slo'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const s of await refresh()) if (s.remaining !== null) this.set({ slo: s.slo }, s.remaining);
        } catch (error) {
          logger.warn({ err: error }, 'metrics: SLO figures unavailable for this scrape');
        }
      },
    });
    new Gauge({
      name: 'monitor_slo_burn_rate',
      help: 'Rate at which the SLO burns its error budget over the window (1 = exactly the budget); absent while the window holds no check.',
      labelNames: ['slo', 'window'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const s of await refresh()) {
            for (const window of BURN_WINDOWS) {
              const value = s.burns[window];
              if (value !== null && value !== undefined) this.set({ slo: s.slo, window }, value);
            }
          }
        } catch (error) {
          logger.warn({ err: error }, 'metrics: SLO figures unavailable for this scrape');
        }
      },
    });
  }
}
