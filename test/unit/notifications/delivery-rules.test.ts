import { deliveryId } from '../../../src/notifications/domain/channel-view.js';
import { afterAttempt, DEFAULT_RETRY_SCHEDULE_MS, pendingState, type AttemptState } from '../../../src/notifications/domain/delivery.js';
import { notificationTypeOf } from '../../../src/notifications/domain/notification-types.js';
import { CHANNEL_CREATED, CHANNEL_SECRET_ROTATED, channelWants, evolveChannel, signingSecrets } from '../../../src/notifications/domain/channel.js';

const T0 = Date.parse('2026-11-23T12:00:00.000Z');
const failure = { delivered: false, status: 500, error: 'status: 500' };

describe('delivery rules', () => {
  it('retries after about 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then fails (eight attempts)', () => {
    expect(DEFAULT_RETRY_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    let state: AttemptState = pendingState('msg_1', 1, 10, T0, new Date(T0).toISOString());
    const waits: number[] = [];
    let now = T0;
    while (state.state === 'pending') {
      state = afterAttempt(state, failure, now, DEFAULT_RETRY_SCHEDULE_MS, () => 0.5);
      if (state.next_attempt_ms !== null) {
        waits.push(state.next_attempt_ms - now);
        now = state.next_attempt_ms;
      }
    }
    expect(waits).toEqual(DEFAULT_RETRY_SCHEDULE_MS);
    expect(state).toMatchObject({ state: 'failed', attempts: 8, last_status_code: 500, last_error: 'status: 500', next_attempt_ms: null, delivered_at: null });
  });

  it('spreads each wait by at most 20% either way', () => {
    const state = pendingState('msg_1', 1, 10, T0, '');
    expect(afterAttempt(state, failure, T0, [1000], () => 0).next_attempt_ms).toBe(T0 + 800);
    expect(afterAttempt(state, failure, T0, [1000], () => 0.999999).next_attempt_ms).toBe(T0 + 1200);
  });

  it('a delivered attempt settles with its status and time; no answer leaves the status null', () => {
    const state = pendingState('msg_1', 1, 10, T0, '');
    expect(afterAttempt(state, { delivered: true, status: 204, error: null }, T0)).toMatchObject({ state: 'delivered', attempts: 1, last_status_code: 204, delivered_at: new Date(T0).toISOString(), next_attempt_ms: null });
    expect(afterAttempt(state, { delivered: false, status: null, error: 'refused: x' }, T0)).toMatchObject({ state: 'pending', last_status_code: null, last_error: 'refused: x' });
  });
});

describe('notification types', () => {
  it('comments and linked checks never notify; a source resolved by a merge is announced by the merge', () => {
    expect(notificationTypeOf({ type: 'CommentAdded', data: {} })).toBeNull();
    expect(notificationTypeOf({ type: 'CommentUpdated', data: {} })).toBeNull();
    expect(notificationTypeOf({ type: 'CommentDeleted', data: {} })).toBeNull();
    expect(notificationTypeOf({ type: 'IncidentCheckLinked', data: {} })).toBeNull();
    expect(notificationTypeOf({ type: 'IncidentResolved', data: { by: 'merge' } })).toBeNull();
    expect(notificationTypeOf({ type: 'IncidentResolved', data: { by: 'manual' } })).toBe('incident.resolved');
    expect(notificationTypeOf({ type: 'IncidentStatusChanged', data: {} })).toBe('incident.updated');
    expect(notificationTypeOf({ type: 'IncidentsAbsorbed', data: {} })).toBe('incident.merged');
    expect(notificationTypeOf({ type: 'AlertSignalTriggered', data: {} })).toBe('alert.triggered');
  });
});

describe('channels', () => {
  const created = evolveChannel(null, {
    type: CHANNEL_CREATED,
    data: { channel_id: 1, team_id: 1, name: 'n', kind: 'webhook', config: { url: 'https://h.example/x' }, secret: 'whsec_old', events: ['incident.opened'], project_ids: [3], enabled: true, created_at: '2026-11-23T12:00:00.000Z' },
  })!;

  it('filters by type and project', () => {
    expect(channelWants(created, 'incident.opened', 3)).toBe(true);
    expect(channelWants(created, 'incident.resolved', 3)).toBe(false);
    expect(channelWants(created, 'incident.opened', 4)).toBe(false);
    expect(channelWants({ ...created, enabled: false }, 'incident.opened', 3)).toBe(false);
    expect(channelWants({ ...created, events: null, project_ids: null }, 'alert.triggered', null)).toBe(true);
  });

  it('signs with the old secret too until the rotation grace ends', () => {
    const rotated = evolveChannel(created, {
      type: CHANNEL_SECRET_ROTATED,
      data: { channel_id: 1, team_id: 1, secret: 'whsec_new', previous_expires_at: new Date(T0 + 1000).toISOString(), rotated_at: new Date(T0).toISOString() },
    })!;
    expect(signingSecrets(rotated, T0 + 999)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(rotated, T0 + 1000)).toEqual(['whsec_new']);
  });

  it('names a delivery with a ULID of the event\'s recording time, stable per event and channel, in time order', () => {
    const at = (ms: number, id = `event-${ms}`) => ({ id, recordedAt: new Date(ms).toISOString() });
    const event = at(Date.parse('2026-11-23T12:00:00.000Z'));
    expect(deliveryId(event, 7)).toBe(deliveryId(event, 7));
    expect(new Set([deliveryId(event, 7), deliveryId(event, 8), deliveryId({ ...event, id: 'another' }, 7)]).size).toBe(3);
    expect(deliveryId(event, 7)).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);

    const times = [0, 1, 31, 32, 1_023, 1_024, Date.parse('2026-11-23T12:00:00.000Z'), Date.parse('2026-11-23T12:00:00.001Z'), 2 ** 48 - 1];
    const ids = times.map((ms) => deliveryId(at(ms), 1));
    expect([...ids].sort()).toEqual(ids);
    const decodedTime = (id: string) => [...id.slice(4, 14)].reduce((ms, c) => ms * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(c), 0);
    expect(ids.map(decodedTime)).toEqual(times);
    expect(() => deliveryId({ id: 'e', recordedAt: 'not a time' }, 1)).toThrow(/recording time/);
  });
});
