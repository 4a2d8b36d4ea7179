import type { RecordedEvent } from '../src/platform/event-store/event-store.port.js';
import { defineProjection, type ViewTransaction } from '../src/platform/projections/projection.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../src/monitoring/domain/check.js';
import { CHECKS_SUMMARIZED, type ChecksSummarizedData } from '../src/monitoring/domain/check-summary.js';
import { addAccumulator, addCheck, emptyAccumulator, type Accumulator } from '../src/analytics/domain/aggregate.js';
import { ROLLUP_SCOPE_KINDS, SCOPE_FIELD, rawCheckRow, rollupId, rollupKeysOf, withCheck, withSums } from '../src/analytics/domain/rollup.js';
import { RAW_CHECKS_COLLECTION, RAW_CHECK_COLUMNS, ROLLUPS_COLLECTION, ROLLUPS_PROJECTION, ROLLUP_COLUMNS, type RawCheckRow, type RollupRow } from '../src/analytics/domain/views.js';

/**
 * Analytics rollups: per endpoint and team, minute/hour/day sums of applicable checks, plus the
 * applicable checks themselves (for sub-minute range edges and p95). Manual and suppressed
 * checks are left out here, so no query has to filter them. Projects have no rollups of their
 * own: a project's figures are summed from the endpoints it holds now (src/analytics/domain/rollup.ts).
 */
export async function onCheckRecorded(event: RecordedEvent<CheckRecordedData>, views: ViewTransaction): Promise<void> {
  const row = rawCheckRow(event.data);
  if (!row) return;
  // A check already counted (same check id) must never be added twice.
  if (await views.get(RAW_CHECKS_COLLECTION, row.id)) return;
  views.put(RAW_CHECKS_COLLECTION, { ...row });
  for (const key of rollupKeysOf(row)) {
    const existing = (await views.get(ROLLUPS_COLLECTION, key.id)) as RollupRow | null;
    views.put(ROLLUPS_COLLECTION, { ...withCheck(existing, key.id, row) });
  }
}

/**
 * Retention: the summarized checks leave the raw rows, and so do the minute rollups they were
 * in (past the horizon analytics counts whole hours); hour and day rollups keep their sums. Rows
 * this view still holds were counted when their CheckRecorded was applied; the summary adds only
 * the rest of each hour (its checks, failures and latency sum minus those rows'; its minimum and
 * maximum cover every check of the hour, so combining them is exact either way). So the rollups
 * are the same whether the raw events were applied before (live, or a rebuild of a log a crash
 * left them in) or are gone from the log (a rebuild after the prune).
 */
export async function onChecksSummarized(event: RecordedEvent<ChecksSummarizedData>, views: ViewTransaction): Promise<void> {
  const summary = event.data;
  const counted = new Map<number, Accumulator>();
  // By id, not by query: a batch's query also scans every write pending in the batch, which a
  // rebuild (thousands of writes per batch) cannot afford once per summary.
  for (const checkId of summary.check_ids) {
    const row = (await views.get(RAW_CHECKS_COLLECTION, String(checkId))) as RawCheckRow | null;
    if (row) {
      const hour = Math.floor(row.checked_at_ms / 3_600_000) * 3600;
      counted.set(hour, addCheck(counted.get(hour) ?? emptyAccumulator(), row));
      views.delete(RAW_CHECKS_COLLECTION, row.id);
    }
  }
  for (const { hour, sums, minutes } of hoursOf(summary)) {
    // The minute rows the summarized checks were in go, for the endpoint and its team, whether
    // or not this view still saw the raw checks (a rebuild after the prune does not): what is
    // deleted depends on the summary alone, so a live view and a rebuilt one end the same.
    // By id (deleting a missing one is a no-op).
    for (const scope of ROLLUP_SCOPE_KINDS) {
      const scopeId = summary[SCOPE_FIELD[scope]];
      for (const minute of minutes) views.delete(ROLLUPS_COLLECTION, rollupId(scope, scopeId, 'minute', hour + minute * 60));
    }
    const already = counted.get(hour) ?? emptyAccumulator();
    if (sums.checks - already.checks <= 0) continue;
    const rest: Accumulator = {
      checks: sums.checks - already.checks,
      failures: sums.failures - already.failures,
      latency_sum: sums.latency_sum - already.latency_sum,
      latency_min: sums.latency_min,
      latency_max: sums.latency_max,
    };
    const at = { team_id: summary.team_id, endpoint_id: summary.endpoint_id, checked_at_ms: hour * 1000 };
    for (const key of rollupKeysOf(at)) {
      if (key.granularity === 'minute') continue;
      const existing = (await views.get(ROLLUPS_COLLECTION, key.id)) as RollupRow | null;
      views.put(ROLLUPS_COLLECTION, { ...withSums(existing, key.id, rest) });
    }
  }
}

/**
 * A summary's sums per hour. A summary splits an hour by the project its checks were recorded
 * under (an endpoint moved within the hour); the rollups here are per endpoint and team, so the
 * parts of an hour are added up.
 */
function hoursOf(summary: ChecksSummarizedData): Array<{ hour: number; sums: Accumulator; minutes: number[] }> {
  const byHour = new Map<number, { hour: number; sums: Accumulator; minutes: Set<number> }>();
  for (const [hour, , checks, failures, latencySum, latencyMin, latencyMax, minutes] of summary.hours) {
    const entry = byHour.get(hour) ?? { hour, sums: emptyAccumulator(), minutes: new Set<number>() };
    addAccumulator(entry.sums, { checks, failures, latency_sum: latencySum, latency_min: latencyMin, latency_max: latencyMax });
    for (const minute of minutes) entry.minutes.add(minute);
    byHour.set(hour, entry);
  }
  return [...byHour.values()].map(({ hour, sums, minutes }) => ({ hour, sums, minutes: [...minutes] }));
}

export const analyticsRollupsProjection = defineProjection({
  name: ROLLUPS_PROJECTION,
  // 2: no project rollups and no project_id in the raw rows (projects are summed from their
  // endpoints at query time); rollup rows hold their sums under a short id and nothing else
  // (they stay for ever: issue 12's steady state); typed columns declared.
  // 3: raw rows without `minute` and its two indexes (edges are read by checked_at_ms).
  version: 3,
  collections: [
    // Read and written by id only (see RollupKey).
    { name: ROLLUPS_COLLECTION, indexes: [], columns: ROLLUP_COLUMNS },
    {
      name: RAW_CHECKS_COLLECTION,
      indexes: [
        // p95 (a project's merges its endpoints' walks) and consecutive failures: newest
        // successful checks of a scope; range edges: a scope's checks of a time range, read as
        // two ranges (success 0 and 1), so no index of their own (issue 12: ~35 B a check).
        { fields: ['team_id', 'success', 'checked_at_ms', 'check_id'] },
        { fields: ['endpoint_id', 'success', 'checked_at_ms', 'check_id'] },
      ],
      columns: RAW_CHECK_COLUMNS,
    },
  ],
  handlers: { [CHECK_RECORDED]: onCheckRecorded, [CHECKS_SUMMARIZED]: onChecksSummarized },
});
