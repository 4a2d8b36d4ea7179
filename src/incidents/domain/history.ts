/**
 * What auditors read: one entry per recorded event of an incident stream (who, when, which
 * request, what changed from what to what), and the incident as it stood at a past moment.
 * Used by `npm run history -- incident <id> --at <time>` and the history route.
 *
 * "As it stood at T" folds the events the store had recorded at or before T (`recordedAt`), so
 * it shows what a reader could have seen then; an import back-dated through `occurred_at`
 * does not change the past.
 */
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import {
  CHECKPOINT_ADDED,
  CHECKPOINT_UPDATED,
  COMMENT_ADDED,
  COMMENT_DELETED,
  COMMENT_UPDATED,
  INCIDENT_ALERT_ENDED,
  INCIDENT_ALERT_TRIGGERED_AGAIN,
  INCIDENT_AUTO_RESOLVE_CHANGED,
  INCIDENT_CHECK_LINKED,
  INCIDENT_DETAILS_UPDATED,
  INCIDENT_ENDPOINT_JOINED,
  INCIDENT_ENDPOINT_RECOVERED,
  INCIDENT_MERGE_RELEASED,
  INCIDENT_MERGED_INTO,
  INCIDENT_OPENED,
  INCIDENT_REOPENED,
  INCIDENT_RESOLVED,
  INCIDENT_STATUS_CHANGED,
  INCIDENTS_ABSORBED,
  isIncidentEvent,
  type IncidentEvent,
} from './events.js';
import { evolve, initialState, type IncidentState } from './incident.js';
import { millisOf, parseRfc3339 } from '../../platform/time/rfc3339.js';

export type ChangeSet = Record<string, { from?: unknown; to?: unknown }>;

export interface HistoryEntry {
  type: string;
  revision: number;
  /** When it happened (metadata.occurred_at). */
  at: string;
  recorded_at: string;
  actor: string | null;
  request_id: string | null;
  /** One human sentence. */
  summary: string;
  /** Field -> before/after. `from` is absent where there was no before (a creation). */
  changes: ChangeSet;
}

export function describeEvent(event: RecordedEvent): HistoryEntry {
  const candidate = { type: event.type, data: event.data };
  const { summary, changes } = isIncidentEvent(candidate)
    ? describe(candidate)
    : { summary: `Event ${event.type} (not an incident event)`, changes: {} };
  return {
    type: event.type,
    revision: event.revision,
    at: event.metadata.occurred_at,
    recorded_at: event.recordedAt,
    actor: event.metadata.actor,
    request_id: event.metadata.request_id,
    summary,
    changes,
  };
}

/** The incident as of `at` (default: now, i.e. every event). null when it did not exist yet. */
export function stateAt(events: readonly RecordedEvent[], at?: string): IncidentState {
  const limit = at === undefined ? Infinity : parseRfc3339(at);
  if (limit === null) throw new RangeError(`Not an RFC 3339 date-time: ${at}`);
  let state = initialState();
  for (const event of [...events].sort((a, b) => a.revision - b.revision)) {
    if (millisOf(event.recordedAt) > limit) break;
    const candidate = { type: event.type, data: event.data };
    if (isIncidentEvent(candidate)) state = evolve(state, candidate);
  }
  return state;
}

interface Description {
  summary: string;
  changes: ChangeSet;
}

function describe(event: IncidentEvent): Description {
  switch (event.type) {
    case INCIDENT_OPENED: {
      const { incident_id, opened_at, ...fields } = event.data;
      const how = fields.source === 'automatic' ? `automatically (${fields.type})` : 'manually';
      return { summary: `Incident ${incident_id} opened ${how}: "${fields.title}"`, changes: creations(fields) };
    }
    case INCIDENT_DETAILS_UPDATED:
      return { summary: `Changed ${Object.keys(event.data.changes).join(', ')}`, changes: { ...event.data.changes } };
    case INCIDENT_STATUS_CHANGED: {
      const d = event.data;
      return {
        summary: `Status changed from ${d.previous_status_name} to ${d.status_name}`,
        changes: { status_id: { from: d.previous_status_id, to: d.status_id }, status_name: { from: d.previous_status_name, to: d.status_name } },
      };
    }
    case INCIDENT_RESOLVED:
      return { summary: `Resolved (${event.data.by})${event.data.reason ? `: ${event.data.reason}` : ''}`, changes: { resolved_at: { from: null, to: event.data.resolved_at } } };
    case INCIDENT_REOPENED:
      return { summary: 'Reopened', changes: { resolved_at: { from: event.data.previous_resolved_at, to: null } } };
    case INCIDENT_AUTO_RESOLVE_CHANGED: {
      const on = event.data.auto_resolve;
      return { summary: `Automatic resolution turned ${on ? 'on' : 'off'}`, changes: { auto_resolve: { from: !on, to: on } } };
    }
    case INCIDENT_CHECK_LINKED: {
      const c = event.data.check;
      const why = c.failure_reason ? `: ${c.failure_reason}` : '';
      return { summary: `Failing check ${c.id} of endpoint ${c.endpoint_id} linked (status ${c.status_code}${why})`, changes: { checks: { to: c.id } } };
    }
    case INCIDENT_ENDPOINT_JOINED: {
      const { endpoint_id, signal, reason, again } = event.data;
      const how = again ? `triggered again (${signal})` : `joined (grouped ${signal} incident)`;
      return { summary: `Endpoint ${endpoint_id} ${how}: ${reason}`, changes: { endpoint_ids: { to: endpoint_id } } };
    }
    case INCIDENT_ENDPOINT_RECOVERED:
      return {
        summary: `Endpoint ${event.data.endpoint_id} ${event.data.endpoint_deleted ? 'deleted: no longer awaited' : 'recovered'}`,
        changes: { recovered_endpoint_ids: { to: event.data.endpoint_id } },
      };
    case INCIDENT_ALERT_ENDED:
      return { summary: `${event.data.alert} ended; kept open: automatic resolution is off`, changes: { alert_ended: { from: false, to: true } } };
    case INCIDENT_ALERT_TRIGGERED_AGAIN:
      return { summary: `${event.data.alert} triggered again: ${event.data.reason}`, changes: { alert_ended: { from: true, to: false } } };
    case COMMENT_ADDED: {
      const { comment_id: id, body, pinned } = event.data;
      return { summary: `Comment ${id} added`, changes: { [`comments[${id}]`]: { to: { body, pinned } } } };
    }
    case COMMENT_UPDATED:
      return { summary: `Comment ${event.data.comment_id} edited`, changes: prefixed(`comments[${event.data.comment_id}]`, event.data.changes) };
    case COMMENT_DELETED:
      return { summary: `Comment ${event.data.comment_id} deleted`, changes: { [`comments[${event.data.comment_id}]`]: { to: null } } };
    case CHECKPOINT_ADDED: {
      const { checkpoint_id: id, title, body, status_label } = event.data;
      return { summary: `Checkpoint ${id} posted: "${title}"`, changes: { [`checkpoints[${id}]`]: { to: { title, body, status_label } } } };
    }
    case CHECKPOINT_UPDATED:
      return { summary: `Checkpoint ${event.data.checkpoint_id} edited`, changes: prefixed(`checkpoints[${event.data.checkpoint_id}]`, event.data.changes) };
    case INCIDENT_MERGED_INTO:
      return { summary: `Merged into incident ${event.data.target_id}`, changes: { merged_into_id: { from: null, to: event.data.target_id } } };
    case INCIDENT_MERGE_RELEASED: {
      const { target_id, reason, restored } = event.data;
      return {
        summary: `Merge into incident ${target_id} released, the merge failed: ${reason}`,
        changes: {
          merged_into_id: { from: target_id, to: null },
          resolved_at: { to: restored.resolved_at },
          comments: { to: restored.comments.map((c) => c.id) },
          checkpoints: { to: restored.checkpoints.map((c) => c.id) },
          checks: { to: restored.checks.map((c) => c.id) },
        },
      };
    }
    case INCIDENTS_ABSORBED: {
      const ids = event.data.sources.map((s) => s.id);
      return {
        summary: `Incidents ${ids.join(', ')} merged into this one`,
        changes: { ...event.data.changes, merged_incidents: { to: ids } },
      };
    }
  }
}

function creations(fields: object): ChangeSet {
  return Object.fromEntries(Object.entries(fields).map(([field, value]) => [field, { to: value }]));
}

function prefixed(prefix: string, changes: object): ChangeSet {
  return Object.fromEntries(Object.entries(changes).map(([field, change]) => [`${prefix}.${field}`, change]));
}
