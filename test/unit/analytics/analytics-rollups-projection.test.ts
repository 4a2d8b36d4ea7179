import { rollupId } from '../../../src/analytics/domain/rollup.js';
import { RAW_CHECKS_COLLECTION, ROLLUPS_COLLECTION } from '../../../src/analytics/views/rollups/view.js';
import { check, queryOver } from './support/checks.js';

const MINUTE = (iso: string) => rollupId('project', 1, 'minute', seconds(iso));

const seconds = (iso: string) => Date.parse(iso) / 1000;

describe('analytics rollups projection', () => {
  it('sums applicable checks per minute, hour and UTC day for the endpoint, its project and its team', async () => {
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
    // Project rows keep counts and sums only: an endpoint moving out takes its share back exactly.
    const projectHour = await store.get(ROLLUPS_COLLECTION, rollupId('project', 1, 'hour', seconds('2026-03-01T10:00:00Z')));
    expect(projectHour).toMatchObject({ checks: 2, failures: 1, latency_sum: 200, latency_min: null, latency_max: null });
    // 3 scopes (endpoint, project, team) x (2 minutes + 1 hour + 1 day)
    expect(await store.count(ROLLUPS_COLLECTION)).toBe(12);
    // Every check has a raw row (the checks list reads them); only outcomes 0 and 1 are counted.
    expect((await store.find(RAW_CHECKS_COLLECTION, {})).map((row) => row.outcome)).toEqual([1, 0, 3, 3]);
  });

  it('moves an endpoint’s share of the project rows, and its raw rows, to the project it moved to', async () => {
    const { store } = await queryOver(
      [
        check({ checked_at: '2026-03-01T10:15:30.000Z', endpoint_id: 1, latency_ms: 120 }),
        check({ checked_at: '2026-03-01T10:15:40.000Z', endpoint_id: 2, success: false, latency_ms: 80 }),
      ],
      undefined,
      1,
      undefined,
      [{ before: 2, endpoint_id: 1, team_id: 1, project_id: 7 }],
    );
    expect(await store.get(ROLLUPS_COLLECTION, MINUTE('2026-03-01T10:15:00Z'))).toMatchObject({ checks: 1, failures: 1, latency_sum: 80 });
    expect(await store.get(ROLLUPS_COLLECTION, rollupId('project', 7, 'day', seconds('2026-03-01T00:00:00Z')))).toMatchObject({ checks: 1, failures: 0, latency_sum: 120 });
    expect((await store.find(RAW_CHECKS_COLLECTION, {})).map((row) => [row.endpoint_id, row.project_id])).toEqual([
      [1, 7],
      [2, 1],
    ]);
  });
});
