/** The notifications reactor, given events: the channel view the admin routes read and the delivery records the worker sends. */
import { notificationsReactor } from '../../../src/notifications/reactors/notifications/reactor.js';
import type { DeliveryRecord } from '../../../src/notifications/domain/delivery.js';
import { CHANNELS, DELIVERIES } from '../../../src/notifications/reactors/notifications/view.js';
import { given } from '../../support/projection-spec.js';

const T0 = '2026-11-23T10:00:00.000Z';
const T1 = '2026-11-23T11:00:00.000Z';

const webhook = (channel_id: number, project_ids: number[] | null) => ({
  type: 'NotificationChannelCreated',
  data: {
    channel_id,
    team_id: 1,
    kind: 'webhook',
    name: `hook ${channel_id}`,
    events: null,
    project_ids,
    enabled: true,
    config: { url: 'https://hooks.example.com/secret-path?token=abc' },
    secret: 'whsec_c2VjcmV0LXNpZ25pbmcta2V5',
    created_at: T0,
  },
});

const opened = (incident_id: number, project_id: number) => ({
  type: 'IncidentOpened',
  streamId: `incident-${incident_id}`,
  data: {
    incident_id,
    team_id: 1,
    project_id,
    endpoint_ids: [5],
    title: 'API down',
    type: 'availability',
    severity: 'major',
    detection_reason: 'three failures',
    metadata: {},
    status_id: 1,
    status_name: 'Investigating',
    auto_resolve: true,
    first_error_at: T0,
    last_error_at: T0,
    source: 'automatic',
    opened_at: T0,
  },
});

const deliveries = (views: Awaited<ReturnType<typeof given>>) => (views.documents(DELIVERIES) as unknown as DeliveryRecord[]).map((d) => [d.channel_id, d.type, d.incident_id]);

describe('notifications reactor', () => {
  it('keeps the channel view without its URL, query or secret (host and url_configured only)', async () => {
    const views = await given(notificationsReactor, [webhook(3, null)]);
    expect(views.document(CHANNELS, '3')).toMatchObject({ channel_num: 3, team_id: 1, kind: 'webhook', url_configured: true, host: 'hooks.example.com', enabled: true });
    const stored = JSON.stringify(views.documents(CHANNELS));
    for (const hidden of ['secret-path', 'token=abc', 'whsec_c2VjcmV0LXNpZ25pbmcta2V5']) expect(stored).not.toContain(hidden);
  });

  it('records one delivery per incident event per channel that wants its project, and none for a deleted channel', async () => {
    const views = await given(notificationsReactor, [
      webhook(3, null),
      webhook(4, [2]),
      webhook(6, [9]),
      webhook(7, null),
      { type: 'NotificationChannelDeleted', data: { channel_id: 7, team_id: 1, deleted_at: T0 } },
      opened(11, 2),
    ]);
    expect(deliveries(views).sort()).toEqual([
      [3, 'incident.opened', 11],
      [4, 'incident.opened', 11],
    ]);
    expect(views.document(CHANNELS, '7')).toBeUndefined();
  });

  it("sees a channel created or deleted between two incidents of one batch", async () => {
    // `given` applies these in one batch and in one batch per event: both must agree.
    const views = await given(notificationsReactor, [
      webhook(3, null),
      opened(10, 2),
      opened(11, 2),
      webhook(4, null),
      opened(12, 2),
      { type: 'NotificationChannelDeleted', data: { channel_id: 3, team_id: 1, deleted_at: T0 } },
      opened(13, 2),
    ]);
    expect(deliveries(views).sort()).toEqual([
      [3, 'incident.opened', 10],
      [3, 'incident.opened', 11],
      [3, 'incident.opened', 12],
      [4, 'incident.opened', 12],
      [4, 'incident.opened', 13],
    ]);
  });

  it('follows an incident moved to another project, and a test request records a ping', async () => {
    const views = await given(notificationsReactor, [
      webhook(4, [2]),
      webhook(6, [9]),
      opened(11, 2),
      { type: 'IncidentDetailsUpdated', streamId: 'incident-11', data: { incident_id: 11, team_id: 1, changes: { project_id: { from: 2, to: 9 } }, updated_at: T1 } },
      { type: 'NotificationChannelTestRequested', data: { channel_id: 6, team_id: 1, requested_at: T1 } },
    ]);
    expect(deliveries(views).sort()).toEqual([
      [4, 'incident.opened', 11],
      [6, 'incident.updated', 11],
      [6, 'ping', null],
    ]);
  });

  it('records a trigger once its incident link is seen and names the incident; the recovery names it too', async () => {
    const alert = (type: string) => ({ type, streamId: 'checks-5', data: { endpoint_id: 5, team_id: 1, project_id: 2, signal: 'availability', check_id: 40, at: T1 } });
    const views = await given(notificationsReactor, [
      webhook(3, null),
      alert('AlertSignalTriggered'),
      { type: 'AlertSignalIncidentLinked', streamId: 'checks-5', data: { endpoint_id: 5, signal: 'availability', incident_id: 11 } },
      alert('AlertSignalRecovered'),
    ]);
    const records = views.documents(DELIVERIES) as unknown as DeliveryRecord[];
    const signals = records.map((d) => [d.type, d.signal?.state, d.signal?.incident_id, d.incident_id]).sort();
    // The recovered signal shows no incident (as alert-status does), the delivery names the one it resolves.
    expect(signals).toEqual([
      ['alert.recovered', 'ok', null, 11],
      ['alert.triggered', 'triggered', 11, 11],
    ]);
    // One record per log position per channel: the trigger's sits at its link's position.
    expect(new Set(records.map((d) => d.position)).size).toBe(2);
  });

  it('a trigger whose link comes after the recovery goes out at the recovery, and the recovery at the link', async () => {
    const alert = (type: string) => ({ type, streamId: 'checks-5', data: { endpoint_id: 5, team_id: 1, project_id: 2, signal: 'availability', check_id: 40, at: T1 } });
    const views = await given(notificationsReactor, [
      webhook(3, null),
      alert('AlertSignalTriggered'),
      alert('AlertSignalRecovered'),
      { type: 'AlertSignalIncidentLinked', streamId: 'checks-5', data: { endpoint_id: 5, signal: 'availability', incident_id: 12 } },
    ]);
    const records = (views.documents(DELIVERIES) as unknown as DeliveryRecord[]).sort((a, b) => a.position - b.position);
    expect(records.map((d) => [d.type, d.incident_id])).toEqual([
      ['alert.triggered', null],
      ['alert.recovered', 12],
    ]);
    expect(records[0].position).toBeLessThan(records[1].position);
  });

  it('carries the regions of an endpoint with regions in the alert deliveries, as at each decision', async () => {
    const regions = (failing: string[], up: string[]) => ({ failing, up, unknown: [], quorum: 2 });
    const alert = (type: string, evidence: object) => ({ type, streamId: 'alerts-5', data: { endpoint_id: 5, team_id: 1, project_id: 2, signal: 'availability', check_id: 40, at: T1, regions: evidence } });
    const views = await given(notificationsReactor, [
      webhook(3, null),
      alert('AlertSignalTriggered', regions(['a', 'b'], ['c'])),
      { type: 'AlertSignalIncidentLinked', streamId: 'alerts-5', data: { endpoint_id: 5, signal: 'availability', incident_id: 11 } },
      alert('AlertSignalRecovered', regions([], ['a', 'b', 'c'])),
    ]);
    const records = (views.documents(DELIVERIES) as unknown as DeliveryRecord[]).sort((a, b) => a.position - b.position);
    expect(records.map((d) => [d.type, d.extra])).toEqual([
      ['alert.triggered', { regions: regions(['a', 'b'], ['c']) }],
      ['alert.recovered', { regions: regions([], ['a', 'b', 'c']) }],
    ]);
  });
});
