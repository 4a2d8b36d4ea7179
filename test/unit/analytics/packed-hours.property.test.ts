import fc from 'fast-check';
import { analyticsRollupsProjection } from '../../../src/analytics/views/rollups/projection.js';
import { AnalyticsQuery, type AnalyticsCollections } from '../../../src/analytics/views/rollups/queries.js';
import { GoodChecks } from '../../../src/analytics/application/good-checks.js';
import type { AnalyticsFacts } from '../../../src/analytics/application/analytics-facts.js';
import { referenceFigures, referenceP95, type CurrentProjects, type ReferenceScope } from '../../../src/analytics/domain/reference.js';
import { ceilTo, floorTo } from '../../../src/analytics/domain/range-plan.js';
import { makeWindow } from '../../../src/analytics/domain/window.js';
import { addPackedSums, packHours, unpackHours, type PackedHours } from '../../../src/analytics/domain/rollup.js';
import { addAccumulator, emptyAccumulator, type Accumulator } from '../../../src/analytics/domain/aggregate.js';
import { CHECK_MINUTES_COLLECTION, RAW_CHECKS_COLLECTION, REGION_CHECKS_COLLECTION, ROLLUPS_COLLECTION, ROLLUPS_PROJECTION, ROLLUP_MEMBERS_COLLECTION, type RollupMemberDoc, type RollupRow } from '../../../src/analytics/views/rollups/view.js';
import { upcasters } from '../../../src/app/contexts.js';
import { CheckRetention } from '../../../src/checks/application/retention.js';
import { CHECK_RECORDED, checksStream, isApplicable, type CheckRecordedData } from '../../../src/checks/domain/check.js';
import { retentionHorizon } from '../../../src/checks/domain/check-summary.js';
import { ENDPOINT_RECONFIGURED, ENDPOINT_REGISTERED, endpointStream } from '../../../src/monitoring/domain/events.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { withUpcasting } from '../../../src/platform/event-store/upcasting.js';
import { IDS_RESERVED, sequenceStream } from '../../../src/platform/ids/id-allocator.js';
import { silentLogger } from '../../../src/platform/logging/logger.js';
import { ProjectionRunner } from '../../../src/platform/projections/projection-runner.js';
import { ViewReader } from '../../../src/platform/projections/views.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { check } from './support/checks.js';

/**
 * Rollups view v12 packs the hours retention summarized into their day rows (`hours`): every
 * reader must answer as the hour rows did. The reference is brute force over every check ever
 * recorded, the pruned ones included, counted as analytics counts past the horizon (whole hours,
 * rounded inward): the figures of team, project and endpoint totals (a project's endpoints
 * summed together), series (an endpoint's region rows too) and SLO good checks, over ranges that
 * reach past the horizon, before and after an endpoint moves with its packed hours.
 */

const NOW = Date.parse('2026-11-23T12:34:56.789Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const ENDPOINTS = 3;

interface CheckSpec {
  endpoint: number;
  ageMs: number;
  success: boolean;
  latency: number;
  manual: boolean;
  region: string;
}

const checkArb: fc.Arbitrary<CheckSpec> = fc.record({
  endpoint: fc.integer({ min: 1, max: ENDPOINTS }),
  // Up to 6 days back, so that hours hold several checks and retention cuts through them.
  ageMs: fc.integer({ min: 1, max: 6 * DAY }),
  success: fc.boolean(),
  latency: fc.integer({ min: 0, max: 70_000 }),
  manual: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  region: fc.constantFrom('local', 'local', 'a'),
});

/** A range inside the checks' six days, to the millisecond. */
const rangeArb = fc.tuple(fc.integer({ min: 0, max: 6 * DAY }), fc.integer({ min: 1, max: 6 * DAY })).map(([back, length]) => {
  const from = NOW - 6 * DAY + back;
  return { from, to: Math.min(NOW + 1, from + length) };
});

function checkOf(spec: CheckSpec, checkId: number): CheckRecordedData {
  const source = spec.manual ? 'manual' : 'scheduled';
  return check({ check_id: checkId, endpoint_id: spec.endpoint, source, success: spec.success, latency_ms: spec.latency, checked_at: new Date(NOW - spec.ageMs).toISOString(), imported: true, region: spec.region });
}

/** The checks analytics counts in [from, to) with this horizon: before it, whole hours only. */
function countedIn(checks: CheckRecordedData[], from: number, to: number, horizon: number): CheckRecordedData[] {
  const inside = (at: number) =>
    (from < horizon && ceilTo(from, HOUR) <= at && at < floorTo(Math.min(to, horizon), HOUR)) || (Math.max(from, horizon) <= at && at < to);
  return checks.filter((check) => inside(Date.parse(check.checked_at)));
}

function expectedFigures(checks: CheckRecordedData[], scope: ReferenceScope, from: number, to: number, horizon: number, projects: CurrentProjects) {
  return referenceFigures(countedIn(checks, from, to, horizon), scope, from, to, projects);
}

describe('packed hours (rollups v12) answer as hour rows did', () => {
  it('pack and unpack a day of hours exactly (empty hours, missing extremes, large sums), and sum a span of them', () => {
    const count = fc.integer({ min: 1, max: 1_000_000 });
    const value = fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
    const extreme = fc.option(fc.integer({ min: -10_000_000, max: 10_000_000 }), { nil: null });
    const hour = fc.option(fc.record({ checks: count, failures: count, latency_sum: value, latency_min: extreme, latency_max: extreme }), { nil: null });
    fc.assert(
      fc.property(fc.array(hour, { minLength: 24, maxLength: 24 }), (hours: PackedHours) => {
        expect(unpackHours(packHours(hours))).toEqual(hours);
        const [first, end] = [5, 17];
        const sums = hours.slice(first, end).reduce((acc: Accumulator, hour) => (hour ? addAccumulator(acc, hour) : acc), emptyAccumulator());
        expect(addPackedSums(emptyAccumulator(), packHours(hours), first, end)).toEqual(sums);
      }),
      { numRuns: 500 },
    );
    // The size the form is for: 4 checks an hour, failures 0, sum 1334, minimum 117, maximum 900.
    expect(packHours(new Array(24).fill({ checks: 4, failures: 0, latency_sum: 1334, latency_min: 117, latency_max: 900 })).length).toBe(24 * 8);
    expect(unpackHours(undefined)).toEqual(new Array(24).fill(null));
  });

  it("gives every endpoint of a project its own packed hours, past the first group of a read's endpoints", async () => {
    // More endpoints than one read's group (OWNERS_PER_READ, 250): each group's day rows are read
    // after its sums, so an endpoint past the first group must get its own day row, not another's.
    const endpoints = 300;
    const events = withUpcasting(new SqliteEventStore(':memory:'), upcasters());
    const views = new SqliteReadStore(':memory:');
    const runner = new ProjectionRunner(events, views, [analyticsRollupsProjection], { owner: 'test', logger: silentLogger, dropDelayMs: 0 });
    try {
      await events.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: endpoints } }], { expectedRevision: 'any' });
      const checks: CheckRecordedData[] = [];
      const horizon = retentionHorizon(NOW, 1);
      for (let e = 1; e <= endpoints; e++) {
        await events.append(endpointStream(e), [{ type: ENDPOINT_REGISTERED, data: { endpoint_id: e, team_id: 1, project_id: 1, name: `e${e}` } }], { expectedRevision: 'any' });
        // 1 to 3 checks, the day before the horizon's, from 06:00 on: an endpoint's count is its own.
        for (let n = 0; n <= e % 3; n++) {
          const at = horizon - DAY + 6 * HOUR + ((e * 7 + n * 131) % 840) * 60_000;
          checks.push(check({ check_id: checks.length + 1, endpoint_id: e, latency_ms: e, checked_at: new Date(at).toISOString(), imported: true }));
        }
      }
      for (const c of checks) await events.append(checksStream(c.endpoint_id), [{ type: CHECK_RECORDED, data: c, metadata: { occurred_at: c.checked_at } }], { expectedRevision: 'any' });
      await runner.rebuild(ROLLUPS_PROJECTION);
      await new CheckRetention(events, { days: 1 }).apply(NOW);
      await runner.rebuild(ROLLUPS_PROJECTION);
      const reader = new ViewReader(views, 0);
      const collections = async (): Promise<AnalyticsCollections> => ({
        rollups: await reader.collection(ROLLUPS_PROJECTION, ROLLUPS_COLLECTION),
        checks: await reader.collection(ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION),
        members: await reader.collection(ROLLUPS_PROJECTION, ROLLUP_MEMBERS_COLLECTION),
        checkMinutes: await reader.collection(ROLLUPS_PROJECTION, CHECK_MINUTES_COLLECTION),
      });
      const packed = ((await views.find((await collections()).rollups, {})) as unknown as RollupRow[]).filter((row) => row.hours !== undefined);
      expect(packed.length).toBe(endpoints);
      const endpointFacts = Array.from({ length: endpoints }, (_, i) => ({ endpoint_id: i + 1, project_id: 1, name: `e${i + 1}`, enabled: true, latest: null }));
      const facts: AnalyticsFacts = {
        projects: async () => [],
        endpoints: async () => endpointFacts,
        membersOf: async () => endpointFacts.map(({ endpoint_id, project_id }) => ({ endpoint_id, project_id })),
        incidentCounts: async () => ({ total: 0, open: 0 }),
        openIncidentsByProject: async () => new Map(),
        healthByProject: async () => new Map(),
      };
      const query = new AnalyticsQuery(views, facts, collections, { rawHorizon: () => horizon });
      // From 05:30 of that day: its hours from 06:00 are read from the packed day rows.
      const project = await query.projectAnalytics(1, 1, makeWindow(horizon - DAY + 5.5 * HOUR, NOW, 48));
      expect(project.endpoints.map((row) => [row.endpoint_id, row.checks, row.avg_latency_ms])).toEqual(endpointFacts.map(({ endpoint_id: e }) => [e, (e % 3) + 1, e]));
    } finally {
      await runner.stop();
      await views.close();
      await events.close();
    }
  }, 120_000);

  it('for totals, series and good checks of every scope over ranges past the horizon, before and after a move', async () => {
    let packedDays = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(checkArb, { minLength: 1, maxLength: 80 }), fc.integer({ min: 1, max: 4 }), fc.array(rangeArb, { minLength: 1, maxLength: 4 }), async (specs, days, ranges) => {
        const events = withUpcasting(new SqliteEventStore(':memory:'), upcasters());
        const views = new SqliteReadStore(':memory:');
        const runner = new ProjectionRunner(events, views, [analyticsRollupsProjection], { owner: 'test', logger: silentLogger, dropDelayMs: 0 });
        try {
          await events.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: ENDPOINTS } }], { expectedRevision: 'any' });
          for (let e = 1; e <= ENDPOINTS; e++) {
            await events.append(endpointStream(e), [{ type: ENDPOINT_REGISTERED, data: { endpoint_id: e, team_id: 1, project_id: 1, name: `e${e}` } }], { expectedRevision: 'any' });
          }
          const checks = specs.map((spec, i) => checkOf(spec, i + 1));
          for (const check of checks) {
            await events.append(checksStream(check.endpoint_id), [{ type: CHECK_RECORDED, data: check, metadata: { occurred_at: check.checked_at } }], { expectedRevision: 'any' });
          }
          await runner.rebuild(ROLLUPS_PROJECTION);
          await new CheckRetention(events, { days, maxChecksPerSummary: 7, pageSize: 5 }).apply(NOW);
          await runner.rebuild(ROLLUPS_PROJECTION);
          const horizon = retentionHorizon(NOW, days);

          const reader = new ViewReader(views, 0);
          const collections = async (): Promise<AnalyticsCollections> => ({
            rollups: await reader.collection(ROLLUPS_PROJECTION, ROLLUPS_COLLECTION),
            checks: await reader.collection(ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION),
            regionChecks: await reader.collection(ROLLUPS_PROJECTION, REGION_CHECKS_COLLECTION),
            members: await reader.collection(ROLLUPS_PROJECTION, ROLLUP_MEMBERS_COLLECTION),
            checkMinutes: await reader.collection(ROLLUPS_PROJECTION, CHECK_MINUTES_COLLECTION),
          });
          const rollupDocs = (await views.find((await collections()).rollups, {})) as unknown as RollupRow[];
          packedDays += rollupDocs.filter((row) => row.hours !== undefined).length;

          const expectAnswers = async (projects: CurrentProjects) => {
            const facts: AnalyticsFacts = {
              projects: async () => [],
              endpoints: async () => [],
              membersOf: async (ids) => [...projects].filter(([, p]) => ids.includes(p)).map(([endpoint_id, project_id]) => ({ endpoint_id, project_id })),
              incidentCounts: async () => ({ total: 0, open: 0 }),
              openIncidentsByProject: async () => new Map(),
              healthByProject: async () => new Map(),
            };
            const options = { rawHorizon: () => horizon };
            const query = new AnalyticsQuery(views, facts, collections, options);
            const good = new GoodChecks(views, collections, options);
            const members = (await views.find((await collections()).members!, {})) as unknown as RollupMemberDoc[];
            const scopes: ReferenceScope[] = [
              { kind: 'team', id: 1 },
              { kind: 'project', id: 1 },
              { kind: 'project', id: 2 },
              ...Array.from({ length: ENDPOINTS }, (_, i): ReferenceScope => ({ kind: 'endpoint', id: i + 1 })),
              // An endpoint's region rows exist once its checks came from two regions.
              ...members.filter((m) => (m.regions?.length ?? 0) > 1).flatMap((m) => m.regions!.map((region): ReferenceScope => ({ kind: 'endpoint', id: m.endpoint_id, region }))),
            ];
            for (const { from, to } of ranges) {
              for (const scope of scopes) {
                if (scope.region === undefined) {
                  expect(await query.computeTotals(scope, { from, to })).toEqual({
                    ...expectedFigures(checks, scope, from, to, horizon, projects),
                    p95_latency_ms: from < horizon ? null : referenceP95(checks, scope, from, to, projects),
                  });
                }
                const buckets = 5;
                const bucketSeconds = Math.ceil((to - from) / buckets / 1000);
                const series = await query.computeSeries(scope, from, from + buckets * bucketSeconds * 1000, bucketSeconds, buckets);
                series.forEach((item, i) => {
                  const start = from + i * bucketSeconds * 1000;
                  const figures = expectedFigures(checks, scope, start, start + bucketSeconds * 1000, horizon, projects);
                  expect([item.checks, item.failures, item.avg_latency_ms]).toEqual([figures.checks, figures.failures, figures.avg_latency_ms]);
                });
                if (scope.kind !== 'team' && scope.region === undefined) {
                  const counted = countedIn(checks, from, to, horizon).filter((c) => isApplicable(c) && (scope.kind === 'endpoint' ? c.endpoint_id === scope.id : projects.get(c.endpoint_id) === scope.id));
                  expect(await good.count({ kind: scope.kind, ids: [scope.id] }, { from, to }, null)).toEqual({ total: counted.length, good: counted.filter((c) => c.success).length });
                }
              }
            }
          };
          await expectAnswers(new Map([[1, 1], [2, 1], [3, 1]]));
          // Endpoint 2 moves with its packed hours: project 2's hour rows get them.
          await events.append(endpointStream(2), [{ type: ENDPOINT_RECONFIGURED, data: { endpoint_id: 2, team_id: 1, project_id: 2, changes: { project_id: 2 }, configuration_version: 2, updated_at: new Date(NOW).toISOString() } }], { expectedRevision: 'any' });
          await runner.rebuild(ROLLUPS_PROJECTION);
          await expectAnswers(new Map([[1, 1], [2, 2], [3, 1]]));
        } finally {
          await runner.stop();
          await views.close();
          await events.close();
        }
      }),
      { numRuns: Number(process.env.PACKED_HOURS_PROPERTY_RUNS ?? 40) },
    );
    // Hours were packed (the property is not vacuous).
    expect(packedDays).toBeGreaterThan(0);
  }, 180_000);
});
