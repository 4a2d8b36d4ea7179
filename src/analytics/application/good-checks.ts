import type { Filter, ReadStore } from '../../platform/read-store/read-store.port.js';
import { rollupRange } from '../domain/rollup.js';
import { OUTCOME_FAILURE, OUTCOME_SUCCESS, RAW_CHECKS_COLLECTION, ROLLUPS_COLLECTION } from '../views/rollups/view.js';
import { planRange, rollupRuns, type RangePiece } from '../domain/range-plan.js';
import { RawSpans, addPackedHours, chunk, endpointDayId, endpointParts, packedReads, rawSpanNames, type AnalyticsCollections, type TimeRange } from '../views/rollups/queries.js';
import { Slices } from './slices.js';

/**
 * Good and total applicable checks of a set of endpoints or one project over a range, for
 * service level objectives (the slos context reads analytics through this; nothing here knows
 * SLOs). A check is good when it succeeded and, with a latency threshold, took at most that long.
 *
 * Counted by the analytics rules, from the same rows as every analytics figure: the range is
 * planned into rollup rows plus sub-minute raw edges (`planRange`), so counts are exact to the
 * check inside the retention horizon; before it the range is counted in whole hours, rounded
 * inward, as analytics do. A project counts the checks of the endpoints it holds now (the
 * rollups follow moves). The latency threshold needs each check's latency, which only raw rows
 * keep: inside the horizon the successful checks slower than the threshold are counted from the
 * raw rows (an endpoint's index range, a project's rows of each span where `RawSpans` finds
 * them); before it latencies are gone (retention keeps sums), so
 * a successful check there is good whatever its latency.
 */

export interface GoodCheckScope {
  kind: 'endpoint' | 'project';
  ids: number[];
}

export interface GoodCount {
  total: number;
  good: number;
}

export interface GoodChecksOptions {
  /** Epoch ms of the retention horizon (see AnalyticsQueryOptions.rawHorizon). */
  rawHorizon?: () => number;
}

/** Successful raw rows are walked for a latency threshold this much of the range at a time. */
const SLOW_SPAN_MS = 3_600_000;
/** Rollup id ranges summed per read (one synchronous call on SQLite). */
const RANGES_PER_READ = 200;

export class GoodChecks {
  constructor(
    private readonly store: ReadStore,
    private readonly collections: AnalyticsCollections | (() => Promise<AnalyticsCollections>) = { rollups: ROLLUPS_COLLECTION, checks: RAW_CHECKS_COLLECTION },
    private readonly options: GoodChecksOptions = {},
    private readonly slices: Slices = new Slices(),
  ) {}

  /** Good and total checks of the scope in `[from, to)`; `latencyThresholdMs` null: success alone. */
  async count(scope: GoodCheckScope, range: TimeRange, latencyThresholdMs: number | null): Promise<GoodCount> {
    if (scope.ids.length === 0 || range.from >= range.to) return { total: 0, good: 0 };
    const horizon = this.options.rawHorizon?.() ?? -Infinity;
    const names = typeof this.collections === 'function' ? await this.collections() : this.collections;
    const pieces = planRange(range.from, range.to, horizon);
    // Endpoints: an `in` list of their index ranges, whatever the span. Projects: each one's
    // rows of the span (`RawSpans`: a key range, no project index), as analytics read them.
    const endpointFilters = endpointParts(scope.ids).map((part) => part.filter);
    const spans = new RawSpans(this.store, this.slices, rawSpanNames(names));
    const partsOf = async (span: TimeRange): Promise<Filter[]> =>
      scope.kind === 'endpoint' ? endpointFilters : (await Promise.all(scope.ids.map(async (id) => (await spans.partsOf('project', id, [span]))[0].map((part) => part.filter)))).flat();

    let total = 0;
    let failures = 0;
    const runs = rollupRuns(pieces);
    // Every (scope, run) id range, summed by the store a few hundred ranges per read.
    const ranges = scope.ids.flatMap((id) => runs.map((run) => rollupRange(scope.kind, id, run.granularity, run.from / 1000, run.to / 1000)));
    await this.slices.map(chunk(ranges, RANGES_PER_READ), async (group) => {
      for (const row of await this.store.aggregateRanges(names.rollups, { field: 'id', ranges: group, sum: ['checks', 'failures'] })) {
        if (row.count === 0) continue;
        total += row.sum.checks;
        failures += row.sum.failures;
      }
    });
    // Hours before the horizon that retention packed into an endpoint's day rows.
    if (scope.kind === 'endpoint') {
      await addPackedHours(this.store, names.rollups, this.slices, packedReads(scope.ids, runs, horizon, endpointDayId()), (_, sums) => {
        total += sums.checks;
        failures += sums.failures;
      });
    }
    // Raw edges (shorter than a minute, always inside the horizon): failed and successful
    // checks apart, one index range each.
    const edges = pieces.filter((p): p is Extract<RangePiece, { kind: 'raw' }> => p.kind === 'raw' && p.from >= horizon);
    const edgeParts = await Promise.all(edges.map((piece) => partsOf(piece)));
    await this.slices.map(
      edges.flatMap((piece, i) => edgeParts[i].flatMap((part) => [false, true].map((success) => ({ piece, part, success })))),
      async ({ piece, part, success }) => {
        const n = await this.store.count(names.checks, { ...part, outcome: success ? OUTCOME_SUCCESS : OUTCOME_FAILURE, checked_at_ms: { gte: piece.from, lt: piece.to } });
        total += n;
        if (!success) failures += n;
      },
    );
    let slow = 0;
    const exactFrom = Math.max(range.from, horizon);
    if (latencyThresholdMs !== null && exactFrom < range.to) {
      // A walk over every successful raw row of the range (the latency is not in the index):
      // in spans of SLOW_SPAN_MS, with a turn of the event loop between them when one is due.
      for (let spanFrom = exactFrom; spanFrom < range.to; spanFrom += SLOW_SPAN_MS) {
        const spanTo = Math.min(range.to, spanFrom + SLOW_SPAN_MS);
        for (const part of await partsOf({ from: spanFrom, to: spanTo })) {
          await this.slices.pause();
          slow += await this.store.count(names.checks, {
            ...part,
            outcome: OUTCOME_SUCCESS,
            checked_at_ms: { gte: spanFrom, lt: spanTo },
            latency_ms: { gt: latencyThresholdMs },
          });
        }
      }
    }
    return { total, good: total - failures - slow };
  }
}

