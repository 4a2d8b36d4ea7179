import type { RecordedEvent } from '../src/platform/event-store/event-store.port.js';
import { defineProjection, type ViewTransaction } from '../src/platform/projections/projection.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../src/checks/domain/check.js';
import { CHECKS_SUMMARIZED, type ChecksSummarizedData } from '../src/checks/domain/check-summary.js';
import { ENDPOINT_RECONFIGURED, ENDPOINT_REGISTERED, type EndpointReconfiguredData, type EndpointRegisteredData } from '../src/monitoring/domain/events.js';
import { addAccumulator, addCheck, emptyAccumulator, type Accumulator } from '../src/analytics/domain/aggregate.js';
import { GRANULARITIES, ROLLUP_SCOPE_KINDS, rawCheckRow, rollupId, rollupKeysOf, rollupRangeAll, withCheck, withSums, withoutSums } from '../src/analytics/domain/rollup.js';
import {
  RAW_CHECKS_COLLECTION,
  RAW_CHECK_COLUMNS,
  ROLLUPS_COLLECTION,
  ROLLUPS_PROJECTION,
  ROLLUP_COLUMNS,
  ROLLUP_MEMBERS_COLLECTION,
  type RawCheckRow,
  type RollupMemberDoc,
  type RollupRow,
} from '../src/analytics/domain/views.js';

/**
 * Analytics rollups: per endpoint, project and team, minute/hour/day sums of applicable checks,
 * plus the applicable checks themselves (for sub-minute range edges and p95). Manual and
 * suppressed checks are left out here, so no query has to filter them. A check counts for its
 * endpoint's CURRENT project: the endpoint's project is kept here (`analytics_members`, from the
 * monitoring events, in log order with the checks), and a move takes the endpoint's share of
 * the project rows and its raw rows to the new project (`onEndpointMoved`).
 */
export async function onCheckRecorded(event: RecordedEvent<CheckRecordedData>, views: ViewTransaction): Promise<void> {
  // A check already counted (same check id) must never be added twice.
  if (!rawCheckRow(event.data) || (await views.get(RAW_CHECKS_COLLECTION, String(event.data.check_id)))) return;
  const row = rawCheckRow(event.data, await currentProject(views, event.data.endpoint_id, event.data.project_id))!;
  views.put(RAW_CHECKS_COLLECTION, { ...row });
  for (const key of rollupKeysOf(row)) {
    const existing = (await views.get(ROLLUPS_COLLECTION, key.id)) as RollupRow | null;
    views.put(ROLLUPS_COLLECTION, { ...withCheck(existing, key.id, row, key.scope) });
  }
}

/**
 * The project the endpoint's checks count for now. An endpoint this view has not seen registered
 * (a log that starts with its checks) counts for the project its first check names until a
 * monitoring event says otherwise.
 */
async function currentProject(views: ViewTransaction, endpointId: number, recordedUnder: number): Promise<number> {
  const member = (await views.get(ROLLUP_MEMBERS_COLLECTION, String(endpointId))) as RollupMemberDoc | null;
  if (member) return member.project_id;
  views.put(ROLLUP_MEMBERS_COLLECTION, { id: String(endpointId), endpoint_id: endpointId, project_id: recordedUnder });
  return recordedUnder;
}

async function onEndpointRegistered(event: RecordedEvent<EndpointRegisteredData>, views: ViewTransaction): Promise<void> {
  await onEndpointMoved(event.data.endpoint_id, event.data.project_id, views);
}

async function onEndpointReconfigured(event: RecordedEvent<EndpointReconfiguredData>, views: ViewTransaction): Promise<void> {
  const projectId = event.data.changes.project_id;
  if (projectId !== undefined) await onEndpointMoved(event.data.endpoint_id, projectId, views);
}

/**
 * The endpoint is in `projectId` now. When it was counted for another project, every rollup row
 * of the endpoint is taken out of that project's row of the same period and added to the new
 * project's, and its raw rows are relabelled (p95 and range edges read them by project). Costs
 * the endpoint's own row count, once per move; reads never pay for membership. A project row
 * that is already gone (a minute past the retention horizon, deleted with another endpoint's
 * summary; such minutes are never read) has nothing to take back.
 */
async function onEndpointMoved(endpointId: number, projectId: number, views: ViewTransaction): Promise<void> {
  const id = String(endpointId);
  const member = (await views.get(ROLLUP_MEMBERS_COLLECTION, id)) as RollupMemberDoc | null;
  views.put(ROLLUP_MEMBERS_COLLECTION, { id, endpoint_id: endpointId, project_id: projectId });
  if (!member || member.project_id === projectId) return;
  const from = member.project_id;
  for (const granularity of GRANULARITIES) {
    const rows = (await views.find(ROLLUPS_COLLECTION, { filter: { id: rollupRangeAll('endpoint', endpointId, granularity) } })) as unknown as RollupRow[];
    const prefix = rollupRangeAll('endpoint', endpointId, granularity).gte;
    for (const row of rows) {
      const period = row.id.slice(prefix.length);
      const oldId = `${rollupRangeAll('project', from, granularity).gte}${period}`;
      const newId = `${rollupRangeAll('project', projectId, granularity).gte}${period}`;
      const old = (await views.get(ROLLUPS_COLLECTION, oldId)) as RollupRow | null;
      if (old) {
        const left = withoutSums(old, row);
        if (left) views.put(ROLLUPS_COLLECTION, { ...left });
        else views.delete(ROLLUPS_COLLECTION, oldId);
      }
      const existing = (await views.get(ROLLUPS_COLLECTION, newId)) as RollupRow | null;
      views.put(ROLLUPS_COLLECTION, { ...withSums(existing, newId, row, 'project') });
    }
  }
  const raw = (await views.find(RAW_CHECKS_COLLECTION, { filter: { endpoint_id: endpointId } })) as unknown as RawCheckRow[];
  for (const row of raw) views.put(RAW_CHECKS_COLLECTION, { ...row, project_id: projectId });
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
  // Like a check, a summary counts for the endpoint's current project.
  const projectId = await currentProject(views, summary.endpoint_id, summary.hours[0]?.[1] ?? 0);
  const ids: Record<(typeof ROLLUP_SCOPE_KINDS)[number], number> = { endpoint: summary.endpoint_id, project: projectId, team: summary.team_id };
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
    // The minute rows the summarized checks were in go, for the endpoint, its current project
    // and its team, whether or not this view still saw the raw checks (a rebuild after the prune
    // does not): what is deleted depends on the summary (and the endpoint's project) alone, so
    // a live view and a rebuilt one end the same. By id (deleting a missing one is a no-op).
    for (const scope of ROLLUP_SCOPE_KINDS) {
      for (const minute of minutes) views.delete(ROLLUPS_COLLECTION, rollupId(scope, ids[scope], 'minute', hour + minute * 60));
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
    const at = { team_id: summary.team_id, project_id: projectId, endpoint_id: summary.endpoint_id, checked_at_ms: hour * 1000 };
    for (const key of rollupKeysOf(at)) {
      if (key.granularity === 'minute') continue;
      const existing = (await views.get(ROLLUPS_COLLECTION, key.id)) as RollupRow | null;
      views.put(ROLLUPS_COLLECTION, { ...withSums(existing, key.id, rest, key.scope) });
    }
  }
}

/**
 * A summary's sums per hour. A summary splits an hour by the project its checks were recorded
 * under (an endpoint moved within the hour); here they all count for the endpoint's current
 * project, so the parts of an hour are added up.
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
  // 4: project rollups (counts and sums) and raw rows labelled with the endpoint's current
  // project, both moved with the endpoint; the endpoints' projects kept here (issue 32: a
  // project's cost no longer grows with its endpoint count).
  version: 4,
  collections: [
    // Read and written by id only (see RollupKey).
    { name: ROLLUPS_COLLECTION, indexes: [], columns: ROLLUP_COLUMNS },
    {
      name: RAW_CHECKS_COLLECTION,
      indexes: [
        // p95 and consecutive failures: newest successful checks of a scope; range edges: a
        // scope's checks of a time range, read as two ranges (success 0 and 1), so no index of
        // their own (issue 12: ~35 B a check). An endpoint's rows are found by this one on a move.
        { fields: ['team_id', 'success', 'checked_at_ms', 'check_id'] },
        { fields: ['project_id', 'success', 'checked_at_ms', 'check_id'] },
        { fields: ['endpoint_id', 'success', 'checked_at_ms', 'check_id'] },
      ],
      columns: RAW_CHECK_COLUMNS,
    },
    { name: ROLLUP_MEMBERS_COLLECTION, indexes: [] },
  ],
  handlers: {
    [CHECK_RECORDED]: onCheckRecorded,
    [CHECKS_SUMMARIZED]: onChecksSummarized,
    [ENDPOINT_REGISTERED]: onEndpointRegistered,
    [ENDPOINT_RECONFIGURED]: onEndpointReconfigured,
  },
});
