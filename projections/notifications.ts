import {
  ALERT_SIGNAL_INCIDENT_LINKED,
  ALERT_SIGNAL_RECOVERED,
  ALERT_SIGNAL_TRIGGERED,
  type AlertSignalIncidentLinkedData,
} from '../src/alerting/domain/endpoint-alerts.js';
import {
  CHECKPOINT_ADDED,
  INCIDENT_DETAILS_UPDATED,
  INCIDENT_OPENED,
  INCIDENTS_ABSORBED,
  type CheckpointAddedData,
  type IncidentDetailsUpdatedData,
  type IncidentOpenedData,
  type IncidentsAbsorbedData,
} from '../src/incidents/domain/events.js';
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
} from '../src/notifications/domain/channel.js';
import type { DeliveryRecord } from '../src/notifications/domain/delivery.js';
import { deliveryId, stripHidden, toChannelDoc, type StoredChannel } from '../src/notifications/domain/channel-view.js';
import {
  CHANNELS,
  DELIVERIES,
  LINKED_SIGNALS,
  type LinkedSignal,
  NOTIFICATIONS_VIEW,
  NOTIFIED_INCIDENTS,
  type NotifiedIncident,
  signalKey,
} from '../src/notifications/domain/views.js';
import { NOTIFYING_EVENT_TYPES, notificationTypeOf, type AlertEventData, type NotificationType } from '../src/notifications/domain/notification-types.js';
import type { RecordedEvent } from '../src/platform/event-store/event-store.port.js';
import type { Doc } from '../src/platform/read-store/read-store.port.js';
import { defineProjection, type ProjectionHandler, type ViewTransaction } from '../src/platform/projections/projection.js';

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
    extra.merged_incidents = (event.data as IncidentsAbsorbedData).sources.map((s) => ({ id: s.id, title: s.title }));
  }
  await fanOut(views, event, type, incident.team_id, incident.project_id, { incident_id: data.incident_id, extra });
};

const onAlertEvent: ProjectionHandler = async (event, views) => {
  const data = event.data as AlertEventData;
  const key = signalKey(data.endpoint_id, data.signal);
  let incidentId: number | null = null;
  if (event.type === ALERT_SIGNAL_RECOVERED) incidentId = ((await views.get(LINKED_SIGNALS, key)) as LinkedSignal | null)?.incident_id ?? null;
  views.delete(LINKED_SIGNALS, key);
  const type = notificationTypeOf(event)!;
  const signal = { type: data.signal, state: type === 'alert.triggered' ? ('triggered' as const) : ('ok' as const), since: data.at, incident_id: incidentId };
  await fanOut(views, event, type, data.team_id, data.project_id, { endpoint_id: data.endpoint_id, signal, extra: {} });
};

/**
 * The notifications reactor: turns incident and alert events into delivery records, one per
 * event per matching channel. It is a reactor (never rebuilt, starts at the log's head): its
 * records are written in the same commit as its checkpoint, so a crash or a lost lease neither
 * loses nor repeats one. Sending is the delivery worker's job (src/notifications/application).
 *
 * Collections and their document types: src/notifications/domain/views.ts. Incidents opened
 * before the reactor first ran are unknown to it and do not notify.
 */
export const notificationsReactor = defineProjection({
  kind: 'reactor',
  startFrom: 'end',
  name: NOTIFICATIONS_VIEW,
  version: 1,
  collections: [
    { name: CHANNELS, indexes: [{ fields: ['team_id', 'channel_num'] }] },
    { name: DELIVERIES, indexes: [{ fields: ['channel_id', 'position'] }, { fields: ['position'] }] },
    { name: NOTIFIED_INCIDENTS, indexes: [] },
    { name: LINKED_SIGNALS, indexes: [] },
  ],
  handlers: {
    ...Object.fromEntries(
      [CHANNEL_CREATED, CHANNEL_UPDATED, CHANNEL_SECRET_ROTATED, CHANNEL_DISABLED_BY_RECEIVER, CHANNEL_DELETED, CHANNEL_TEST_REQUESTED].map((type) => [type, onChannelEvent]),
    ),
    ...Object.fromEntries(NOTIFYING_EVENT_TYPES.filter((t) => t !== ALERT_SIGNAL_TRIGGERED && t !== ALERT_SIGNAL_RECOVERED).map((type) => [type, onIncidentEvent])),
    [INCIDENT_DETAILS_UPDATED]: onIncidentEvent,
    [ALERT_SIGNAL_TRIGGERED]: onAlertEvent,
    [ALERT_SIGNAL_RECOVERED]: onAlertEvent,
    [ALERT_SIGNAL_INCIDENT_LINKED]: (event, views) => {
      const data = event.data as AlertSignalIncidentLinkedData;
      views.put(LINKED_SIGNALS, { id: signalKey(data.endpoint_id, data.signal), incident_id: data.incident_id } satisfies LinkedSignal);
    },
  },
});
