import { rollupId } from '../../../src/analytics/domain/rollup.js';
import { RAW_CHECKS_COLLECTION, ROLLUPS_COLLECTION } from '../../../src/analytics/domain/views.js';
import { check, queryOver } from './support/checks.js';

const seconds = (iso: string) => Date.parse(iso) / 1000;

describe('analytics rollups projection', () => {
  it('sums applicable checks per minute, hour and UTC day for the endpoint and its team (projects are summed from their endpoints)', async () => {
    const { store } = await queryOver(
      [
        check({ checked_at: '2026-03-01T10:15:30.000Z', latency_ms: 120 }),
        check({ checked_at: '2026-03-01T10:45:00.000+00:00', success: false, latency_ms: 80 }),
        check({ checked_at: '2026-03-01T10:46:00.000Z', source: 'manual', latency_ms: 5 }),
        check({ checked_at: '2026-03-01T10:47:00.000Z', alert_suppressed: true, latency_ms: 5 }),
      ],
      undefined,
      2,
    );
    const hour = await store.get(ROLLUPS_COLLECTION, rollupId('endpoint', 1, 'hour', seconds('2026-03-01T10:00:00Z')));
    expect(hour).toMatchObject({ checks: 2, failures: 1, latency_sum: 200, latency_min: 80, latency_max: 120 });
    const day = await store.get(ROLLUPS_COLLECTION, rollupId('team', 1, 'day', seconds('2026-03-01T00:00:00Z')));
    expect(day).toMatchObject({ checks: 2, failures: 1 });
    const minute = await store.get(ROLLUPS_COLLECTION, rollupId('endpoint', 1, 'minute', seconds('2026-03-01T10:15:00Z')));
    expect(minute).toMatchObject({ checks: 1, failures: 0, latency_sum: 120 });
    // 2 scopes (endpoint, team) x (2 minutes + 1 hour + 1 day); no project rollups
    expect(await store.count(ROLLUPS_COLLECTION)).toBe(8);
    expect(await store.count(RAW_CHECKS_COLLECTION)).toBe(2);
  });
});
