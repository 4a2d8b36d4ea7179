import type { RecordedEvent } from '../../../platform/event-store/event-store.port.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { defineProjection, type ViewTransaction } from '../../../platform/projections/projection.js';
import { CHECK_RECORDED, isApplicable, type CheckRecordedData } from '../../../checks/domain/check.js';
import { CHECKS_SUMMARIZED, type ChecksSummarizedData } from '../../../checks/domain/check-summary.js';
import {
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  PROJECT_CREATED,
  PROJECT_DELETED,
  PROJECT_UPDATED,
  type EndpointDeletedData,
  type EndpointReconfiguredData,
  type EndpointRegisteredData,
  type EndpointToggledData,
  type ProjectCreatedData,
  type ProjectDeletedData,
  type ProjectUpdatedData,
} from '../../../monitoring/domain/events.js';
import {
  ANALYTICS_ENDPOINTS_COLLECTION,
  ANALYTICS_ENDPOINTS_PROJECTION,
  ANALYTICS_PROJECT_HEALTH_COLLECTION,
  ANALYTICS_PROJECTS_COLLECTION,
  healthShareOf,
  sameHealthShare,
  withHealthShare,
  type AnalyticsEndpointDoc,
  type AnalyticsProjectHealthDoc,
} from './view.js';

/**
 * The analytics context's own small view of projects and endpoints (types and names in
 * src/analytics/domain/endpoints-view.ts), built from the monitoring events, which are the
 * shared contract, instead of reading the monitoring context's views: the "latest applicable
 * check" is kept next to the endpoint and analytics does not depend on another view's shape.
 * Consecutive failures are not stored: they are counted exactly at query time from the raw
 * applicable checks of `analytics_rollups`, so checks arriving out of order cannot skew them.
 * Every endpoint document goes through `putEndpoint`, which keeps each project's health counts.
 */
async function onProjectCreated(event: RecordedEvent<ProjectCreatedData>, views: ViewTransaction): Promise<void> {
  const { project_id, team_id, name } = event.data;
  views.put(ANALYTICS_PROJECTS_COLLECTION, { id: String(project_id), project_id, team_id, name });
}

async function onProjectUpdated(event: RecordedEvent<ProjectUpdatedData>, views: ViewTransaction): Promise<void> {
  const existing = await views.get(ANALYTICS_PROJECTS_COLLECTION, String(event.data.project_id));
  if (!existing || event.data.changes.name === undefined) return;
  views.put(ANALYTICS_PROJECTS_COLLECTION, { ...existing, name: event.data.changes.name });
}

async function onEndpointRegistered(event: RecordedEvent<EndpointRegisteredData>, views: ViewTransaction): Promise<void> {
  const { endpoint_id, team_id, project_id, name } = event.data;
  const existing = (await views.get(ANALYTICS_ENDPOINTS_COLLECTION, String(endpoint_id))) as AnalyticsEndpointDoc | null;
  const doc: AnalyticsEndpointDoc = {
    id: String(endpoint_id),
    endpoint_id,
    team_id,
    project_id,
    name,
    // A new endpoint starts disabled: it is enabled only after its destination is verified.
    enabled: existing?.enabled ?? false,
    latest_check_id: existing?.latest_check_id ?? null,
    latest_checked_at: existing?.latest_checked_at ?? null,
    latest_checked_at_ms: existing?.latest_checked_at_ms ?? null,
    latest_success: existing?.latest_success ?? null,
    latest_status_code: existing?.latest_status_code ?? null,
    latest_latency_ms: existing?.latest_latency_ms ?? null,
  };
  await putEndpoint(views, existing, doc);
}

async function onEndpointReconfigured(event: RecordedEvent<EndpointReconfiguredData>, views: ViewTransaction): Promise<void> {
  const existing = await endpointDoc(views, event.data.endpoint_id);
  if (!existing) return;
  const { name, project_id } = event.data.changes;
  await putEndpoint(views, existing, {
    ...existing,
    ...(name !== undefined ? { name } : {}),
    ...(project_id !== undefined ? { project_id } : {}),
  });
}

function toggled(enabled: boolean) {
  return async (event: RecordedEvent<EndpointToggledData>, views: ViewTransaction): Promise<void> => {
    const existing = await endpointDoc(views, event.data.endpoint_id);
    if (!existing) return;
    await putEndpoint(views, existing, { ...existing, enabled });
  };
}

/**
 * A deleted endpoint leaves the comparisons (project rows, health, enabled counts) and its own
 * analytics from then on, but stays as a tombstone: the checks it made keep counting for the
 * project it was deleted from (and its team). Checks of it arriving late change nothing.
 * A deleted project (it had no endpoints left) leaves the team's rows.
 */
async function onEndpointDeleted(event: RecordedEvent<EndpointDeletedData>, views: ViewTransaction): Promise<void> {
  const existing = await endpointDoc(views, event.data.endpoint_id);
  if (!existing) return;
  await putEndpoint(views, existing, { ...existing, deleted: true });
}

async function onProjectDeleted(event: RecordedEvent<ProjectDeletedData>, views: ViewTransaction): Promise<void> {
  views.delete(ANALYTICS_PROJECTS_COLLECTION, String(event.data.project_id));
}

/** Keeps the newest applicable check; an older or repeated one (import, redelivery) changes nothing. */
async function onCheckRecorded(event: RecordedEvent<CheckRecordedData>, views: ViewTransaction): Promise<void> {
  const check = event.data;
  if (!isApplicable(check)) return;
  await keepIfNewer(check, views);
}

/** A retention summary carries the newest applicable check it stands for (a rebuild may not see the check itself). */
async function onChecksSummarized(event: RecordedEvent<ChecksSummarizedData>, views: ViewTransaction): Promise<void> {
  const summary = event.data;
  if (summary.latest_applicable) await keepIfNewer({ ...summary.latest_applicable, endpoint_id: summary.endpoint_id }, views);
  const existing = await endpointDoc(views, summary.endpoint_id);
  if (!existing) return;
  // Consecutive failures are counted from the raw checks; those a summary replaced leave their
  // trailing failures here (reset by a success among them, added to otherwise).
  const before = existing.summarized_trailing_failures ?? 0;
  await putEndpoint(views, existing, { ...existing, summarized_trailing_failures: summary.any_success ? summary.trailing_failures : before + summary.trailing_failures });
}

async function keepIfNewer(
  check: Pick<CheckRecordedData, 'check_id' | 'endpoint_id' | 'checked_at' | 'success' | 'status_code' | 'latency_ms'>,
  views: ViewTransaction,
): Promise<void> {
  const existing = await endpointDoc(views, check.endpoint_id);
  if (!existing || existing.deleted) return;
  const at = Date.parse(check.checked_at);
  if (existing.latest_checked_at_ms !== null && existing.latest_check_id !== null) {
    const newer = at > existing.latest_checked_at_ms || (at === existing.latest_checked_at_ms && check.check_id > existing.latest_check_id);
    if (!newer) return;
  }
  await putEndpoint(views, existing, {
    ...existing,
    latest_check_id: check.check_id,
    latest_checked_at: new Date(at).toISOString(),
    latest_checked_at_ms: at,
    latest_success: check.success,
    latest_status_code: check.status_code,
    latest_latency_ms: check.latency_ms,
  });
}

async function endpointDoc(views: ViewTransaction, endpointId: number): Promise<AnalyticsEndpointDoc | null> {
  return (await views.get(ANALYTICS_ENDPOINTS_COLLECTION, String(endpointId))) as AnalyticsEndpointDoc | null;
}

/**
 * Writes the endpoint's document and, when where it counts changed (enabled, deleted, its
 * latest check's success, its project), moves it between its projects' health counts. Most
 * checks change none of that: they cost no more than the document.
 */
async function putEndpoint(views: ViewTransaction, before: AnalyticsEndpointDoc | null, after: AnalyticsEndpointDoc): Promise<void> {
  views.put(ANALYTICS_ENDPOINTS_COLLECTION, after as unknown as Doc);
  const was = healthShareOf(before);
  const now = healthShareOf(after);
  if (sameHealthShare(was, now)) return;
  if (was) await addHealth(views, was, -1);
  if (now) await addHealth(views, now, 1);
}

async function addHealth(views: ViewTransaction, share: NonNullable<ReturnType<typeof healthShareOf>>, sign: 1 | -1): Promise<void> {
  const id = String(share.project_id);
  const counts = withHealthShare((await views.get(ANALYTICS_PROJECT_HEALTH_COLLECTION, id)) as AnalyticsProjectHealthDoc | null, share, sign);
  if (counts.enabled_endpoints === 0) views.delete(ANALYTICS_PROJECT_HEALTH_COLLECTION, id);
  else views.put(ANALYTICS_PROJECT_HEALTH_COLLECTION, counts as unknown as Doc);
}

export const analyticsEndpointsProjection = defineProjection({
  name: ANALYTICS_ENDPOINTS_PROJECTION,
  // 2: a deleted endpoint stays as a tombstone (its checks count for its last project).
  // 3: each project's health counts (analytics_project_health).
  version: 3,
  collections: [
    { name: ANALYTICS_PROJECTS_COLLECTION, indexes: [{ fields: ['team_id', 'project_id'] }] },
    {
      name: ANALYTICS_ENDPOINTS_COLLECTION,
      // project_id first: a project's members are read by project id alone (AnalyticsFacts.membersOf).
      indexes: [{ fields: ['project_id', 'endpoint_id'] }, { fields: ['team_id', 'endpoint_id'] }],
    },
    { name: ANALYTICS_PROJECT_HEALTH_COLLECTION, indexes: [{ fields: ['team_id', 'project_id'] }] },
  ],
  // Nothing else writes its collections, and the handlers build new documents (KeptDocuments).
  keepsDocuments: true,
  // A probed check reads its endpoint's document: a batch's are read at once. Other events are
  // rare, and each reads what it reads when asked.
  prefetch: (event) =>
    event.type === CHECK_RECORDED ? [[ANALYTICS_ENDPOINTS_COLLECTION, String((event.data as CheckRecordedData).endpoint_id)]] : [],
  handlers: {
    [PROJECT_CREATED]: onProjectCreated,
    [PROJECT_UPDATED]: onProjectUpdated,
    [PROJECT_DELETED]: onProjectDeleted,
    [ENDPOINT_REGISTERED]: onEndpointRegistered,
    [ENDPOINT_RECONFIGURED]: onEndpointReconfigured,
    [ENDPOINT_ENABLED]: toggled(true),
    [ENDPOINT_DISABLED]: toggled(false),
    [ENDPOINT_DELETED]: onEndpointDeleted,
    [CHECK_RECORDED]: onCheckRecorded,
    [CHECKS_SUMMARIZED]: onChecksSummarized,
  },
});
