/**
 * The probing view (projection `probing`), defined here once: written by `projection.ts`, read
 * through `queries.ts` by the scheduler and the regions route.
 */
import type { EndpointSnapshot } from '../../../monitoring/domain/endpoint-snapshot.js';

export const PROBING_VIEW = 'probing';

/**
 * What the scheduler needs of every endpoint: one row per endpoint with `schedulable`
 * (enabled and verified), interval and configuration version. No hidden values.
 */
export const SCHEDULE = 'schedule';

export interface ScheduleRow {
  id: string;
  endpoint_id: number;
  team_id: number;
  schedulable: boolean;
  interval_seconds: number;
  configuration_version: number;
  /** The endpoint's fold with its hidden values blanked, so the next event folds onto it. */
  snapshot: EndpointSnapshot;
}
