import {
  ALERT_SIGNAL_INCIDENT_LINKED,
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  type AlertSignalIncidentLinkedData,
} from '../../../alerting/domain/endpoint-alerts.js';
import {
  CHECKPOINT_ADDED,
  INCIDENT_DETAILS_UPDATED,
  INCIDENT_OPENED,
  INCIDENTS_ABSORBED,
  type CheckpointAddedData,
  type IncidentDetailsUpdatedData,
  type IncidentOpenedData,
  type IncidentsAbsorbedData,
} from '../../../incidents/domain/events.js';
import {
  CHANNEL_CREATED,
  CHANNEL_DELETED,
  CHANNEL_DISABLED_BY_RECEIVER,
  CHANNEL_SECRET_ROTATED,
  CHANNEL_TEST_REQUESTED,
  CHANNEL_UPDATED,
  channelWants,
  evolveChannel,
  type Channel,
} from '../../domain/channel.js';
import type { DeliveryRecord } from '../../domain/delivery.js';
import { deliveryId, stripHidden, toChannelDoc, type StoredChannel } from '../../domain/channel-view.js';
import {
  CHANNELS,
  DELIVERIES,
  LINKED_SIGNALS,
  type LinkedSignal,
  NOTIFICATIONS_VIEW,
  NOTIFIED_INCIDENTS,
  type NotifiedIncident,
  PENDING_ALERTS,
  type PendingAlert,
  signalKey,
} from './view.js';
import { NOTIFYING_EVENT_TYPES, notificationTypeOf, type AlertEventData, type NotificationType } from '../../domain/notification-types.js';
import type { RecordedEvent } from '../../../platform/event-store/event-store.port.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { defineProjection, type ProjectionHandler, type ViewTransaction } from '../../../platform/projections/projection.js';

const onChannelEvent: ProjectionHandler = async (event, views) => {
  const { channel_id } = event.data as { channel_id: number };
  const stored = (await views.get(CHANNELS, String(channel_id))) as StoredChannel | null;
  const folded = evolveChannel(stored?.folded ?? null, event);
  if (!folded) return;
  if (folded.deleted) {
    views.delete(CHANNELS, String(channel_id));
    return;
  }
  views.put(CHANNELS, { ...toChannelDoc(folded), folded: stripHidden(folded) } as unknown as Doc);
  if (event.type === CHANNEL_TEST_REQUESTED) {
    views.put(DELIVERIES, record(event, 'ping', folded, { incident_id: null, extra: { channel_id, message: 'Test notification from the monitoring service.' } }) as unknown as Doc);
  }
};

function record(
  event: RecordedEvent,
  type: NotificationType,
  channel: Pick<Channel, 'id' | 'team_id'>,
  fields: Partial<Pick<DeliveryRecord, 'incident_id' | 'endpoint_id' | 'signal' | 'extra'>>,
): DeliveryRecord {
  return {
    id: deliveryId(event, channel.id),
    channel_id: channel.id,
    team_id: channel.team_id,
    type,
    event_id: event.id,
    stream_id: event.streamId,
    revision: event.revision,
    position: event.position,
    timestamp: event.metadata.occurred_at ?? event.recordedAt,
    incident_id: fields.incident_id ?? null,
    endpoint_id: fields.endpoint_id ?? null,
    signal: fields.signal ?? null,
    extra: fields.extra ?? {},
    created_at: event.recordedAt,
  };
}

async function fanOut(
  views: ViewTransaction,
  event: RecordedEvent,
  type: NotificationType,
  teamId: number,
  projectId: number | null,
  fields: Parameters<typeof record>[3],
): Promise<void> {
  const channels = (await views.find(CHANNELS, { filter: { team_id: teamId } })) as unknown as StoredChannel[];
  for (const channel of channels) {
    if (channelWants(channel, type, projectId)) views.put(DELIVERIES, record(event, type, channel.folded, fields) as unknown as Doc);
  }
}

const onIncidentEvent: ProjectionHandler = async (event, views) => {
  const data = event.data as { incident_id: number };
  const id = String(data.incident_id);
  if (event.type === INCIDENT_OPENED) {
    const opened = event.data as IncidentOpenedData;
    views.put(NOTIFIED_INCIDENTS, { id, team_id: opened.team_id, project_id: opened.project_id } satisfies NotifiedIncident);
  } else if (event.type === INCIDENT_DETAILS_UPDATED) {
    const project = (event.data as IncidentDetailsUpdatedData).changes.project_id;
    const known = (await views.get(NOTIFIED_INCIDENTS, id)) as NotifiedIncident | null;
    if (known && project) views.put(NOTIFIED_INCIDENTS, { ...known, project_id: project.to });
  }
  const type = notificationTypeOf(event);
  if (!type) return;
  const incident = (await views.get(NOTIFIED_INCIDENTS, id)) as NotifiedIncident | null;
  if (!incident) return;
  const extra: Record<string, unknown> = {};
  if (event.type === CHECKPOINT_ADDED) {
    const c = event.data as CheckpointAddedData;
    extra.checkpoint = { id: c.checkpoint_id, title: c.title, body: c.body, status_label: c.status_label, created_at: c.created_at, updated_at: c.created_at };
  }
  if (event.type === INCIDENTS_ABSORBED) {
    // As the API's detail of the target lists them (`merged_incidents`), merge time included.
    const absorbed = event.data as IncidentsAbsorbedData;
    extra.merged_incidents = absorbed.sources.map((s) => ({ id: s.id, title: s.title, merged_at: absorbed.merged_at }));
  }
  await fanOut(views, event, type, incident.team_id, incident.project_id, { incident_id: data.incident_id, extra });
};

/**
 * Alert events. A trigger opens or joins an incident, which the automatic-incidents reactor
 * records after it (AlertSignalIncidentLinked), so alert.triggered is recorded once its link is
 * seen and names the incident (its record sits at the link's log position; its id and time are
 * the trigger's). If the signal recovers before any link is seen (that reactor lagging behind),
 * the trigger goes out at the recovery without an incident and the recovery waits for the link
 * (or the signal's next trigger). A recovery names the incident linked to the trigger.
 */
const onAlertEvent: ProjectionHandler = async (event, views) => {
  const data = event.data as AlertEventData;
  const key = signalKey(data.endpoint_id, data.signal);
  const pending = (await views.get(PENDING_ALERTS, key)) as PendingAlert | null;
  if (event.type === ALERT_SIGNAL_TRIGGERED) {
    // A recovery still waiting for a link that never came goes out now, before the new trigger waits.
    if (pending?.type === 'alert.recovered') await fanOutAlert(views, pending, event.position, null);
    views.delete(LINKED_SIGNALS, key);
    views.put(PENDING_ALERTS, pendingAlert(event, key, 'alert.triggered') as unknown as Doc);
    return;
  }
  const linked = ((await views.get(LINKED_SIGNALS, key)) as LinkedSignal | null)?.incident_id ?? null;
  views.delete(LINKED_SIGNALS, key);
  if (pending?.type === 'alert.triggered') {
    await fanOutAlert(views, pending, event.position, null);
    views.put(PENDING_ALERTS, pendingAlert(event, key, 'alert.recovered') as unknown as Doc);
    return;
  }
  views.delete(PENDING_ALERTS, key);
  await fanOutAlert(views, pendingAlert(event, key, 'alert.recovered'), event.position, linked);
};

const onSignalLinked: ProjectionHandler = async (event, views) => {
  const data = event.data as AlertSignalIncidentLinkedData;
  const key = signalKey(data.endpoint_id, data.signal);
  const pending = (await views.get(PENDING_ALERTS, key)) as PendingAlert | null;
  if (pending) {
    views.delete(PENDING_ALERTS, key);
    await fanOutAlert(views, pending, event.position, data.incident_id);
  }
  if (pending?.type !== 'alert.recovered') views.put(LINKED_SIGNALS, { id: key, incident_id: data.incident_id } satisfies LinkedSignal);
};

function pendingAlert(event: RecordedEvent, key: string, type: PendingAlert['type']): PendingAlert {
  const data = event.data as AlertEventData;
  return {
    id: key,
    type,
    event: { id: event.id, streamId: event.streamId, revision: event.revision, recordedAt: event.recordedAt, occurred_at: event.metadata.occurred_at ?? event.recordedAt },
    team_id: data.team_id,
    project_id: data.project_id,
    endpoint_id: data.endpoint_id,
    signal: data.signal,
    at: data.at,
    ...(data.regions === undefined ? {} : { regions: data.regions }),
    ...(data.flapping === true ? { flapping: true as const } : {}),
  };
}

/** Records an alert's deliveries at `position` (the event being handled), naming `incidentId`. */
async function fanOutAlert(views: ViewTransaction, alert: PendingAlert, position: number, incidentId: number | null): Promise<void> {
  const triggered = alert.type === 'alert.triggered';
  // The signal as alert-status shows it once the event is applied: a recovered signal has no incident.
  const signal = { type: alert.signal, state: triggered ? ('triggered' as const) : ('ok' as const), since: alert.at, incident_id: triggered ? incidentId : null };
  const event = {
    id: alert.event.id,
    streamId: alert.event.streamId,
    revision: alert.event.revision,
    position,
    recordedAt: alert.event.recordedAt,
    metadata: { occurred_at: alert.event.occurred_at },
  } as RecordedEvent;
  const extra = { ...(alert.regions === undefined ? {} : { regions: alert.regions }), ...(alert.flapping ? { flapping: true } : {}) };
  await fanOut(views, event, alert.type, alert.team_id, alert.project_id, { endpoint_id: alert.endpoint_id, signal, incident_id: incidentId, extra });
}

/**
 * The notifications reactor: turns incident and alert events into delivery records, one per
 * event per matching channel. It is a reactor (never rebuilt, starts at the log's head): its
 * records are written in the same commit as its checkpoint, so a crash or a lost lease neither
 * loses nor repeats one. Sending is the delivery worker's job (src/notifications/application).
 *
 * Collections and their document types: view.ts. Incidents opened
 * before the reactor first ran are unknown to it and do not notify.
 */
export const notificationsReactor = defineProjection({
  kind: 'reactor',
  startFrom: 'end',
  name: NOTIFICATIONS_VIEW,
  version: 2,
  collections: [
    { name: CHANNELS, indexes: [{ fields: ['team_id', 'channel_num'] }] },
    { name: DELIVERIES, indexes: [{ fields: ['channel_id', 'position'] }, { fields: ['position'] }] },
    { name: NOTIFIED_INCIDENTS, indexes: [] },
    { name: LINKED_SIGNALS, indexes: [] },
    { name: PENDING_ALERTS, indexes: [] },
  ],
  handlers: {
    ...Object.fromEntries(
      [CHANNEL_CREATED, CHANNEL_UPDATED, CHANNEL_SECRET_ROTATED, CHANNEL_DISABLED_BY_RECEIVER, CHANNEL_DELETED, CHANNEL_TEST_REQUESTED].map((type) => [type, onChannelEvent]),
    ),
    ...Object.fromEntries(NOTIFYING_EVENT_TYPES.filter((t) => t !== ALERT_SIGNAL_TRIGGERED && t !== ALERT_SIGNAL_RECOVERED).map((type) => [type, onIncidentEvent])),
    [INCIDENT_DETAILS_UPDATED]: onIncidentEvent,
    [ALERT_SIGNAL_TRIGGERED]: onAlertEvent,
    [ALERT_SIGNAL_RECOVERED]: onAlertEvent,
    [ALERT_SIGNAL_INCIDENT_LINKED]: onSignalLinked,
  },
});
