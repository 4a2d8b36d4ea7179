import { GoodChecks, type GoodCheckScope } from '../../analytics/application/good-checks.js';
import { ViewAnalyticsFacts } from '../../analytics/views/endpoints/queries.js';
import { retentionHorizon } from '../../checks/domain/check-summary.js';
import type { Platform } from '../../platform/platform.js';
import { DAY_MS, WINDOW_MS, figuresOf, type Counts, type SloFigures } from '../domain/budget.js';
import { BURN_WINDOWS, type BurnWindow } from '../domain/events.js';
import type { SloDoc } from '../views/slos/view.js';

export type SloDefinition = Pick<SloDoc, 'endpoint_ids' | 'project_id' | 'latency_threshold_ms' | 'window_days' | 'objective_percent'>;

export function scopeOf(slo: Pick<SloDoc, 'endpoint_ids' | 'project_id'>): GoodCheckScope {
  return slo.project_id !== null ? { kind: 'project', ids: [slo.project_id] } : { kind: 'endpoint', ids: slo.endpoint_ids ?? [] };
}

/**
 * Counts an SLO's good and total checks through analytics (`GoodChecks`: the rollups and raw
 * rows of the analytics views, under the retention horizon's rule), over its window and the
 * burn-rate windows, all ending at `now`.
 */
export class SloCounter {
  constructor(private readonly good: GoodChecks) {}

  /** Over the platform's analytics views (active generation) and retention horizon. */
  static of(platform: Platform): SloCounter {
    const facts = new ViewAnalyticsFacts(platform.reader, platform.views);
    const retentionDays = platform.config.checkRetentionDays;
    return new SloCounter(new GoodChecks(platform.views, () => facts.collections(), { rawHorizon: () => retentionHorizon(Date.now(), retentionDays) }));
  }

  async count(slo: SloDefinition, from: number, to: number): Promise<Counts> {
    return this.good.count(scopeOf(slo), { from, to }, slo.latency_threshold_ms);
  }

  async burnCounts(slo: SloDefinition, now: number, windows: readonly BurnWindow[]): Promise<Partial<Record<BurnWindow, Counts>>> {
    const counts = await Promise.all(windows.map((w) => this.count(slo, now - WINDOW_MS[w], now)));
    return Object.fromEntries(windows.map((w, i) => [w, counts[i]]));
  }

  async figures(slo: SloDefinition, now: number, alertActive: boolean): Promise<{ from: number; to: number; figures: SloFigures }> {
    const from = now - slo.window_days * DAY_MS;
    const [window, burns] = await Promise.all([this.count(slo, from, now), this.burnCounts(slo, now, BURN_WINDOWS)]);
    return { from, to: now, figures: figuresOf(slo.objective_percent, window, burns as Record<BurnWindow, Counts>, alertActive) };
  }
}
