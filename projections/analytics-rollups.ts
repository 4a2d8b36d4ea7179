import type { RecordedEvent } from '../src/platform/event-store/event-store.port.js';
import { defineProjection, type ViewTransaction } from '../src/platform/projections/projection.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../src/monitoring/domain/check.js';
import {
  RAW_CHECKS_COLLECTION,
  ROLLUPS_COLLECTION,
  rawCheckRow,
  rollupKeysOf,
  withCheck,
  type RollupRow,
} from '../src/analytics/domain/rollup.js';

/**
 * Analytics rollups: per endpoint, project and team, minute/hour/day sums of applicable checks,
 * plus the applicable checks themselves (for sub-minute range edges and p95). Manual and
 * suppressed checks are left out here, so no query has to filter them.
 */
export async function onCheckRecorded(event: RecordedEvent<CheckRecordedData>, views: ViewTransaction): Promise<void> {
  const row = rawCheckRow(event.data);
  if (!row) return;
  // A check already counted (same check id) must never be added twice.
  if (await views.get(RAW_CHECKS_COLLECTION, row.id)) return;
  views.put(RAW_CHECKS_COLLECTION, { ...row });
  for (const key of rollupKeysOf(row)) {
    const existing = (await views.get(ROLLUPS_COLLECTION, key.id)) as RollupRow | null;
    views.put(ROLLUPS_COLLECTION, { ...withCheck(existing, key, row) });
  }
}

export const analyticsRollupsProjection = defineProjection({
  name: 'analytics_rollups',
  version: 1,
  collections: [
    {
      name: ROLLUPS_COLLECTION,
      indexes: [{ fields: ['scope', 'scope_id', 'granularity', 'start'], unique: true }],
    },
    {
      name: RAW_CHECKS_COLLECTION,
      indexes: [
        // Range edges: whole minutes by key.
        { fields: ['team_id', 'minute'] },
        { fields: ['project_id', 'minute'] },
        { fields: ['endpoint_id', 'minute'] },
        // p95: newest successful checks of a scope.
        { fields: ['team_id', 'success', 'checked_at_ms', 'check_id'] },
        { fields: ['project_id', 'success', 'checked_at_ms', 'check_id'] },
        { fields: ['endpoint_id', 'success', 'checked_at_ms', 'check_id'] },
      ],
    },
  ],
  handlers: { [CHECK_RECORDED]: onCheckRecorded },
});
