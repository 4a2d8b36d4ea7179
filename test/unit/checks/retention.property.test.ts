import fc from 'fast-check';
import { analyticsEndpointsProjection } from '../../../src/analytics/views/endpoints/projection.js';
import { analyticsRollupsProjection } from '../../../src/analytics/views/rollups/projection.js';
import { upcasters } from '../../../src/app/contexts.js';
import { packedHoursOf, regionRollupId, rollupId, withSums } from '../../../src/analytics/domain/rollup.js';
import { GRANULARITY_MS } from '../../../src/analytics/domain/range-plan.js';
import { RAW_CHECKS_COLLECTION, REGION_CHECKS_COLLECTION, ROLLUPS_COLLECTION, ROLLUP_MEMBERS_COLLECTION, type RollupRow } from '../../../src/analytics/views/rollups/view.js';
import { CheckRetention } from '../../../src/checks/application/retention.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../../../src/checks/domain/check.js';
import { checkSummariesStream, retentionHorizon, type ChecksSummarizedData } from '../../../src/checks/domain/check-summary.js';
import { ENDPOINT_REGISTERED, endpointStream } from '../../../src/monitoring/domain/events.js';
import { checksStream } from '../../../src/checks/domain/check.js';
import type { EventStore } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { withUpcasting } from '../../../src/platform/event-store/upcasting.js';
import { IDS_RESERVED, sequenceStream } from '../../../src/platform/ids/id-allocator.js';
import { silentLogger } from '../../../src/platform/logging/logger.js';
import { ProjectionRunner } from '../../../src/platform/projections/projection-runner.js';
import { ViewReader } from '../../../src/platform/projections/views.js';
import type { Doc } from '../../../src/platform/read-store/read-store.port.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';

const NOW = Date.parse('2026-11-23T12:34:56.789Z');
const DAY = 86_400_000;
const ENDPOINTS = 3;
const PROJECTIONS = [analyticsRollupsProjection, analyticsEndpointsProjection];

interface CheckSpec {
  endpoint: number;
  project: number;
  ageMs: number;
  success: boolean;
  latency: number;
  manual: boolean;
  suppressed: boolean;
  region: string;
}

/** Probe regions of the checks: endpoints turn from one region to several at any point. */
const REGIONS = ['local', 'a', 'b'];

const checkArb: fc.Arbitrary<CheckSpec> = fc.record({
  endpoint: fc.integer({ min: 1, max: ENDPOINTS }),
  project: fc.integer({ min: 1, max: 2 }),
  // Up to 20 days back: retention from 1 to 15 days cuts through the middle.
  ageMs: fc.integer({ min: 1, max: 20 * DAY }),
  success: fc.boolean(),
  latency: fc.integer({ min: 0, max: 5000 }),
  manual: fc.integer({ min: 0, max: 9 }).map((n) => n < 3),
  suppressed: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  region: fc.constantFrom('local', 'local', 'a', 'b'),
});

async function world(specs: CheckSpec[]) {
  const events: EventStore = withUpcasting(new SqliteEventStore(':memory:'), upcasters());
  const views = new SqliteReadStore(':memory:');
  await events.append(sequenceStream('endpoint'), [{ type: IDS_RESERVED, data: { first: 1, count: ENDPOINTS } }], { expectedRevision: 'any' });
  for (let e = 1; e <= ENDPOINTS; e++) {
    await events.append(endpointStream(e), [{ type: ENDPOINT_REGISTERED, data: { endpoint_id: e, team_id: 1, project_id: 1, name: `e${e}` } }], { expectedRevision: 'any' });
  }
  // Appended in the generated order: checks out of time order (imports) are part of the property.
  for (const [i, spec] of specs.entries()) {
    const checkedAt = new Date(NOW - spec.ageMs).toISOString();
    const data: CheckRecordedData = {
      check_id: i + 1,
      team_id: 1,
      project_id: spec.project,
      endpoint_id: spec.endpoint,
      configuration_version: 1,
      source: spec.manual ? 'manual' : 'scheduled',
      job_id: null,
      success: spec.success,
      status_code: spec.success ? 200 : 503,
      latency_ms: spec.latency,
      time_to_first_byte_ms: spec.latency,
      duration_ms: spec.latency,
      body_complete: true,
      failure_reason: spec.success ? null : 'status: 503',
      response_excerpt: null,
      checked_at: checkedAt,
      alert_suppressed: spec.suppressed,
      latency_anomaly: false,
      latency_threshold_ms: null,
      imported: true,
      region: spec.region,
    };
    await events.append(checksStream(spec.endpoint), [{ type: CHECK_RECORDED, data, metadata: { occurred_at: checkedAt } }], { expectedRevision: 'any' });
  }
  const runner = new ProjectionRunner(events, views, PROJECTIONS, { owner: 'test', logger: silentLogger, dropDelayMs: 0 });
  const reader = new ViewReader(views, 0);
  const snapshot = async () => {
    const all = async (projection: string, collection: string) =>
      (await views.find(await reader.collection(projection, collection), { sort: [['id', 'asc']] })).map((doc) => doc as Doc);
    return {
      rollups: await all('analytics_rollups', ROLLUPS_COLLECTION),
      // Every retained check, counted or not (the checks list's rows too).
      raw: await all('analytics_rollups', RAW_CHECKS_COLLECTION),
      regionRaw: await all('analytics_rollups', REGION_CHECKS_COLLECTION),
      // Each endpoint's project and the regions its checks came from (retention adds what its
      // summaries said of each region; the rest must not change).
      members: (await all('analytics_rollups', ROLLUP_MEMBERS_COLLECTION)).map(({ summarized_regions: _ignored, ...doc }) => doc),
      // Retention adds a counter of summarized trailing failures; the rest must not change.
      endpoints: (await all('analytics_endpoints', 'analytics_endpoints')).map(({ summarized_trailing_failures: _ignored, ...doc }) => doc),
    };
  };
  const rebuildAll = async () => {
    for (const projection of PROJECTIONS) await runner.rebuild(projection.name);
  };
  /** Applies what was appended since, as the live projector does. */
  const catchUp = async () => {
    await runner.start();
    const head = (await events.headPosition())!;
    while (PROJECTIONS.some((p) => (runner.appliedPosition(p.name) ?? 0) < head)) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  return {
    events,
    snapshot,
    rebuildAll,
    catchUp,
    close: async () => {
      await runner.stop();
      await views.close();
      await events.close();
    },
  };
}

/**
 * The rollup rows with every packed hour (an endpoint's or region's day row's `hours`) back as a
 * row of its own, as before v12: what the packing must not change.
 */
function unpacked(rollups: Doc[]): Doc[] {
  const byId = new Map<string, Doc>();
  const hourRows: RollupRow[] = [];
  for (const doc of rollups) {
    const { hours: _packed, ...row } = doc as unknown as RollupRow;
    byId.set(doc.id, row as unknown as Doc);
    const endpointDay = /^e(\d+)d(\d+)$/.exec(doc.id);
    const regionDay = /^r(\d+)\.([^.]+)\.d(\d+)$/.exec(doc.id);
    if (_packed === undefined) continue;
    const dayStart = (Number(endpointDay?.[2] ?? regionDay![3]) * GRANULARITY_MS.day) / 1000;
    for (const { start, sums } of packedHoursOf(doc as unknown as RollupRow, dayStart)) {
      const id = endpointDay ? rollupId('endpoint', Number(endpointDay[1]), 'hour', start) : regionRollupId(Number(regionDay![1]), regionDay![2], 'hour', start);
      hourRows.push({ id, ...sums });
    }
  }
  for (const hour of hourRows) byId.set(hour.id, withSums((byId.get(hour.id) as unknown as RollupRow) ?? null, hour.id, hour) as unknown as Doc);
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

describe('retention property: prune, then rebuild, equals no prune', () => {
  it('keeps every hour and day rollup and the latest checks, and drops exactly the summarized checks (and their minutes) from the raw views, whether the views saw the raw checks or not', async () => {
    let summarized = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(checkArb, { minLength: 1, maxLength: 120 }),
        fc.integer({ min: 1, max: 15 }),
        fc.integer({ min: 1, max: 40 }),
        // Pages under and over the pass's small first page (16 checks, then whole pages).
        fc.constantFrom(7, 40),
        async (specs, days, maxChecksPerSummary, pageSize) => {
          const w = await world(specs);
          try {
            await w.rebuildAll();
            const reference = await w.snapshot();

            const result = await new CheckRetention(w.events, { days, maxChecksPerSummary, pageSize }).apply(NOW);
            summarized += result.removed;
            const retainedIds = new Set(
              (await Promise.all(Array.from({ length: ENDPOINTS }, (_, i) => w.events.readStream(checksStream(i + 1)))))
                .flat()
                .filter((e) => e.type === CHECK_RECORDED)
                .map((e) => String((e.data as CheckRecordedData).check_id)),
            );
            const horizon = retentionHorizon(NOW, days);
            // Every check left in the log is inside the horizon, or recorded behind a newer one.
            // The minute rollups the summarized checks were in leave too, for the endpoint, its
            // current project (every endpoint stays in project 1, whatever project its checks
            // name) and its team (past the horizon analytics counts whole hours).
            const summaries = (await Promise.all(Array.from({ length: ENDPOINTS }, (_, i) => w.events.readStream(checkSummariesStream(i + 1)))))
              .flat()
              .map((e) => e.data as ChecksSummarizedData);
            const goneMinutes = new Set(
              summaries.flatMap((s) =>
                s.hours.flatMap(([hour, , , , , , , minutes]) =>
                  minutes.flatMap((m) => [
                    rollupId('endpoint', s.endpoint_id, 'minute', hour + m * 60),
                    rollupId('project', 1, 'minute', hour + m * 60),
                    rollupId('team', s.team_id, 'minute', hour + m * 60),
                    ...REGIONS.map((region) => regionRollupId(s.endpoint_id, region, 'minute', hour + m * 60)),
                  ]),
                ),
              ),
            );
            const minuteGone = (doc: Doc) => goneMinutes.has(doc.id);
            const expected = {
              ...reference,
              rollups: reference.rollups.filter((doc) => !minuteGone(doc)),
              raw: reference.raw.filter((doc) => retainedIds.has(doc.id)),
              regionRaw: reference.regionRaw.filter((doc) => retainedIds.has(doc.id)),
            };

            // The live views, which had applied the raw checks, apply the summaries. The hours
            // summarized leave their rows for their day rows (v12): the same sums, packed.
            await w.catchUp();
            const live = await w.snapshot();
            expect({ ...live, rollups: unpacked(live.rollups) }).toEqual(expected);
            const summarizedHours = new Set(summaries.flatMap((s) => s.hours.map(([hour]) => rollupId('endpoint', s.endpoint_id, 'hour', hour))));
            expect(live.rollups.filter((doc) => summarizedHours.has(doc.id))).toEqual([]);
            // A rebuild from the pruned log, packed the same.
            await w.rebuildAll();
            expect(await w.snapshot()).toEqual(live);
            // Nothing older than the horizon is left at the start of any stream.
            for (let e = 1; e <= ENDPOINTS; e++) {
              const [first] = (await w.events.readStream(checksStream(e))).filter((ev) => ev.type === CHECK_RECORDED);
              if (first) expect(Date.parse((first.data as CheckRecordedData).checked_at)).toBeGreaterThanOrEqual(horizon);
            }
          } finally {
            await w.close();
          }
        },
      ),
      { numRuns: Number(process.env.RETENTION_PROPERTY_RUNS ?? 40) },
    );
    // The runs did prune (the property is not vacuous).
    expect(summarized).toBeGreaterThan(0);
  }, 120_000);
});
