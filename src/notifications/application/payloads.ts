import { toIncidentSummary } from '../../incidents/domain/detail-view.js';
import { incidentStreams } from '../../incidents/application/lookups.js';
import { INCIDENT_CHECK_LINKED } from '../../incidents/domain/events.js';
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { ENDPOINTS, MONITORING_VIEW } from '../../monitoring/views/monitoring/view.js';
import type { Platform } from '../../platform/platform.js';
import type { DeliveryRecord } from '../domain/delivery.js';
import type { WebhookPayload } from '../domain/formats.js';

/** A check link appended with the event (same cause): an automatic incident opens with its trigger's failing checks. */
function sameAppendLink(event: RecordedEvent, at: RecordedEvent): boolean {
  const cause = at.metadata.causation_id ?? null;
  return cause !== null && event.type === INCIDENT_CHECK_LINKED && event.metadata.causation_id === cause;
}

/**
 * The body of a delivery, the same on every attempt: incident events carry the incident summary
 * as the public API shows it once the event is applied (the incident's stream folded up to the
 * event's revision with the incidents domain's own evolve, then over the check links appended
 * with it: an automatic incident opens with its trigger's failing checks linked, in one append
 * whose events share the trigger as their cause); alert events the endpoint, the signal as
 * alert-status shows it once the event is applied, and the incident the alert opened, joined or
 * (recovery) resolves.
 */
export async function buildPayload(platform: Platform, record: DeliveryRecord): Promise<WebhookPayload> {
  if (record.incident_id !== null && record.signal === null) {
    // The process's fold of the incident (the one incident commands use), as it stood at the
    // event: a retry, another channel's delivery of the same event or a later event of the same
    // incident reads nothing, or only the events since a state it kept.
    const { state } = await incidentStreams(platform).loadThrough(record.stream_id, record.revision, sameAppendLink);
    return { type: record.type, timestamp: record.timestamp, data: { incident: toIncidentSummary(state), ...record.extra } };
  }
  if (record.signal !== null) {
    // An endpoint with regions: the regions as at the decision. A change while the endpoint
    // flaps says so (a recovery then leaves its incident open, and status pages say "monitoring").
    const regions = record.extra.regions === undefined ? {} : { regions: record.extra.regions };
    const flapping = record.extra.flapping === true ? { flapping: true } : {};
    return { type: record.type, timestamp: record.timestamp, data: { endpoint_id: record.endpoint_id, signal: record.signal, incident_id: record.incident_id, ...regions, ...flapping } };
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
