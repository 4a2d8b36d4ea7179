/**
 * The notifications reactor's collections (processor `notifications`), defined here once:
 * written by `reactor.ts`, read through `queries.ts` (the channel routes) and by the delivery worker.
 *
 * - channels:   `StoredChannel` (domain/channel-view.ts): the channel view readers get (`ChannelDoc`,
 *               no hidden values) plus the reactor's private fold, stripped before anything leaves;
 * - deliveries: `DeliveryRecord` (domain/delivery.ts), one per event per matching channel;
 * - incidents:  `NotifiedIncident`, for filtering events that do not carry team and project;
 * - signals:    `LinkedSignal`, the incident linked to a triggered signal;
 * - pending_alerts: `PendingAlert`, an alert waiting for its incident link before it is recorded.
 */
export const NOTIFICATIONS_VIEW = 'notifications';

export const CHANNELS = 'channels';
export const DELIVERIES = 'deliveries';
export const NOTIFIED_INCIDENTS = 'incidents';
export const LINKED_SIGNALS = 'signals';
export const PENDING_ALERTS = 'pending_alerts';

/** Incident id -> team and project (an incident opened before the reactor first ran is unknown). */
export interface NotifiedIncident {
  id: string;
  team_id: number;
  project_id: number;
}

/** `<endpoint>:<signal>` -> the incident linked to the signal while it is triggered. */
export interface LinkedSignal {
  id: string;
  incident_id: number;
}

/** `<endpoint>:<signal>` -> an alert event whose deliveries wait for the signal's incident link. */
export interface PendingAlert {
  id: string;
  type: 'alert.triggered' | 'alert.recovered';
  /** The alert event: its id and time make the deliveries' ids and timestamps. */
  event: { id: string; streamId: string; revision: number; recordedAt: string; occurred_at: string };
  team_id: number;
  project_id: number;
  endpoint_id: number;
  signal: string;
  at: string;
  /** An endpoint with regions: the regions as at the decision (failing, up, unknown, quorum). */
  regions?: unknown;
  /** Availability only: the change came while the endpoint flaps (a recovery leaves its incident open). */
  flapping?: true;
}

export const signalKey = (endpointId: number, signal: string): string => `${endpointId}:${signal}`;
