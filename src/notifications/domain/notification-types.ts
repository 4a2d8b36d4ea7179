/**
 * The notification event types a channel can receive, and which log events raise them.
 * Comments are private notes and never notify; checks suppressed by maintenance never move an
 * alert signal, so they never notify either; `IncidentCheckLinked` (one per failing check) would
 * be noise and is left out.
 */
import {
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  type AlertSignalRecoveredData,
  type AlertSignalTriggeredData,
} from '../../alerting/domain/endpoint-alerts.js';
import {
  CHECKPOINT_ADDED,
  INCIDENT_DETAILS_UPDATED,
  INCIDENT_ENDPOINT_JOINED,
  INCIDENT_ALERT_TRIGGERED_AGAIN,
  INCIDENT_OPENED,
  INCIDENT_REOPENED,
  INCIDENT_RESOLVED,
  INCIDENT_STATUS_CHANGED,
  INCIDENTS_ABSORBED,
  type IncidentResolvedData,
} from '../../incidents/domain/events.js';

export const NOTIFICATION_TYPES = [
  'incident.opened',
  'incident.resolved',
  'incident.reopened',
  'incident.updated',
  'incident.merged',
  'incident.checkpoint_added',
  'alert.triggered',
  'alert.recovered',
  'ping',
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

const INCIDENT_TYPES: Record<string, NotificationType> = {
  [INCIDENT_OPENED]: 'incident.opened',
  [INCIDENT_RESOLVED]: 'incident.resolved',
  [INCIDENT_REOPENED]: 'incident.reopened',
  [INCIDENT_DETAILS_UPDATED]: 'incident.updated',
  [INCIDENT_STATUS_CHANGED]: 'incident.updated',
  // Grouping: an endpoint joining is an update of the one incident, never a second opened.
  [INCIDENT_ENDPOINT_JOINED]: 'incident.updated',
  // An SLO burn alert awaited again by the incident it kept open: an update, not a second opened.
  [INCIDENT_ALERT_TRIGGERED_AGAIN]: 'incident.updated',
  [INCIDENTS_ABSORBED]: 'incident.merged',
  [CHECKPOINT_ADDED]: 'incident.checkpoint_added',
};

/** Log event types that may notify. */
export const NOTIFYING_EVENT_TYPES = [...Object.keys(INCIDENT_TYPES), ALERT_SIGNAL_TRIGGERED, ALERT_SIGNAL_RECOVERED];

/** The notification type a log event raises, or null. */
export function notificationTypeOf(event: { type: string; data: unknown }): NotificationType | null {
  if (event.type === ALERT_SIGNAL_TRIGGERED) return 'alert.triggered';
  if (event.type === ALERT_SIGNAL_RECOVERED) return 'alert.recovered';
  // A source resolved by a merge is announced once, as the target's incident.merged.
  if (event.type === INCIDENT_RESOLVED && (event.data as IncidentResolvedData).by === 'merge') return null;
  return INCIDENT_TYPES[event.type] ?? null;
}

export type AlertEventData = AlertSignalTriggeredData | AlertSignalRecoveredData;
