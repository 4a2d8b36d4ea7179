/**
 * A notification's payload is the incident as it stood at the event, on every attempt. It comes
 * from the process's fold of the incident: an attempt does not replay the incident's stream.
 */
import { join } from 'node:path';
import { buildPayload } from '../../../src/notifications/application/payloads.js';
import type { DeliveryRecord } from '../../../src/notifications/domain/delivery.js';
import type { EventStore, NewEvent } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import type { Platform } from '../../../src/platform/platform.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';

const T0 = '2026-11-23T10:00:00.000Z';
const STREAM = 'incident-7';

const opened: NewEvent = {
  type: 'IncidentOpened',
  data: {
    incident_id: 7, team_id: 1, project_id: 2, endpoint_ids: [5], title: 'API down', type: 'availability', severity: 'major',
    detection_reason: 'three failures', metadata: {}, status_id: 1, status_name: 'Investigating', auto_resolve: true,
    first_error_at: T0, last_error_at: T0, source: 'automatic', opened_at: T0,
  },
  metadata: { causation_id: 'trigger-1' },
};
const linked = (id: number): NewEvent => ({
  type: 'IncidentCheckLinked',
  data: {
    incident_id: 7,
    linked_at: T0,
    check: {
      id, endpoint_id: 5, configuration_version: 1, success: false, status_code: 503, latency_ms: 40, time_to_first_byte_ms: 10, duration_ms: 40,
      source: 'scheduled', body_complete: true, latency_anomaly: false, latency_threshold_ms: null, alert_suppressed: false,
      failure_reason: 'status: 503', response_excerpt_omitted: false, checked_at: T0,
    },
  },
  metadata: { causation_id: 'trigger-1' },
});
const comment = (id: number): NewEvent => ({ type: 'CommentAdded', data: { incident_id: 7, comment_id: id, body: `note ${id}`, pinned: false, created_at: T0 } });

const record = (revision: number, type: DeliveryRecord['type']): DeliveryRecord => ({
  id: `msg_${revision}`, channel_id: 1, team_id: 1, type, event_id: `e${revision}`, stream_id: STREAM, revision, position: revision + 1,
  timestamp: T0, incident_id: 7, endpoint_id: null, signal: null, extra: {}, created_at: T0,
});

describe('notification payloads from the incident fold', () => {
  const dir = makeTempDir('payloads-');
  let store: SqliteEventStore;
  let eventsRead = 0;
  let platform: Platform;
  beforeAll(async () => {
    store = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    // Opened with three failing checks linked in the same append, then 300 comments.
    await store.append(STREAM, [opened, linked(1), linked(2), linked(3)], { expectedRevision: 'no_stream' });
    await store.append(STREAM, Array.from({ length: 300 }, (_, i) => comment(i + 1)), { expectedRevision: 3 });
    const counted = new Proxy(store, {
      get(target, name) {
        if (name === 'readStream') {
          return async (...args: Parameters<EventStore['readStream']>) => {
            const events = await target.readStream(...args);
            eventsRead += events.length;
            return events;
          };
        }
        const value = Reflect.get(target, name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    platform = { events: counted } as unknown as Platform;
  });
  afterAll(async () => {
    await store.close();
    dir.remove();
  });

  const read = async (rec: DeliveryRecord) => {
    const before = eventsRead;
    const payload = await buildPayload(platform, rec);
    return { incident: payload.data.incident as { checks_total?: number; comments_total?: number; id: number }, read: eventsRead - before };
  };

  it('shows the incident as it stood at the event, with the checks linked in its append', async () => {
    const first = await read(record(0, 'incident.opened'));
    expect(first.incident).toMatchObject({ id: 7, title: 'API down', error_count: 3 });
    expect((await read(record(303, 'incident.updated'))).incident).toEqual(first.incident);
  });

  it('reads nothing for a retry, and only the events after the nearest state it kept for a later event', async () => {
    await read(record(302, 'incident.updated'));
    expect((await read(record(302, 'incident.updated'))).read).toBe(0);
    expect((await read(record(303, 'incident.updated'))).read).toBeLessThanOrEqual(1);
    // From the state kept at 0..3: the events up to 150 and the one after it.
    expect((await read(record(150, 'incident.updated'))).read).toBe(148);
  });

  it('gives an alert of an endpoint with regions the regions as at the decision, and others none', async () => {
    const signal = { type: 'availability', state: 'triggered', since: T0, incident_id: 7 };
    const alert = (extra: Record<string, unknown>): DeliveryRecord => ({ ...record(0, 'alert.triggered'), stream_id: 'alerts-5', endpoint_id: 5, signal, extra } as DeliveryRecord);
    const regions = { failing: ['a', 'b'], up: ['c'], unknown: [], quorum: 2 };
    expect((await buildPayload(platform, alert({ regions }))).data).toEqual({ endpoint_id: 5, signal, incident_id: 7, regions });
    expect((await buildPayload(platform, alert({}))).data).toEqual({ endpoint_id: 5, signal, incident_id: 7 });
  });
});
