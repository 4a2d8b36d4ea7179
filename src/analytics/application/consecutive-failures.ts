import type { Filter, ReadStore } from '../../platform/read-store/read-store.port.js';
import { OUTCOME_FAILURE, OUTCOME_SUCCESS } from '../views/rollups/view.js';

/** How a collection of checks tells a counted success from a counted failure. */
export interface Outcomes {
  succeeded: Filter;
  failed: Filter;
}

/** Raw rows (`analytics_checks`): counted checks by `outcome`. */
export const RAW_OUTCOMES: Outcomes = { succeeded: { outcome: OUTCOME_SUCCESS }, failed: { outcome: OUTCOME_FAILURE } };
/** Region rows (`analytics_region_checks`, counted checks only): by `success`. */
export const REGION_OUTCOMES: Outcomes = { succeeded: { success: true }, failed: { success: false } };

/**
 * Failed applicable checks after the newest successful one among the rows `scope` selects
 * (all of them when none succeeded), through the rows' (scope, outcome or success, checked_at_ms,
 * check_id) index: two or three indexed reads. `summarized`: failures among the checks retention
 * replaced by summaries, counted when no retained check succeeded.
 */
export async function consecutiveFailuresIn(store: ReadStore, collection: string, scope: Filter, outcomes: Outcomes, summarized = 0): Promise<number> {
  const [lastSuccess] = await store.find(collection, {
    filter: { ...scope, ...outcomes.succeeded },
    sort: [
      ['checked_at_ms', 'desc'],
      ['check_id', 'desc'],
    ],
    limit: 1,
  });
  if (!lastSuccess) return summarized + (await store.count(collection, { ...scope, ...outcomes.failed }));
  const [later, sameInstant] = await Promise.all([
    store.count(collection, { ...scope, ...outcomes.failed, checked_at_ms: { gt: lastSuccess.checked_at_ms as number } }),
    store.count(collection, {
      ...scope,
      ...outcomes.failed,
      checked_at_ms: lastSuccess.checked_at_ms as number,
      check_id: { gt: lastSuccess.check_id as number },
    }),
  ]);
  return later + sameInstant;
}
