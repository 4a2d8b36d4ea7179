import { CHECK_RECORDED, type CheckRecordedData } from '../../../../src/checks/domain/check.js';
import { ENDPOINT_RECONFIGURED, type EndpointReconfiguredData } from '../../../../src/monitoring/domain/events.js';
import type { RecordedEvent } from '../../../../src/platform/event-store/event-store.port.js';
import type { AnalyticsFacts } from '../../../../src/analytics/application/analytics-facts.js';
import { AnalyticsQuery } from '../../../../src/analytics/views/rollups/queries.js';
import { analyticsRollupsProjection } from '../../../../src/analytics/views/rollups/projection.js';
import { MemoryReadStore, applyBatch } from './memory-store.js';
import { KeptDocuments } from '../../../../src/platform/projections/view-transaction.js';
import type { ReadStore } from '../../../../src/platform/read-store/read-store.port.js';

let nextId = 1;

/** A scheduled, unsuppressed, successful check of endpoint 1 (project 1, team 1) unless overridden. */
export function check(overrides: Partial<CheckRecordedData> & { checked_at: string }): CheckRecordedData {
  const success = overrides.success ?? true;
  return {
    check_id: nextId++,
    team_id: 1,
    project_id: 1,
    endpoint_id: 1,
    configuration_version: 1,
    source: 'scheduled',
    job_id: null,
    alert_suppressed: false,
    latency_anomaly: false,
    latency_threshold_ms: null,
    imported: false,
    success,
    status_code: success ? 200 : 500,
    latency_ms: 100,
    time_to_first_byte_ms: 50,
    duration_ms: 100,
    body_complete: true,
    failure_reason: success ? null : 'status: 500',
    response_excerpt: null,
    ...overrides,
  };
}

export function recorded(data: CheckRecordedData, position: number): RecordedEvent<CheckRecordedData> {
  return {
    id: `event-${data.check_id}-${position}`,
    streamId: `checks-${data.endpoint_id}`,
    type: CHECK_RECORDED,
    schemaVersion: 1,
    data,
    metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: data.checked_at },
    revision: position,
    position,
    recordedAt: data.checked_at,
  };
}

/** An endpoint moved to another project (application API), as the monitoring context records it. */
export function moved(endpointId: number, teamId: number, projectId: number, position: number): RecordedEvent<EndpointReconfiguredData> {
  const at = new Date(0).toISOString();
  return {
    id: `move-${endpointId}-${position}`,
    streamId: `endpoint-${endpointId}`,
    type: ENDPOINT_RECONFIGURED,
    schemaVersion: 1,
    data: { endpoint_id: endpointId, team_id: teamId, project_id: projectId, changes: { project_id: projectId }, configuration_version: 2, updated_at: at },
    metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at },
    revision: position,
    position,
    recordedAt: at,
  };
}

/** Facts for tests that only look at figures: no projects, endpoints or incidents. */
export const noFacts: AnalyticsFacts = {
  projects: async () => [],
  endpoints: async () => [],
  membersOf: async () => [],
  incidentCounts: async () => ({ total: 0, open: 0 }),
  openIncidentsByProject: async () => new Map(),
  healthByProject: async () => new Map(),
};

/**
 * A query service over an in-memory store filled by the real projection, in batches. `moves`:
 * endpoints moved to another project, each applied just before the check at index `before`.
 */
export async function queryOver<S extends ReadStore = MemoryReadStore>(
  checks: CheckRecordedData[],
  facts: AnalyticsFacts = noFacts,
  batchSize = 50,
  store: S = new MemoryReadStore() as unknown as S,
  moves: Array<{ before: number; endpoint_id: number; team_id: number; project_id: number }> = [],
) {
  for (const spec of analyticsRollupsProjection.collections) await store.ensureCollection(spec);
  const events: RecordedEvent[] = [];
  for (let i = 0; i <= checks.length; i++) {
    for (const move of moves.filter((m) => Math.min(m.before, checks.length) === i)) events.push(moved(move.endpoint_id, move.team_id, move.project_id, events.length));
    if (i < checks.length) events.push(recorded(checks[i], events.length));
  }
  // Kept from batch to batch, frozen, as a following runner keeps the projection's documents.
  const kept = analyticsRollupsProjection.keepsDocuments ? new KeptDocuments() : null;
  for (let i = 0; i < events.length; i += batchSize) {
    await applyBatch(store, analyticsRollupsProjection, events.slice(i, i + batchSize), kept);
  }
  return { store, query: new AnalyticsQuery(store, facts) };
}
