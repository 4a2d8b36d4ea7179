import { toIncidentSummary } from '../../incidents/domain/detail-view.js';
import type { IncidentEvent } from '../../incidents/domain/events.js';
import { evolve, initialState, type IncidentState } from '../../incidents/domain/incident.js';
import { ENDPOINTS, MONITORING_VIEW } from '../../monitoring/domain/views.js';
import type { Platform } from '../../platform/platform.js';
import type { DeliveryRecord } from '../domain/delivery.js';
import type { WebhookPayload } from '../domain/formats.js';

/**
 * The body of a delivery, the same on every attempt: incident events carry the incident summary
 * as the public API shows it just after the event (the incident's stream folded up to the
 * event's revision with the incidents domain's own evolve), alert events the endpoint and signal.
 */
export async function buildPayload(platform: Platform, record: DeliveryRecord): Promise<WebhookPayload> {
  if (record.incident_id !== null) {
    const events = await platform.events.readStream(record.stream_id, { maxCount: record.revision + 1 });
    const state = events.reduce<IncidentState>((s, e) => evolve(s, { type: e.type, data: e.data } as IncidentEvent), initialState());
    return { type: record.type, timestamp: record.timestamp, data: { incident: toIncidentSummary(state), ...record.extra } };
  }
  if (record.signal !== null) {
    return { type: record.type, timestamp: record.timestamp, data: { endpoint_id: record.endpoint_id, signal: record.signal, incident_id: record.signal.incident_id } };
  }
  return { type: record.type, timestamp: record.timestamp, data: { ...record.extra } };
}

/** Names of the endpoints a payload mentions, for the human-readable formats. */
export async function endpointNames(platform: Platform, payload: WebhookPayload): Promise<Map<number, string>> {
  const incident = payload.data.incident as { endpoint_ids: number[] } | undefined;
  const ids = incident ? incident.endpoint_ids : typeof payload.data.endpoint_id === 'number' ? [payload.data.endpoint_id] : [];
  if (ids.length === 0) return new Map();
  const rows = await platform.reader.getMany(MONITORING_VIEW, ENDPOINTS, ids);
  return new Map(rows.map((row) => [Number(row.endpoint_id ?? row.id), String(row.name)]));
}
