import { upcasters } from '../../../src/app/contexts.js';
import { CHECKS_SUMMARIZED, type ChecksSummarizedData } from '../../../src/checks/domain/check-summary.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { withUpcasting } from '../../../src/platform/event-store/upcasting.js';

const HOUR = 1_795_600_800; // an hour start, epoch seconds

function summary(extra: Partial<ChecksSummarizedData> = {}): ChecksSummarizedData {
  return {
    endpoint_id: 3,
    team_id: 1,
    from_revision: 0,
    through_revision: 9,
    horizon: '2026-10-01T00:00:00.000Z',
    // Mostly consecutive blocks, one id out of order and one alone, as an endpoint's ids come.
    check_ids: [100, 101, 102, 103, 250, 104, 400, 401],
    hours: [
      [HOUR, 2, 6, 1, 600, 50, 200, [0, 1, 2, 3, 15, 30]],
      [HOUR + 3600, 2, 2, 0, 200, 100, 100, [59]],
    ],
    latest_applicable: { check_id: 401, checked_at: '2026-11-24T11:59:00.000Z', success: true, status_code: 200, latency_ms: 100 },
    any_success: true,
    trailing_failures: 0,
    ...extra,
  };
}

describe('ChecksSummarized stored shapes', () => {
  let raw: SqliteEventStore;
  beforeEach(() => {
    raw = new SqliteEventStore(':memory:');
  });
  afterEach(() => raw.close());

  it('reads a stored v1 summary (every check id and minute listed) as it was written, leaving the stored event as it was', async () => {
    const v1 = summary();
    await raw.append('check-summaries-3', [{ type: CHECKS_SUMMARIZED, schemaVersion: 1, data: v1, metadata: { occurred_at: '2026-11-25T00:00:00.000Z' } }], { expectedRevision: 'any' });
    const store = withUpcasting(raw, upcasters());
    const [read] = await store.readStream('check-summaries-3');
    expect(read.schemaVersion).toBe(3);
    expect(read.data).toEqual(v1);
    const [stored] = await raw.readStream('check-summaries-3');
    expect(stored.schemaVersion).toBe(1);
    expect(stored.data).toEqual(v1);
  });

  it('reads a stored v2 summary (an array per hour) as it was written', async () => {
    const written = summary({ hours: [...summary().hours, [HOUR + 7200, 2, 1, 0, 90, 90, 90, [7], 'eu-west']] });
    const v2 = {
      ...written,
      check_ids: undefined,
      check_id_runs: [[100, 103], 250, 104, [400, 401]],
      hours: [
        [HOUR, 2, 6, 1, 600, 50, 200, [[0, 3], 15, 30]],
        [HOUR + 3600, 2, 2, 0, 200, 100, 100, [59]],
        [HOUR + 7200, 2, 1, 0, 90, 90, 90, [7], 'eu-west'],
      ],
    };
    delete v2.check_ids;
    await raw.append('check-summaries-3', [{ type: CHECKS_SUMMARIZED, schemaVersion: 2, data: v2, metadata: { occurred_at: '2026-11-25T00:00:00.000Z' } }], { expectedRevision: 'any' });
    const store = withUpcasting(raw, upcasters());
    const [read] = await store.readStream('check-summaries-3');
    expect(read.schemaVersion).toBe(3);
    expect(read.data).toEqual(written);
  });

  it('stores new summaries with check ids as runs and the hour sums as columns, and hands readers every id, hour and minute back in order', async () => {
    const store = withUpcasting(raw, upcasters());
    const written = summary();
    await store.append('check-summaries-3', [{ type: CHECKS_SUMMARIZED, data: written }], { expectedRevision: 'any' });
    const [stored] = await raw.readStream('check-summaries-3');
    expect(stored.schemaVersion).toBe(3);
    const data = stored.data as Record<string, unknown>;
    expect(data.check_ids).toBeUndefined();
    expect(data.check_id_runs).toEqual([[100, 103], 250, 104, [400, 401]]);
    expect(data.hours).toEqual({
      hour_runs: [[HOUR / 3600, HOUR / 3600 + 1]],
      project_ids: [[2, 2]],
      checks: [
        [6, 1],
        [2, 1],
      ],
      failures: [1, 0],
      latency_sums: [600, 200],
      latency_mins: [50, 100],
      latency_maxes: [200, 100],
      minutes: [
        [[[0, 3], 15, 30], 1],
        [[59], 1],
      ],
    });
    const [read] = await store.readStream('check-summaries-3');
    expect(read.data).toEqual(written);
  });

  it('keeps an hour of a regular schedule to its failures and latency figures, and gives hours of several projects and regions back in order', async () => {
    const store = withUpcasting(raw, upcasters());
    const regular = Array.from({ length: 240 }, (_, i): ChecksSummarizedData['hours'][number] => [HOUR + i * 3600, 2, 4, i % 5 === 0 ? 1 : 0, 500 + i, 40 + (i % 7), 900 + i, [0, 15, 30, 45]]);
    const mixed: ChecksSummarizedData['hours'] = [
      [HOUR + 240 * 3600, 2, 1, 0, 90, 90, 90, [1]],
      [HOUR + 240 * 3600, 2, 1, 1, 95, 95, 95, [2], 'eu-west'],
      [HOUR + 240 * 3600, 5, 2, 0, 100, 40, 60, [3, 4]],
      [HOUR + 243 * 3600, 5, 1, 0, 70, 70, 70, [59], 'eu-west'],
    ];
    const written = summary({ hours: [...regular, ...mixed] });
    await store.append('check-summaries-3', [{ type: CHECKS_SUMMARIZED, data: written }], { expectedRevision: 'any' });
    const [stored] = await raw.readStream('check-summaries-3');
    const columns = (stored.data as { hours: Record<string, unknown[]> }).hours;
    expect(columns.hour_runs).toEqual([[HOUR / 3600, HOUR / 3600 + 240], HOUR / 3600 + 240, HOUR / 3600 + 240, HOUR / 3600 + 243]);
    expect(columns.minutes[0]).toEqual([[0, 15, 30, 45], 240]);
    expect(columns.regions).toEqual([
      [null, 241],
      ['eu-west', 1],
      [null, 1],
      ['eu-west', 1],
    ]);
    expect(JSON.stringify(columns).length / 240).toBeLessThan(16);
    const [read] = await store.readStream('check-summaries-3');
    expect(read.data).toEqual(written);
  });

  it('gives back a summary with no applicable check (no hours) as it was written', async () => {
    const store = withUpcasting(raw, upcasters());
    const written = summary({ hours: [], latest_applicable: null, any_success: false });
    await store.append('check-summaries-3', [{ type: CHECKS_SUMMARIZED, data: written }], { expectedRevision: 'any' });
    const [read] = await store.readStream('check-summaries-3');
    expect(read.data).toEqual(written);
  });

  it('keeps a summary of a long run of checks a few bytes long', async () => {
    const store = withUpcasting(raw, upcasters());
    const ids = Array.from({ length: 10_000 }, (_, i) => 5_000 + i);
    await store.append('check-summaries-3', [{ type: CHECKS_SUMMARIZED, data: summary({ check_ids: ids }) }], { expectedRevision: 'any' });
    const [stored] = await raw.readStream('check-summaries-3');
    expect((stored.data as Record<string, unknown>).check_id_runs).toEqual([[5_000, 14_999]]);
    const [read] = await store.readStream('check-summaries-3');
    expect((read.data as ChecksSummarizedData).check_ids).toEqual(ids);
  });
});
