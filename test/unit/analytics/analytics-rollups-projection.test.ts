import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { rollupId } from '../../../src/analytics/domain/rollup.js';
import { RAW_CHECKS_COLLECTION, ROLLUPS_COLLECTION, ROLLUP_MEMBERS_COLLECTION, packStatusAndTimings, rawStatusCode, rawTimings, teamDocId, type RawCheckRow } from '../../../src/analytics/views/rollups/view.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
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

describe('a raw row’s status and timings', () => {
  const read = (row: Pick<RawCheckRow, 'latency_ms' | 'status_and_timings' | 'status_code' | 'time_to_first_byte_ms' | 'duration_ms'>) => [rawStatusCode(row), rawTimings(row)];

  it('are one column, NULL at their defaults (no header byte each), and read back exactly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'raw-row-'));
    try {
      const file = join(dir, 'views.sqlite');
      const checks = [
        check({ checked_at: '2026-03-01T10:15:30.000Z', latency_ms: 120, time_to_first_byte_ms: 120, duration_ms: 120 }),
        check({ checked_at: '2026-03-01T10:15:35.000Z', latency_ms: 120, time_to_first_byte_ms: 118, duration_ms: 164 }),
        check({ checked_at: '2026-03-01T10:15:40.000Z', success: false, status_code: 503, latency_ms: 80, time_to_first_byte_ms: 12.5, duration_ms: 79.75 }),
        check({ checked_at: '2026-03-01T10:15:50.000Z', success: false, status_code: 0, latency_ms: 7, time_to_first_byte_ms: 0, duration_ms: 7 }),
      ];
      const { store } = await queryOver(checks, undefined, 2, new SqliteReadStore(file));
      const rows = (await store.find(RAW_CHECKS_COLLECTION, { sort: [['check_id', 'asc']] })) as unknown as RawCheckRow[];
      expect(rows.map(read)).toEqual(checks.map((c) => [c.status_code, { time_to_first_byte_ms: c.time_to_first_byte_ms, duration_ms: c.duration_ms }]));
      expect(rows.map((row) => row.status_and_timings)).toEqual([null, packStatusAndTimings(200, 120, 118, 164), packStatusAndTimings(503, 80, 12.5, 79.75), packStatusAndTimings(0, 7, 0, 7)]);
      // A duration 44 ms beyond the latency (a new connection) and the first byte 2 ms before the end: two characters.
      expect(rows[1].status_and_timings).toHaveLength(2);
      const raw = new Database(file, { readonly: true });
      try {
        const columns = raw.prepare(`SELECT name FROM pragma_table_info('c_${RAW_CHECKS_COLLECTION}')`).pluck().all();
        expect(columns).toContain('status_and_timings');
        for (const gone of ['status_code', 'time_to_first_byte_ms', 'duration_ms']) expect(columns).not.toContain(gone);
      } finally {
        raw.close();
      }
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('read v13’s rows (NULL for 200 and for timings equal to the latency) and v12’s (every value) the same', () => {
    expect(read({ latency_ms: 50, status_code: null, time_to_first_byte_ms: null, duration_ms: null })).toEqual([200, { time_to_first_byte_ms: 50, duration_ms: 50 }]);
    expect(read({ latency_ms: 50, status_code: 503, time_to_first_byte_ms: 20, duration_ms: null })).toEqual([503, { time_to_first_byte_ms: 20, duration_ms: 50 }]);
    expect(read({ latency_ms: 50, status_code: 200, time_to_first_byte_ms: 50, duration_ms: 61 })).toEqual([200, { time_to_first_byte_ms: 50, duration_ms: 61 }]);
  });

  it('pack any values exactly: beyond and before the latency, statuses, timings that are not integers', () => {
    const cases: Array<[number, number, number, number]> = [
      [200, 120, 120, 121],
      [200, 120, 119, 120],
      [404, 120, 120, 120],
      [0, 30_000, 0, 30_004],
      [999, 0, 0, 0],
      [200, 5, 9, 5],
      [200, 2 ** 40, 3, 2 ** 41],
      [200, 10, 0.1 + 0.2, 10],
      [200, 10, 10, 1e300],
    ];
    for (const [status, latency, ttfb, duration] of cases) {
      const packed = packStatusAndTimings(status, latency, ttfb, duration);
      expect(read({ latency_ms: latency, status_and_timings: packed })).toEqual([status, { time_to_first_byte_ms: ttfb, duration_ms: duration }]);
    }
    expect(packStatusAndTimings(200, 120, 120, 120)).toBeNull();
    expect(packStatusAndTimings(200, 120, 120, 164)).toHaveLength(1);
  });
});

describe('a team’s raw rows, its primary project and the sparse team index', () => {
  // From and to off the minute grid: the edge minutes are read from raw rows.
  const RANGE = { from: Date.parse('2026-03-01T10:15:10.000Z'), to: Date.parse('2026-03-01T10:47:50.000Z') };
  const TEAM = { kind: 'team', id: 1 } as const;
  const inProjectOne = () => [
    check({ checked_at: '2026-03-01T10:15:30.000Z', latency_ms: 120 }),
    check({ checked_at: '2026-03-01T10:30:00.000Z', success: false, latency_ms: 80 }),
    check({ checked_at: '2026-03-01T10:47:20.000Z', latency_ms: 200 }),
  ];
  const teamIds = async (store: SqliteReadStore) => (await store.find(RAW_CHECKS_COLLECTION, {})).map((row) => [row.endpoint_id, row.project_id, row.team_id]);

  it('leaves the team id out of the rows of the team’s first project, and the team reads them through the project', async () => {
    const { store, query } = await queryOver(inProjectOne(), undefined, 2, new SqliteReadStore(':memory:'));
    expect(await teamIds(store)).toEqual([
      [1, 1, null],
      [1, 1, null],
      [1, 1, null],
    ]);
    expect(await query.computeTotals(TEAM, RANGE)).toMatchObject({ checks: 3, failures: 1, avg_latency_ms: 133.33, min_latency_ms: 80, max_latency_ms: 200, p95_latency_ms: 200 });
  });

  it('rewrites no row when a second project appears: its rows carry the team id, the first project’s keep none', async () => {
    const checks = [...inProjectOne(), check({ checked_at: '2026-03-01T10:47:30.000Z', endpoint_id: 2, project_id: 2, latency_ms: 300 })];
    // One batch and one check at a time.
    for (const batchSize of [50, 1]) {
      const { store, query } = await queryOver(checks, undefined, batchSize, new SqliteReadStore(':memory:'));
      expect(await teamIds(store)).toEqual([
        [1, 1, null],
        [1, 1, null],
        [1, 1, null],
        [2, 2, 1],
      ]);
      expect(await query.computeTotals(TEAM, RANGE)).toMatchObject({ checks: 4, failures: 1, avg_latency_ms: 175, min_latency_ms: 80, max_latency_ms: 300, p95_latency_ms: 300 });
    }
  });

  it('gives an endpoint moved out of the primary project the team id on its rows, and takes it from one moved in', async () => {
    const checks = [...inProjectOne(), check({ checked_at: '2026-03-01T10:47:30.000Z', endpoint_id: 2, project_id: 2, latency_ms: 300 })];
    // After every check: each endpoint has rows to relabel.
    const moves = [
      { before: 4, endpoint_id: 1, team_id: 1, project_id: 3 },
      { before: 4, endpoint_id: 2, team_id: 1, project_id: 1 },
    ];
    const { store, query } = await queryOver(checks, undefined, 50, new SqliteReadStore(':memory:'), moves);
    expect(await teamIds(store)).toEqual([
      [1, 3, 1],
      [1, 3, 1],
      [1, 3, 1],
      [2, 1, null],
    ]);
    expect(await query.computeTotals(TEAM, RANGE)).toMatchObject({ checks: 4, failures: 1, avg_latency_ms: 175, min_latency_ms: 80, max_latency_ms: 300, p95_latency_ms: 300 });
  });

  it('takes the project of the team’s first endpoint registered as its primary one, whichever project checks first (retention may prune those)', async () => {
    const checks = [
      check({ checked_at: '2026-03-01T10:15:30.000Z', endpoint_id: 2, project_id: 1, latency_ms: 120 }),
      check({ checked_at: '2026-03-01T10:30:00.000Z', endpoint_id: 1, project_id: 2, latency_ms: 80 }),
    ];
    // Monitoring events before any check (a registration is applied as a move to its project).
    const registered = [
      { before: 0, endpoint_id: 1, team_id: 1, project_id: 2 },
      { before: 0, endpoint_id: 2, team_id: 1, project_id: 1 },
    ];
    const { store, query } = await queryOver(checks, undefined, 50, new SqliteReadStore(':memory:'), registered);
    expect(await teamIds(store)).toEqual([
      [2, 1, 1],
      [1, 2, null],
    ]);
    expect(await query.computeTotals(TEAM, RANGE)).toMatchObject({ checks: 2, failures: 0, min_latency_ms: 80, max_latency_ms: 120 });
  });

  it('reads v9’s rows (every row with its team id, no team document) as the same team, so v9 stays readable while v11 is rebuilt', async () => {
    const checks = [...inProjectOne(), check({ checked_at: '2026-03-01T10:47:30.000Z', endpoint_id: 2, project_id: 2, latency_ms: 300 })];
    const { store, query } = await queryOver(checks, undefined, 50, new SqliteReadStore(':memory:'));
    const v11 = await query.computeTotals(TEAM, RANGE);
    const rows = await store.find(RAW_CHECKS_COLLECTION, {});
    await store.commit([
      ...rows.map((row) => ({ op: 'put' as const, collection: RAW_CHECKS_COLLECTION, doc: { ...row, team_id: 1 } })),
      { op: 'delete' as const, collection: ROLLUP_MEMBERS_COLLECTION, id: teamDocId(1) },
    ]);
    expect(await teamIds(store)).toEqual([
      [1, 1, 1],
      [1, 1, 1],
      [1, 1, 1],
      [2, 2, 1],
    ]);
    expect(await query.computeTotals(TEAM, RANGE)).toEqual(v11);
  });
});
