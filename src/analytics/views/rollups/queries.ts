import type { AggregateRow, Doc, Filter, ReadStore, Scalar, SortDirection } from '../../../platform/read-store/read-store.port.js';
import type { CheckListFilters, CheckListSource, ListedCheck } from '../../../monitoring/application/check-list-source.js';
import { DEFAULT_REGION } from '../../../platform/config/region.js';
import { ViewListCache } from '../../../platform/projections/view-cache.js';
import type { ViewReader } from '../../../platform/projections/views.js';
import {
  P95_SAMPLE_LIMIT,
  addAccumulator,
  addCheck,
  emptyAccumulator,
  p95,
  toFigures,
  type Accumulator,
  type RangeFigures,
} from '../../domain/aggregate.js';
import { SCOPE_FIELD, addPackedSums, packedHourSpans, regionRollupId, regionRollupRange, rollupId, rollupRange, rollupRangeSuffixes } from '../../domain/rollup.js';
import {
  APPLICABLE_OUTCOMES,
  CHECK_MANUAL,
  CHECK_NO_EXCERPT,
  OUTCOME_FAILURE,
  OUTCOME_OTHER_FAILURE,
  OUTCOME_OTHER_SUCCESS,
  OUTCOME_SUCCESS,
  CHECK_MINUTES_COLLECTION,
  type CheckMinuteRow,
  checkMinuteOf,
  RAW_CHECKS_COLLECTION,
  REGION_CHECKS_COLLECTION,
  ROLLUPS_COLLECTION,
  ROLLUP_MEMBERS_COLLECTION,
  ROLLUPS_PROJECTION,
  rawStatusCode,
  rawTimings,
  type RawCheckRow,
  type RegionCheckRow,
  type RollupMemberDoc,
  type RollupRow,
  type RollupScopeKind,
  type TeamDoc,
  teamDocId,
} from './view.js';
import { GRANULARITY_MS, floorTo, planRange, rollupRuns, type RangePiece, type RollupRun } from '../../domain/range-plan.js';
import { bucketRange, type AnalyticsWindow } from '../../domain/window.js';
import { healthOf, sumHealth, type AnalyticsFacts, type AnalyticsScope, type EndpointFact, type Health, type ProjectMember } from '../../application/analytics-facts.js';
import { Slices } from '../../application/slices.js';
import { REGION_OUTCOMES, consecutiveFailuresIn } from '../../application/consecutive-failures.js';

/**
 * Analytics figures from time rollups: each range is planned into day/hour/minute rollup rows
 * plus sub-minute raw edges, so a query reads (range / granularity + edges) rows whatever the
 * number of checks. Proven equal to the brute-force reference in test/unit/analytics.
 *
 * A check counts for its team and for its endpoint's CURRENT project (docs/decisions.md,
 * "Analytics"): every scope has its own rollups, and the projection moves an endpoint's share of
 * them (and relabels its raw rows) when the endpoint moves, so a project's totals and series,
 * and its row in the team object, cost the same whatever its endpoint count. A project's raw
 * rows have no index of their own (rollups v15): a span of them is a key range of the raw table
 * or its endpoints' index ranges, whichever is cheaper (`RawSpans`). Only what lists or
 * bounds every endpoint reads per endpoint: a project's endpoint rows, and its minimum and
 * maximum latency (project rollups keep none, see views.ts), taken from those same rows.
 *
 * Reads go through `Slices`: in small groups, giving the event loop a turn every few
 * milliseconds, so a large project never holds the process.
 */

/** Half-open, epoch milliseconds. */
export interface TimeRange {
  from: number;
  to: number;
}

/** Physical names of the views' collections (the projection runner maps logical names per generation). */
export interface AnalyticsCollections {
  rollups: string;
  checks: string;
  /** Probe regions (endpoint route, `?region=`); by default the logical names. */
  regionChecks?: string;
  members?: string;
  /**
   * The raw rows' time -> key map (`CHECK_MINUTES_COLLECTION`, rollups v15); null while the
   * serving generation has none (v14, read through its project index: `RawSpans`).
   */
  checkMinutes?: string | null;
}

export interface Totals extends RangeFigures {
  p95_latency_ms: number | null;
}

export interface SeriesItem {
  bucket_start: string;
  checks: number;
  failures: number;
  uptime_percent: number | null;
  avg_latency_ms: number | null;
}

export interface WindowOut {
  from: string;
  to: string;
  bucket_seconds: number;
}

export type { Health };

export interface ProjectRow {
  project_id: number;
  name: string;
  enabled_endpoints: number;
  checks: number;
  failures: number;
  uptime_percent: number | null;
  avg_latency_ms: number | null;
  open_incidents: number;
}

export interface EndpointRow {
  endpoint_id: number;
  name: string;
  enabled: boolean;
  checks: number;
  failures: number;
  uptime_percent: number | null;
  avg_latency_ms: number | null;
  /** The latest applicable check succeeded; null while unchecked (no data is not down). */
  up: boolean | null;
  last_check_at: string | null;
}

export interface Current {
  /** null while the endpoint has no applicable check: unknown is not down. */
  up: boolean | null;
  last_check_at: string | null;
  last_status_code: number | null;
  last_latency_ms: number | null;
  consecutive_failures: number;
}

interface Common {
  team_id: number;
  window: WindowOut;
  totals: Totals;
  incidents: { total: number; open: number };
  series: SeriesItem[];
}

export interface TeamAnalytics extends Common {
  health: Health;
  projects: ProjectRow[];
}

export interface ProjectAnalytics extends Common {
  project_id: number;
  health: Health;
  endpoints: EndpointRow[];
}

export interface EndpointAnalytics extends Common {
  project_id: number;
  endpoint_id: number;
  current: Current;
}

/** Each `in` list stays short, so two of them stay well under SQLite's bound-parameter limit. */
const IN_CHUNK = 250;
/** The first span back from `to` a project's or team's p95 reads (`newestInSpans`). */
const FIRST_P95_SPAN_MS = 60_000;
/** A span of p95 rows is at most this many times the length read before it. */
const P95_SPAN_GROWTH = 16;
/**
 * Read sizes: each read runs synchronously on SQLite, so each is kept to a few milliseconds
 * (measured on a loaded machine: 2,500 raw rows took up to 23 ms, 512 rollup ranges up to 11 ms).
 */
const PAGE = 1000;
/** Raw rows per read of a p95 walk. */
const P95_PAGE = 1000;
/** What a p95 walk reads of each raw row: its latency and its place in the walk (about a third of the row's cost). */
const P95_FIELDS = ['latency_ms', 'checked_at_ms', 'check_id'];
const ROLLUP_SUMS = ['checks', 'failures', 'latency_sum'];
/** What the sums read of a raw edge row besides its scope's id: its place in the walk and what a check adds (SQLite then reads typed columns only). */
const EDGE_FIELDS = ['checked_at_ms', 'check_id', 'latency_ms'];
/** Endpoint rows of a project object made between two looks at the slice clock. */
const ROWS_PER_PAUSE = 500;
/**
 * Sub-minute raw pieces per read of their sums (one SQLite statement of an index range each): a
 * team's 48-bucket series has about 100, each up to a minute of every endpoint's checks.
 */
const RAW_PIECES_PER_READ = 16;
/** Rollup id ranges per read (one SQLite statement). */
const RANGES_PER_READ = 256;
/** Owners per read of `sumOwners` (one SQLite statement of about five index ranges per owner). */
const OWNERS_PER_READ = 250;
/** Day rows per read of their packed hours (`addPackedHours`: one SQLite statement). */
const PACKED_DAYS_PER_READ = 500;

export interface AnalyticsQueryOptions {
  /**
   * Epoch ms of the retention horizon: raw checks older than it are summarized into the rollups
   * and removed (CHECK_RETENTION_DAYS). Inside it everything is exact. For a range reaching past
   * it, rollups still give exact counts, failures, uptime, average, minimum and maximum, but:
   * - p95 is null unless the newest P95_SAMPLE_LIMIT successful checks of the range (its sample)
   *   all lie inside the horizon;
   * - the part of the range before the horizon is counted in whole hours, its edges rounded
   *   inward (minute rollups are dropped with the raw checks), whether or not a prune has
   *   happened yet, so a figure never changes because raw checks left.
   */
  rawHorizon?: () => number;
  /** Keys of the raw table one seek of the endpoint index is worth (`RawSpans`; tests force either way). */
  keysPerSeek?: number;
}

export class AnalyticsQuery {
  constructor(
    private readonly store: ReadStore,
    private readonly facts: AnalyticsFacts,
    private readonly collections: AnalyticsCollections | (() => Promise<AnalyticsCollections>) = {
      rollups: ROLLUPS_COLLECTION,
      checks: RAW_CHECKS_COLLECTION,
    },
    private readonly options: AnalyticsQueryOptions = {},
    private readonly slices: Slices = new Slices(),
  ) {}

  /** Raw checks before this instant may have left (retention); -Infinity when none have. */
  private rawHorizon(): number {
    return this.options.rawHorizon?.() ?? -Infinity;
  }

  /** Figures of one scope over one range, p95 included. */
  async computeTotals(scope: AnalyticsScope, range: TimeRange): Promise<Totals> {
    const spans = await this.rawSpans();
    const [sums, p95Value, members] = await Promise.all([
      this.sumPerScope(scope.kind, [scope.id], range, spans),
      this.p95Of(scope, range.from, range.to, spans),
      scope.kind === 'project' ? this.memberSums(scope.id, range, spans) : null,
    ]);
    const total = sums.get(scope.id)!;
    return { ...toFigures(members ? withExtremesOf(total, members) : total), p95_latency_ms: p95Value };
  }

  /** Partial sums of each endpoint whose checks count for the project (deleted ones included). */
  private async memberSums(projectId: number, range: TimeRange, spans: RawSpans, members?: ProjectMember[]): Promise<ScopeSums> {
    const ids = (members ?? (await this.facts.membersOf([projectId]))).map((m) => m.endpoint_id);
    return this.sumPerScope('endpoint', ids, range, spans, { kind: 'project', id: projectId });
  }

  /** The project's endpoints and members, from one read where the facts can. */
  private async projectEndpoints(teamId: number, projectId: number): Promise<{ endpoints: EndpointFact[]; members: ProjectMember[] }> {
    if (this.facts.projectEndpoints) return this.facts.projectEndpoints(teamId, projectId);
    const [endpoints, members] = await Promise.all([this.facts.endpoints(teamId, { kind: 'project', id: projectId }), this.facts.membersOf([projectId])]);
    return { endpoints, members };
  }

  async computeSeries(
    scope: AnalyticsScope,
    from: number,
    to: number,
    bucket_seconds: number,
    buckets: number,
  ): Promise<SeriesItem[]> {
    const window: AnalyticsWindow = { from, to, bucket_seconds, buckets };
    const sums = await this.sumBuckets(scope, window, await this.rawSpans());
    return sums.map((acc, i) => seriesItem(bucketRange(window, i).start, acc));
  }

  /** Nearest-rank p95 over the newest P95_SAMPLE_LIMIT successful applicable checks in range. */
  async computeP95(scope: AnalyticsScope, from: number, to: number): Promise<number | null> {
    return this.p95Of(scope, from, to, await this.rawSpans());
  }

  /**
   * The sample. An endpoint's (or a region's) rows are one range of its index: walked newest
   * first, in pages with a turn of the event loop between them (`newestOf`). A project's or a
   * team's rows have no newest-first walk (no project index: `RawSpans`), so they are read in
   * spans back from `to` (`newestInSpans`).
   */
  private async p95Of(scope: AnalyticsScope, from: number, to: number, spans: RawSpans): Promise<number | null> {
    const sample = scope.kind === 'endpoint' ? await this.newestOfEndpoint(scope, from, to) : await this.newestInSpans(scope, from, to, spans);
    const latencies = sample.map((row) => Number(row.latency_ms));
    // The sample would have reached past the horizon, where raw checks may be gone: no figure.
    if (from < this.rawHorizon() && latencies.length < P95_SAMPLE_LIMIT) return null;
    return p95(latencies);
  }

  private async newestOfEndpoint(scope: AnalyticsScope, from: number, to: number): Promise<Placed[]> {
    const { checks, regionChecks } = await this.names();
    const source = scope.region === undefined ? checks : regionChecks;
    const regionFilter: Filter = scope.region === undefined ? {} : { region: scope.region };
    const filter: Filter = { endpoint_id: scope.id, ...regionFilter, ...outcomeFilter(scope.region, true), checked_at_ms: { gte: from, lt: to } };
    const walk: NewestFirstWalk = (after, limit) => this.slices.run(() => this.store.find(source, { filter, sort: NEWEST_FIRST, after, limit, fields: P95_FIELDS })) as unknown as Promise<Placed[]>;
    return newestOf([walk], P95_SAMPLE_LIMIT, P95_PAGE);
  }

  /**
   * The newest P95_SAMPLE_LIMIT successful rows of a project or team in [from, to): every
   * successful row of spans back from `to`, each span as long as the rate of the rows read so far
   * says the rest of the sample needs (a fifth more; at least the length read so far, at most
   * P95_SPAN_GROWTH times it; after a span with none, twice as long), until the sample is
   * complete or the range is read. Every row of a span is newer than every row of the spans
   * after it, so the newest rows read, ordered by (checked_at_ms, check_id), are the newest of the
   * range: the same sample a newest-first walk reads.
   */
  private async newestInSpans(scope: AnalyticsScope, from: number, to: number, spans: RawSpans): Promise<Placed[]> {
    const rows: Placed[] = [];
    let newer = 0;
    let cutoff = to;
    let step = FIRST_P95_SPAN_MS;
    while (cutoff > from && rows.length < P95_SAMPLE_LIMIT) {
      const span = { from: Math.max(from, cutoff - step), to: cutoff };
      newer = rows.length;
      const [parts] = await spans.partsOf(scope.kind, scope.id, [span]);
      for (const part of parts) {
        const found = await spans.readAll(part, { ...outcomeFilter(undefined, true), checked_at_ms: { gte: span.from, lt: span.to } }, P95_FIELDS, P95_PAGE);
        for (const row of found) rows.push(row as unknown as Placed);
      }
      const covered = to - span.from;
      cutoff = span.from;
      const wanted = rows.length === 0 ? covered : Math.ceil((covered * (P95_SAMPLE_LIMIT - rows.length) * 6) / (5 * rows.length));
      step = Math.min(covered * P95_SPAN_GROWTH, Math.max(covered, wanted));
    }
    if (rows.length <= P95_SAMPLE_LIMIT) return rows;
    // The rows of the spans before the last are all in the sample: only the last span's are ordered.
    const oldest = rows.slice(newer).sort(newestFirst);
    return [...rows.slice(0, newer), ...oldest.slice(0, P95_SAMPLE_LIMIT - newer)];
  }

  /**
   * The team object costs its project count, not its endpoint count: health and each row's
   * enabled endpoints come from per-project counts (`AnalyticsFacts.healthByProject`).
   */
  async teamAnalytics(teamId: number, window: AnalyticsWindow): Promise<TeamAnalytics> {
    const scope: AnalyticsScope = { kind: 'team', id: teamId };
    const spans = await this.rawSpans();
    const [common, projects, healthByProject, openByProject] = await Promise.all([
      this.common(teamId, scope, window, spans),
      this.facts.projects(teamId),
      this.facts.healthByProject(teamId),
      this.facts.openIncidentsByProject(teamId),
    ]);
    // Each project row counts the endpoints the project holds now, as the project object does:
    // the project rollups follow moves.
    const perProject = await this.sumPerScope('project', projects.map((p) => p.project_id), window, spans, scope);
    const rows = [...projects]
      .sort((a, b) => a.project_id - b.project_id)
      .map((project): ProjectRow => {
        const figures = toFigures(perProject.get(project.project_id) ?? emptyAccumulator());
        return {
          project_id: project.project_id,
          name: project.name,
          enabled_endpoints: healthByProject.get(project.project_id)?.enabled_endpoints ?? 0,
          checks: figures.checks,
          failures: figures.failures,
          uptime_percent: figures.uptime_percent,
          avg_latency_ms: figures.avg_latency_ms,
          open_incidents: openByProject.get(project.project_id) ?? 0,
        };
      });
    const { window: w, totals, incidents, series } = common;
    return { team_id: teamId, window: w, health: sumHealth(healthByProject.values()), totals, incidents, series, projects: rows };
  }

  async projectAnalytics(teamId: number, projectId: number, window: AnalyticsWindow): Promise<ProjectAnalytics> {
    const scope: AnalyticsScope = { kind: 'project', id: projectId };
    const spans = await this.rawSpans();
    // The endpoint rows list every endpoint anyway; their sums (deleted members' too) also give
    // the project's minimum and maximum latency.
    const [common, { perEndpoint, endpoints }] = await Promise.all([
      this.common(teamId, scope, window, spans),
      this.projectEndpoints(teamId, projectId).then(async ({ endpoints, members }) => {
        // Making thousands of facts may have used the slice: the sums start in a turn of their own.
        await this.slices.pause();
        return { endpoints, perEndpoint: await this.memberSums(projectId, window, spans, members) };
      }),
    ]);
    common.totals = { ...toFigures(withExtremesOf(common.total, perEndpoint)), p95_latency_ms: common.totals.p95_latency_ms };
    // Thousands of rows: made between turns of the event loop when a slice is due, like the reads.
    const sorted = [...endpoints].sort((a, b) => a.endpoint_id - b.endpoint_id);
    const rows: EndpointRow[] = [];
    for (const endpoint of sorted) {
      if (rows.length % ROWS_PER_PAUSE === 0) await this.slices.pause();
      const figures = toFigures(perEndpoint.get(endpoint.endpoint_id) ?? emptyAccumulator());
      rows.push({
        endpoint_id: endpoint.endpoint_id,
        name: endpoint.name,
        enabled: endpoint.enabled,
        checks: figures.checks,
        failures: figures.failures,
        uptime_percent: figures.uptime_percent,
        avg_latency_ms: figures.avg_latency_ms,
        up: endpoint.latest?.success ?? null,
        last_check_at: endpoint.latest?.checked_at ?? null,
      });
    }
    const { window: w, totals, incidents, series } = common;
    return { team_id: teamId, project_id: projectId, window: w, health: healthOf(endpoints), totals, incidents, series, endpoints: rows };
  }

  /**
   * null when the endpoint is not among the team's endpoints. `region`: only the checks recorded
   * in that probe region count, in every figure and in `current` (a region with none: the figures
   * of no checks). An endpoint whose checks all came from that one region has no rows per region:
   * its own rows are the region's (views.ts, "Probe regions").
   */
  async endpointAnalytics(teamId: number, endpointId: number, window: AnalyticsWindow, region?: string): Promise<EndpointAnalytics | null> {
    const member = region === undefined ? null : await this.memberOf(endpointId);
    const known = member?.regions ?? [];
    const byRegion = region !== undefined && !(known.length === 1 && known[0] === region);
    const scope: AnalyticsScope = byRegion ? { kind: 'endpoint', id: endpointId, region } : { kind: 'endpoint', id: endpointId };
    const [common, endpoints] = await Promise.all([this.common(teamId, scope, window, await this.rawSpans()), this.facts.endpoints(teamId, { kind: 'endpoint', id: endpointId })]);
    const endpoint = endpoints.find((e) => e.endpoint_id === endpointId);
    if (!endpoint) return null;
    const { window: w, totals, incidents, series } = common;
    const now = byRegion ? await this.regionCurrent(endpointId, region!, member) : current(endpoint);
    return { team_id: teamId, project_id: endpoint.project_id, endpoint_id: endpointId, window: w, totals, incidents, series, current: now };
  }

  /** The endpoint's member document: its regions, and what summaries said of each. */
  private async memberOf(endpointId: number): Promise<RollupMemberDoc | null> {
    const { members } = await this.names();
    return (await this.slices.run(() => this.store.get(members, String(endpointId)))) as RollupMemberDoc | null;
  }

  /**
   * `current` from the region's newest applicable check (newest by checked_at, then id): among
   * its raw rows, or the one retention summaries kept; failures in a row counted in the raw rows,
   * plus the summarized ones while no retained check succeeded (as for the endpoint).
   */
  private async regionCurrent(endpointId: number, region: string, member: RollupMemberDoc | null): Promise<Current> {
    const { regionChecks } = await this.names();
    const scope = { endpoint_id: endpointId, region };
    const newest = (success: boolean) =>
      this.slices.run(() => this.store.find(regionChecks, { filter: { ...scope, success }, sort: [['checked_at_ms', 'desc'], ['check_id', 'desc']], limit: 1 }));
    const [[up], [down]] = (await Promise.all([newest(true), newest(false)])) as unknown as RegionCheckRow[][];
    const summarized = member?.summarized_regions && Object.hasOwn(member.summarized_regions, region) ? member.summarized_regions[region] : undefined;
    const latest = later<LatestOfRegion>(later<LatestOfRegion>(up, down), summarized);
    if (!latest) return { up: null, last_check_at: null, last_status_code: null, last_latency_ms: null, consecutive_failures: 0 };
    const failures = latest.success ? 0 : await this.slices.run(() => consecutiveFailuresIn(this.store, regionChecks, scope, REGION_OUTCOMES, summarized?.trailing_failures ?? 0));
    return { up: latest.success, last_check_at: iso(latest.checked_at_ms), last_status_code: latest.status_code, last_latency_ms: latest.latency_ms, consecutive_failures: failures };
  }

  /** Window, totals, incidents and series: the part all three objects share. */
  private async common(teamId: number, scope: AnalyticsScope, window: AnalyticsWindow, spans: RawSpans): Promise<Common & { total: Accumulator }> {
    const [bucketSums, p95Value, incidents] = await Promise.all([
      this.sumBuckets(scope, window, spans),
      this.p95Of(scope, window.from, window.to, spans),
      this.facts.incidentCounts(teamId, scope, { from: window.from, to: window.to }),
    ]);
    // The buckets partition [from, to) exactly, so their sums are the totals.
    const total = bucketSums.reduce((acc, part) => addAccumulator(acc, part), emptyAccumulator());
    return {
      team_id: teamId,
      window: { from: iso(window.from), to: iso(window.to), bucket_seconds: window.bucket_seconds },
      totals: { ...toFigures(total), p95_latency_ms: p95Value },
      incidents: { total: incidents.total, open: incidents.open },
      series: bucketSums.map((acc, i) => seriesItem(bucketRange(window, i).start, acc)),
      total,
    };
  }

  /**
   * Partial sums of every bucket of one scope: per bucket, the store sums the rollup rows of its
   * pieces (id ranges) and the raw checks of its sub-minute edges (`sumRawPieces`).
   */
  private async sumBuckets(scope: AnalyticsScope, window: AnalyticsWindow, spans: RawSpans): Promise<Accumulator[]> {
    const plans: RangePiece[][] = [];
    for (let i = 0; i < window.buckets; i++) {
      const { start, end } = bucketRange(window, i);
      plans.push(planRange(start, end, this.rawHorizon()));
    }
    const [rollupSums, rawSums] = await Promise.all([
      this.sumRollupRuns(scope.kind, plans.map((plan) => ({ id: scope.id, runs: rollupRuns(plan) })), scope.region),
      this.sumRawPieces(scope, plans, spans),
    ]);
    return rollupSums.map((acc, i) => addAccumulator(acc, rawSums[i]));
  }

  /**
   * For each plan (a bucket), the sums of the scope's raw checks in its sub-minute pieces inside
   * the horizon, summed by the store: failed and successful checks together (outcomes 0 and 1,
   * failures counted from the sum of outcomes; a region's rows apart), the
   * pieces of each range of the scope's rows (`RawSpans`: an endpoint's or a team's index range
   * whatever the piece, a project's key range of the piece's minute, or its endpoints' ranges)
   * RAW_PIECES_PER_READ to a read (`aggregateRanges` with the range's filter), so the main
   * thread gets one row per piece, not a row per check, and a few reads, not one per piece.
   * With `to` off the minute grid every bucket boundary is such a piece, and a team's boundary
   * minutes hold every endpoint's checks of those minutes.
   */
  private async sumRawPieces(scope: AnalyticsScope, plans: RangePiece[][], spans: RawSpans): Promise<Accumulator[]> {
    const sums = plans.map(() => emptyAccumulator());
    const horizon = this.rawHorizon();
    const pieces = plans.flatMap((plan, owner) => plan.flatMap((piece) => (piece.kind === 'raw' && piece.from >= horizon ? [{ owner, piece }] : [])));
    if (pieces.length === 0) return sums;
    const { checks, regionChecks } = await this.names();
    const source = scope.region === undefined ? checks : regionChecks;
    const regionFilter: Filter = scope.region === undefined ? {} : { region: scope.region };
    // The pieces each range of rows holds (a range named by its filter, less a key range: a
    // project's pieces each keep their minute's check ids as the read's range filter): read together.
    const byRange = new Map<string, { filter: Filter; pieces: Array<(typeof pieces)[number] & { keys?: Filter }> }>();
    const partsOfPieces = await spans.partsOf(scope.kind, scope.id, pieces.map(({ piece }) => piece));
    partsOfPieces.forEach((parts, i) => {
      for (const part of parts) {
        const { shared, keys } = keyRangeApart(part);
        const key = JSON.stringify(shared);
        const range = byRange.get(key) ?? { filter: shared, pieces: [] };
        range.pieces.push({ ...pieces[i], keys });
        byRange.set(key, range);
      }
    });
    const reads = [...byRange.values()].flatMap(({ filter, pieces: held }) =>
      outcomesApart(scope, held[0].keys !== undefined).flatMap((success) => chunk(held, RAW_PIECES_PER_READ).map((group) => ({ filter: { ...filter, ...regionFilter, ...outcomeFilter(scope.region, success) }, success, group }))),
    );
    const rows = await this.slices.map(reads, ({ filter, success, group }) =>
      this.store.aggregateRanges(source, {
        field: 'checked_at_ms',
        ranges: group.map(({ piece, keys }) => (keys ? { gte: piece.from, lt: piece.to, filter: keys } : { gte: piece.from, lt: piece.to })),
        filter,
        sum: success === 'both' ? ['latency_ms', 'outcome'] : ['latency_ms'],
        min: ['latency_ms'],
        max: ['latency_ms'],
      }),
    );
    reads.forEach(({ success, group }, i) => {
      for (const row of rows[i]) {
        if (row.count === 0) continue;
        addAccumulator(sums[group[row.group as number].owner], {
          checks: row.count,
          failures: success === 'both' ? row.count - row.sum.outcome : success ? 0 : row.count,
          latency_sum: row.sum.latency_ms,
          latency_min: row.min.latency_ms,
          latency_max: row.max.latency_ms,
        });
      }
    });
    return sums;
  }

  /** Partial sums of one range for several scopes of one kind, each summed by the store. */
  /**
   * `parent`: the scope all `ids` belong to (a project's endpoints, a team's projects). Its raw
   * rows are read once for the range edges and shared out by id, where they lie (`RawSpans`),
   * instead of an `in` list of every id for every edge.
   */
  private async sumPerScope(kind: RollupScopeKind, ids: number[], range: TimeRange, spans: RawSpans, parent?: AnalyticsScope): Promise<ScopeSums> {
    const sums = new ScopeSums(ids);
    if (ids.length === 0) return sums;
    const pieces = planRange(range.from, range.to, this.rawHorizon());
    const queries = this.sumOwners(kind, ids, rollupRuns(pieces), sums);
    const field = SCOPE_FIELD[kind];
    const horizon = this.rawHorizon();
    // The rows of a team's primary project leave team_id null (`TeamDoc`): the team owns them all.
    if (kind === 'team' && !parent && ids.length !== 1) throw new Error('Sums of raw rows are per team, one team at a time');
    const owner = kind === 'team' && !parent ? () => ids[0] : (check: EdgeCheck) => check[field] as number;
    const rawEdges = parent ? this.fetchRawEdges(kind, [parent.id], pieces, spans, parent.kind, field) : this.fetchRawEdges(kind, ids, pieces, spans, kind);
    const edges = rawEdges.then((byMinute) => {
      for (const piece of pieces) {
        if (piece.kind !== 'raw' || piece.from < horizon) continue;
        const lists = byMinute.get(floorTo(piece.from, GRANULARITY_MS.minute));
        if (!lists) continue;
        for (const check of lists.failed) {
          if (piece.from <= check.checked_at_ms && check.checked_at_ms < piece.to) sums.addCheck(owner(check), false, check.latency_ms);
        }
        for (const check of lists.succeeded) {
          if (piece.from <= check.checked_at_ms && check.checked_at_ms < piece.to) sums.addCheck(owner(check), true, check.latency_ms);
        }
      }
    });
    await Promise.all([queries, edges]);
    return sums;
  }

  /**
   * For each owner, the sums of its scope's rollup rows over its runs of periods. Consecutive
   * periods of one granularity are one id range (a bucket or window has at most five: minutes,
   * hours, days, hours, minutes), so the store reads only the rows that exist; the ranges (a
   * series' buckets) go to the store RANGES_PER_READ at a time, one statement each on SQLite,
   * with a turn of the event loop between reads when due. Owners over the same runs (a project's
   * endpoints over one window): `sumOwners`.
   * `region`: the rows of the endpoints' checks from that region.
   */
  private async sumRollupRuns(kind: RollupScopeKind, owners: Array<{ id: number; runs: RollupRun[] }>, region?: string): Promise<Accumulator[]> {
    const sums = owners.map(() => emptyAccumulator());
    const { rollups } = await this.names();
    let ranges: Array<{ gte: string; lt: string }> = [];
    let ownerOf: number[] = [];
    const read = async () => {
      const query = { field: 'id', ranges, sum: ROLLUP_SUMS, min: ['latency_min'], max: ['latency_max'] };
      const rows = await this.slices.run(() => this.store.aggregateRanges(rollups, query));
      for (const row of rows) if (row.count > 0) addRow(sums[ownerOf[row.group as number]], row);
      ranges = [];
      ownerOf = [];
    };
    const packed: PackedRead[] = [];
    const horizon = this.rawHorizon();
    const dayId = endpointDayId(region);
    for (let owner = 0; owner < owners.length; owner++) {
      const { id, runs } = owners[owner];
      for (const run of runs) {
        const from = run.from / 1000;
        const to = run.to / 1000;
        ranges.push(region === undefined ? rollupRange(kind, id, run.granularity, from, to) : regionRollupRange(id, region, run.granularity, from, to));
        ownerOf.push(owner);
        if (kind === 'endpoint') packed.push(...packedReads([id], [run], horizon, dayId, owner));
      }
      if (ranges.length >= RANGES_PER_READ) await read();
    }
    if (ranges.length > 0) await read();
    await addPackedHours(this.store, rollups, this.slices, packed, (owner, part) => addAccumulator(sums[owner], part));
    return sums;
  }

  /**
   * `sumRollupRuns` of many scope ids over the same runs, added to `sums`: each read sends
   * OWNERS_PER_READ key prefixes and the runs' ranges under them once, and gets one row per
   * owner back (a project of 10,000 endpoints: 40 reads of 250 rows, not 200 of 256).
   */
  private async sumOwners(kind: RollupScopeKind, ids: number[], runs: readonly RollupRun[], sums: ScopeSums): Promise<void> {
    if (runs.length === 0) return;
    const { rollups } = await this.names();
    const { prefix, ranges } = rollupRangeSuffixes(kind, runs);
    // Once per read, not per group of owners: every group reads the same days.
    const horizon = this.rawHorizon();
    const dayId = endpointDayId();
    for (let start = 0; start < ids.length; start += OWNERS_PER_READ) {
      const owners = ids.slice(start, start + OWNERS_PER_READ);
      const query = { field: 'id', ranges, prefixes: owners.map(prefix), sum: ROLLUP_SUMS, min: ['latency_min'], max: ['latency_max'] };
      const rows = await this.slices.run(() => this.store.aggregateRanges(rollups, query));
      for (const row of rows) if (row.count > 0) sums.addRow(start + (row.group as number), row);
      // The same owners' packed day rows next, while the pages their rows lie on were just read.
      if (kind === 'endpoint') await addPackedHours(this.store, rollups, this.slices, packedReads(owners, runs, horizon, dayId, start), (owner, part) => sums.addSums(owner, part));
    }
  }

  /**
   * Raw checks of the minutes that hold raw edges, grouped by minute start (epoch ms), of the
   * scopes `ids` of kind `readKind` (a parent's, when the caller shares its rows out). Read by
   * time range from the ranges of each scope's rows (`RawSpans`: endpoints' and teams' index
   * ranges, a project's key range of the span; failed and successful ones apart), so the raw rows
   * need no minute index of their own; adjacent minutes are read as one span. Rows hold `idField`
   * (by default the scope's id field; the caller's own when it shares a parent's rows out) and
   * EDGE_FIELDS.
   */
  private async fetchRawEdges(kind: RollupScopeKind, ids: number[], pieces: RangePiece[], spans: RawSpans, readKind: RollupScopeKind, idField: string = SCOPE_FIELD[kind]): Promise<Map<number, EdgeChecks>> {
    const minutes = [...new Set(pieces.flatMap((p) => (p.kind === 'raw' ? [floorTo(p.from, GRANULARITY_MS.minute)] : [])))];
    const byMinute = new Map<number, EdgeChecks>();
    if (minutes.length === 0 || ids.length === 0) return byMinute;
    const timeSpans = minuteSpans(minutes);
    // Endpoints' ranges do not depend on the span: an `in` list of them, as many as a read takes.
    const partsPerSpan: RawPart[][] =
      readKind === 'endpoint'
        ? timeSpans.map(() => endpointParts(ids))
        : (await Promise.all(ids.map((id) => spans.partsOf(readKind, id, timeSpans)))).reduce((all, perSpan) => all.map((parts, i) => [...parts, ...perSpan[i]]));
    const items = timeSpans.flatMap((span, i) => partsPerSpan[i].flatMap((part) => [false, true].map((success) => ({ part, span, success }))));
    const requests = await this.slices.map(items, ({ part, span, success }) =>
      spans.readAll(part, { ...outcomeFilter(undefined, success), checked_at_ms: { gte: span.from, lt: span.to } }, [idField, ...EDGE_FIELDS], PAGE),
    );
    requests.forEach((rows, i) => {
      const succeeded = items[i].success;
      for (const row of rows as unknown as EdgeCheck[]) {
        const key = floorTo(row.checked_at_ms, GRANULARITY_MS.minute);
        let lists = byMinute.get(key);
        if (!lists) byMinute.set(key, (lists = { failed: [], succeeded: [] }));
        (succeeded ? lists.succeeded : lists.failed).push(row);
      }
    });
    return byMinute;
  }

  /** Where the raw rows of each scope lie, for one request (its projects' members read once). */
  private async rawSpans(): Promise<RawSpans> {
    return new RawSpans(this.store, this.slices, rawSpanNames(await this.names()), { keysPerSeek: this.options.keysPerSeek });
  }

  private async names(): Promise<Required<AnalyticsCollections>> {
    const names = typeof this.collections === 'function' ? await this.collections() : this.collections;
    return { regionChecks: REGION_CHECKS_COLLECTION, members: ROLLUP_MEMBERS_COLLECTION, checkMinutes: CHECK_MINUTES_COLLECTION, ...names };
  }
}

/**
 * Where a scope's raw rows (`analytics_checks`) of a time span lie, as filters that each read
 * one range: of an index, or of the table's keys (rollups v15, issue 31).
 *
 * An endpoint's rows are its range of the endpoint index. A project has no index of its own
 * (about 19 B a check less): its rows of a span are read either as the span's key range (the
 * time -> key map, `CHECK_MINUTES_COLLECTION`: SQLite walks the raw table from the span's least
 * to its greatest check id and keeps the project's rows), which costs every check of the
 * service in that range, or as its endpoints' ranges of the endpoint index (an `in` list:
 * SQLite seeks once per endpoint), which costs a seek per endpoint. Each span takes the cheaper:
 * a series' sub-minute edges of a project of 10,000 endpoints are a few hundred keys each
 * (10,000 seeks each the other way: about 15 ms), a small project's p95 over days of a busy
 * service is a few seeks. A team's rows are its primary project's (`TeamDoc`: they leave
 * `team_id` null) and the rest under the sparse team index.
 *
 * A generation without the map (v14, serving while v15 is rebuilt) still has the project index:
 * its project rows are read through it (`{ project_id }`).
 */

/** One range of a scope's raw rows: the filter, and whether its rows come in key order (a key range) or in the index's time order. */
export interface RawPart {
  filter: Filter;
  byKey: boolean;
}

/** A part's filter less its key range (`byKey`: the check ids of its span), which one read can give each of its ranges apart. */
function keyRangeApart(part: RawPart): { shared: Filter; keys?: Filter } {
  if (!part.byKey) return { shared: part.filter };
  const { check_id: checkIds, ...shared } = part.filter;
  return { shared, keys: { check_id: checkIds } };
}

/**
 * The endpoints' ranges of the endpoint index, as `in` lists of IN_CHUNK (one id alone as an
 * equality), each with `label` too (a project's, so a row counts where the rollups view put it).
 */
export function endpointParts(ids: number[], label: Filter = {}): RawPart[] {
  return chunk(ids, IN_CHUNK).map((group) => ({ filter: { endpoint_id: group.length === 1 ? group[0] : { in: group }, ...label }, byKey: false }));
}

/** Half-open, epoch milliseconds. */
export type RawSpan = TimeRange;

export interface RawSpanNames {
  checks: string;
  members: string;
  /** Missing: the generation has no time -> key map (v14): its project index is read. */
  checkMinutes?: string;
}

/** The collections `RawSpans` reads, the logical names where none is given (null: the generation has no map). */
export function rawSpanNames(names: AnalyticsCollections): RawSpanNames {
  return {
    checks: names.checks,
    members: names.members ?? ROLLUP_MEMBERS_COLLECTION,
    checkMinutes: names.checkMinutes === undefined ? CHECK_MINUTES_COLLECTION : (names.checkMinutes ?? undefined),
  };
}

/**
 * Keys of the raw table one seek of the endpoint index is worth (measured on SQLite: a seek
 * about 1.5 us, a key walked about 0.065 us).
 */
export const KEYS_PER_SEEK = 24;
/**
 * What reading a span's rows through a project's members costs, in keys walked: a seek per
 * member, and a seek per row found (each row is a lookup of its own table page, where a key range
 * walks the rows in order). The rows expected are the project's share of the keys, its share of
 * every endpoint the view knows. Measured (SQLite, a project of 1,000 of 10,000 endpoints): the
 * members' 6,860 rows of two days cost 12-16 ms, about 1.75 us a row, where a key walked is 0.065.
 */
function membersCost(members: number, allMembers: number, walked: number, keysPerSeek: number): number {
  const share = allMembers > 0 ? Math.min(1, members / allMembers) : 1;
  return members * keysPerSeek + walked * share * keysPerSeek;
}

/** Below this many keys a span is walked without asking how many endpoints the project has. */
const SEEKS_BEFORE_MEMBERS = 16;
/** Minutes of the map per read of single minutes. */
const MINUTES_PER_READ = 250;

export interface RawSpansOptions {
  /** Keys one seek is worth (tests set 0 to take the endpoint index, Infinity the key range). */
  keysPerSeek?: number;
}

/** Member documents per read of a project's members. */
const MEMBERS_PAGE = 2_500;

/** One request's view of where raw rows lie: each project's members are asked for once. */
export class RawSpans {
  private readonly members = new Map<number, Promise<number[]>>();
  private readonly memberCounts = new Map<number, Promise<number>>();
  private allMembers: Promise<number> | undefined;
  private readonly teams = new Map<number, Promise<TeamDoc | null>>();

  constructor(
    private readonly store: ReadStore,
    private readonly slices: Slices,
    private readonly names: RawSpanNames,
    private readonly options: RawSpansOptions = {},
  ) {}

  /** The parts of the scope's rows checked in each span, span by span (the caller adds outcome and time). */
  async partsOf(kind: RollupScopeKind, id: number, spans: RawSpan[]): Promise<RawPart[][]> {
    if (kind === 'endpoint') return spans.map(() => [{ filter: { endpoint_id: id }, byKey: false }]);
    if (kind === 'project') return this.projectParts(id, spans);
    const team = await this.teamOf(id);
    const own: RawPart = { filter: { team_id: id }, byKey: false };
    if (!team) return spans.map(() => [own]);
    return (await this.projectParts(team.primary_project_id, spans)).map((parts) => [...parts, own]);
  }

  private async projectParts(projectId: number, spans: RawSpan[]): Promise<RawPart[][]> {
    if (this.names.checkMinutes === undefined) return spans.map(() => [{ filter: { project_id: projectId }, byKey: false }]);
    const keys = await this.keyRanges(this.names.checkMinutes, spans);
    const keysPerSeek = this.options.keysPerSeek ?? KEYS_PER_SEEK;
    return Promise.all(
      keys.map(async (range): Promise<RawPart[]> => {
        if (!range) return [];
        const walked = range.last - range.first + 1;
        // Counted first (index counts): a large project's members are read only when they win.
        // None known (a view written without member documents): the key range finds every row.
        if (walked > keysPerSeek * SEEKS_BEFORE_MEMBERS) {
          const count = await this.memberCount(projectId);
          if (count > 0 && membersCost(count, await this.allMembersCount(), walked, keysPerSeek) < walked) {
            // The project label too: a row counts where the rollups view put it.
            return endpointParts(await this.membersOf(projectId), { project_id: projectId });
          }
        }
        return [{ filter: { project_id: projectId, check_id: { gte: range.first, lte: range.last } }, byKey: true }];
      }),
    );
  }

  /** The least and greatest check id of the rows checked in each span (null: none). */
  private async keyRanges(minutes: string, spans: RawSpan[]): Promise<Array<{ first: number; last: number } | null>> {
    const bounds = spans.map((span) => ({ first: checkMinuteOf(span.from), last: checkMinuteOf(span.to - 1) }));
    const single = [...new Set(bounds.filter((b) => b.first === b.last).map((b) => b.first))];
    const rows = new Map<number, CheckMinuteRow>();
    await this.slices.map(chunk(single, MINUTES_PER_READ), async (group) => {
      const found = (await this.store.find(minutes, { filter: { minute: group.length === 1 ? group[0] : { in: group } } })) as unknown as CheckMinuteRow[];
      for (const row of found) rows.set(row.minute, row);
    });
    return Promise.all(
      bounds.map(async ({ first, last }, i) => {
        if (spans[i].from >= spans[i].to) return null;
        if (first === last) {
          const row = rows.get(first);
          return row ? { first: row.first_check_id, last: row.last_check_id } : null;
        }
        const [sums] = await this.slices.run(() =>
          this.store.aggregate(minutes, { filter: { minute: { gte: first, lte: last } }, min: ['first_check_id'], max: ['last_check_id'] }),
        );
        if (!sums || sums.count === 0) return null;
        return { first: sums.min.first_check_id as number, last: sums.max.last_check_id as number };
      }),
    );
  }

  /** How many endpoints the view knows, in every project: a project's share of the raw rows is its members' share of these. */
  private allMembersCount(): Promise<number> {
    // Every member document has a project (team documents have none).
    this.allMembers ??= this.slices.run(() => this.store.count(this.names.members, { project_id: { gte: 0 } }));
    return this.allMembers;
  }

  private memberCount(projectId: number): Promise<number> {
    let count = this.memberCounts.get(projectId);
    if (!count) this.memberCounts.set(projectId, (count = this.slices.run(() => this.store.count(this.names.members, { project_id: projectId }))));
    return count;
  }

  /**
   * The endpoints whose rows are labelled with the project: this view's own member documents
   * (`ROLLUP_MEMBERS_COLLECTION`, by their project index), written in the same transactions as
   * the rows' labels, so the two never disagree; deleted endpoints' stay.
   */
  private membersOf(projectId: number): Promise<number[]> {
    let members = this.members.get(projectId);
    if (!members) this.members.set(projectId, (members = this.readMembers(projectId)));
    return members;
  }

  private async readMembers(projectId: number): Promise<number[]> {
    const ids: number[] = [];
    let after: Scalar[] | undefined;
    for (;;) {
      const page = await this.slices.run(() =>
        this.store.find(this.names.members, { filter: { project_id: projectId }, sort: [['endpoint_id', 'asc']], after, limit: MEMBERS_PAGE, fields: ['endpoint_id'] }),
      );
      for (const doc of page) ids.push(doc.endpoint_id as number);
      if (page.length < MEMBERS_PAGE) return ids;
      after = [ids[ids.length - 1]];
    }
  }

  private teamOf(teamId: number): Promise<TeamDoc | null> {
    let team = this.teams.get(teamId);
    if (!team) this.teams.set(teamId, (team = this.slices.run(() => this.store.get(this.names.members, teamDocId(teamId))) as Promise<TeamDoc | null>));
    return team;
  }

  /**
   * Every row of `part` matching `filter` too, paged so that no adapter page limit can cut the
   * result and each page is one range read in its own order (a key range by key, an index range
   * by time: ordered otherwise, SQLite may walk the whole table instead).
   */
  async readAll(part: RawPart, filter: Filter, fields: string[], pageSize: number): Promise<Doc[]> {
    const sort: Array<[string, 'asc']> = part.byKey ? [['check_id', 'asc']] : [['checked_at_ms', 'asc'], ['check_id', 'asc']];
    const wanted = [...new Set([...fields, ...sort.map(([field]) => field)])];
    const rows: Doc[] = [];
    let after: Scalar[] | undefined;
    for (;;) {
      const page = await this.slices.run(() => this.store.find(this.names.checks, { filter: { ...part.filter, ...filter }, sort, after, limit: pageSize, fields: wanted }));
      rows.push(...page);
      if (page.length < pageSize) return rows;
      const last = page[page.length - 1];
      after = sort.map(([field]) => last[field] as Scalar);
    }
  }
}

type LatestOfRegion = Pick<RegionCheckRow, 'check_id' | 'checked_at_ms' | 'success' | 'status_code' | 'latency_ms'>;

/** A raw edge row as the sums read it: its scope's id (under the field asked for), its place and latency. */
type EdgeCheck = { checked_at_ms: number; check_id: number; latency_ms: number } & Record<string, unknown>;
/** A minute's raw edge rows, failed and successful ones apart (each read from its own index range). */
type EdgeChecks = { failed: EdgeCheck[]; succeeded: EdgeCheck[] };

/**
 * How a range's raw rows are summed: failures and successes in one read, told apart by the sum
 * of `outcome` (1 a success, 0 a failure), where the range is a key range (a project's minute,
 * whose rows are walked whatever their outcome: half the reads); apart where an index leads with
 * the outcome (an endpoint's or a team's), each outcome then one seek. An `in` of both outcomes
 * there costs SQLite more than two reads: 16 pieces of a team read as one statement took 4.4 ms
 * with `outcome IN (0, 1)` against 13 us a piece alone (growing with the square of the pieces).
 * Region rows keep `success`: read apart.
 */
function outcomesApart(scope: AnalyticsScope, byKey: boolean): Array<boolean | 'both'> {
  return scope.region === undefined && byKey ? ['both'] : [false, true];
}

/**
 * The filter of counted checks that succeeded (true), failed (false) or either: raw rows keep
 * `outcome` (counted failures 0, successes 1; the other outcomes are manual or suppressed checks
 * no analytics read asks for), region rows `success` (counted checks only).
 */
function outcomeFilter(region: string | undefined, success: boolean | 'both'): Filter {
  if (region !== undefined) return { success: success === 'both' ? { in: [false, true] } : success };
  return { outcome: success === 'both' ? { in: APPLICABLE_OUTCOMES } : success ? OUTCOME_SUCCESS : OUTCOME_FAILURE };
}

/** The newer of two checks, by checked_at, then id. */
function later<T extends { checked_at_ms: number; check_id: number }>(a: T | undefined, b: T | undefined): T | undefined {
  if (!a || !b) return a ?? b;
  return b.checked_at_ms > a.checked_at_ms || (b.checked_at_ms === a.checked_at_ms && b.check_id > a.check_id) ? b : a;
}

/** A row's place in a newest-first walk. */
export type Placed = { checked_at_ms: number; check_id: number } & Record<string, unknown>;
/** The next (at most) `limit` rows of a keyset walk, newest first, after `after` ([checked_at_ms, check_id]). */
export type NewestFirstWalk = (after: [number, number] | undefined, limit: number) => Promise<Placed[]>;

/**
 * The `limit` newest rows of disjoint walks, merged newest first (checked_at, then id). Each
 * walk is read in pages, the next one when the merge has taken its last, so it reads at most
 * `limit` rows and a page per walk; one walk reads as a walk alone would (pages of `page`).
 * With several, each starts at an eighth of `page` and doubles up to it: a team's primary
 * project may hold a few of the newest rows, and its walk then reads about as many.
 */
export async function newestOf(walks: NewestFirstWalk[], limit: number, page: number): Promise<Placed[]> {
  const first = walks.length === 1 ? page : Math.max(1, Math.ceil(page / 8));
  const heads = walks.map(() => ({ rows: [] as Placed[], next: 0, after: undefined as [number, number] | undefined, done: false, size: first }));
  const merged: Placed[] = [];
  while (merged.length < limit) {
    for (let i = 0; i < walks.length; i++) {
      const head = heads[i];
      if (head.done || head.next < head.rows.length) continue;
      const want = Math.min(head.size, limit - merged.length);
      head.size = Math.min(page, head.size * 2);
      head.rows = await walks[i](head.after, want);
      head.next = 0;
      head.done = head.rows.length < want;
      const last = head.rows[head.rows.length - 1];
      if (last) head.after = [last.checked_at_ms, last.check_id];
    }
    let newest: (typeof heads)[number] | undefined;
    for (const head of heads) {
      if (head.next < head.rows.length && (!newest || newestFirst(head.rows[head.next], newest.rows[newest.next]) < 0)) newest = head;
    }
    if (!newest) break;
    merged.push(newest.rows[newest.next++]);
  }
  return merged;
}

/** Minute starts (epoch ms) as spans [from, to) of adjacent minutes, in time order. */
function minuteSpans(minuteStarts: number[]): Array<{ from: number; to: number }> {
  const spans: Array<{ from: number; to: number }> = [];
  for (const start of [...minuteStarts].sort((a, b) => a - b)) {
    const last = spans[spans.length - 1];
    if (last && last.to === start) last.to = start + GRANULARITY_MS.minute;
    else spans.push({ from: start, to: start + GRANULARITY_MS.minute });
  }
  return spans;
}

/** Names the day rows of endpoints (or of their checks from one region) from a day's start (epoch seconds). */
export function endpointDayId(region?: string): (endpointId: number, daySeconds: number) => string {
  return region === undefined ? (endpointId, day) => rollupId('endpoint', endpointId, 'day', day) : (endpointId, day) => regionRollupId(endpointId, region, 'day', day);
}

/** A day row whose packed hours [first, end) count for owner `owner` (an index of the caller's). */
export interface PackedRead {
  id: string;
  first: number;
  end: number;
  owner: number;
}

/**
 * The day rows whose packed hours `runs` cover for each of `ownerIds` (owner `ownerBase + i`
 * for `ownerIds[i]`): the spans (`packedHourSpans`) are worked out once, then named for each
 * owner, since a project's thousands of endpoints share one window's runs.
 */
export function packedReads(ownerIds: readonly number[], runs: readonly RollupRun[], horizon: number, dayId: (ownerId: number, daySeconds: number) => string, ownerBase = 0): PackedRead[] {
  const spans = runs.flatMap((run) => packedHourSpans(run, horizon));
  const reads: PackedRead[] = [];
  if (spans.length === 0) return reads;
  for (let i = 0; i < ownerIds.length; i++) {
    for (const { day, first, end } of spans) reads.push({ id: dayId(ownerIds[i], day), first, end, owner: ownerBase + i });
  }
  return reads;
}

/**
 * Adds the packed hours of each read (`packedReads`: hours before the horizon that retention
 * moved into their day rows) to its owner, through `add`: the day rows read by id,
 * PACKED_DAYS_PER_READ at a time, each group's hours added as its rows come back, so that a
 * project's ten thousand day rows are decoded a group per turn of the event loop rather than in
 * one stretch after the last read.
 */
export async function addPackedHours(
  store: ReadStore,
  rollups: string,
  slices: Slices,
  reads: PackedRead[],
  add: (owner: number, sums: Accumulator) => void,
): Promise<void> {
  await slices.map(chunk(reads, PACKED_DAYS_PER_READ), async (group) => {
    const hoursOf = new Map<string, string | undefined>();
    // A day row two owners read (buckets of one day) is asked for once.
    for (const doc of await store.getMany(rollups, [...new Set(group.map((read) => read.id))])) hoursOf.set(doc.id, (doc as unknown as RollupRow).hours);
    for (const { id, first, end, owner } of group) {
      const hours = hoursOf.get(id);
      if (hours !== undefined) add(owner, addPackedSums(emptyAccumulator(), hours, first, end));
    }
  });
}

/** `items` in consecutive pieces of at most `size`. */
export function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

function pairs<A, B>(left: A[], right: B[]): Array<[A, B]> {
  return left.flatMap((a) => right.map((b): [A, B] => [a, b]));
}

/** Adds one of `aggregateRanges`' rows (ROLLUP_SUMS, latency_min, latency_max) to an owner's sums. */
function addRow(acc: Accumulator, row: AggregateRow): void {
  addAccumulator(acc, {
    checks: row.sum.checks,
    failures: row.sum.failures,
    latency_sum: row.sum.latency_sum,
    latency_min: row.min.latency_min,
    latency_max: row.max.latency_max,
  });
}

/** The sums of `total`, with the minimum and maximum latency of the parts (a project's endpoints). */
function withExtremesOf(total: Accumulator, parts: ScopeSums): Accumulator {
  return { ...total, ...parts.extremes() };
}

/**
 * Partial sums of many scopes of one kind (a project's thousands of endpoints): a column per
 * figure instead of an object per scope, so a large project's sums are a few arrays the garbage
 * collector does not walk or copy. Exact like `Accumulator` (integers added as doubles, below
 * 2^53). An id given twice has one sum, as a map by id would.
 */
export class ScopeSums {
  /** The distinct ids, ascending: an id's slot is its index here (found by binary search, no map of thousands of entries). */
  private readonly ids: Float64Array;
  /** Slot of each position of the ids given. */
  private readonly slotAt: Int32Array;
  private readonly checks: Float64Array;
  private readonly failures: Float64Array;
  private readonly latencySum: Float64Array;
  /** NaN: no latency yet. */
  private readonly latencyMin: Float64Array;
  private readonly latencyMax: Float64Array;

  constructor(ids: readonly number[]) {
    const sorted = Float64Array.from(ids).sort();
    let n = 0;
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[n - 1]) sorted[n++] = sorted[i];
    this.ids = sorted.subarray(0, n);
    this.slotAt = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) this.slotAt[i] = this.slot(ids[i]);
    this.checks = new Float64Array(n);
    this.failures = new Float64Array(n);
    this.latencySum = new Float64Array(n);
    this.latencyMin = new Float64Array(n).fill(NaN);
    this.latencyMax = new Float64Array(n).fill(NaN);
  }

  /** The id's slot, or -1 for an id not given. */
  private slot(id: number): number {
    const { ids } = this;
    let lo = 0;
    let hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (ids[mid] < id) lo = mid + 1;
      else if (ids[mid] > id) hi = mid - 1;
      else return mid;
    }
    return -1;
  }

  /** Adds one of `aggregateRanges`' rows (ROLLUP_SUMS, latency_min, latency_max) to the id at `position` of the ids given. */
  addRow(position: number, row: AggregateRow): void {
    this.add(this.slotAt[position], row.sum.checks, row.sum.failures, row.sum.latency_sum, row.min.latency_min, row.max.latency_max);
  }

  /** Adds partial sums to the id at `position` of the ids given. */
  addSums(position: number, sums: Accumulator): void {
    this.add(this.slotAt[position], sums.checks, sums.failures, sums.latency_sum, sums.latency_min, sums.latency_max);
  }

  /** Adds one applicable check to its scope's sums; an id not among those given is ignored. */
  addCheck(id: number, success: boolean, latencyMs: number): void {
    const slot = this.slot(id);
    if (slot >= 0) this.add(slot, 1, success ? 0 : 1, latencyMs, latencyMs, latencyMs);
  }

  private add(slot: number, checks: number, failures: number, latencySum: number, min: number | null, max: number | null): void {
    if (checks === 0) return;
    this.checks[slot] += checks;
    this.failures[slot] += failures;
    this.latencySum[slot] += latencySum;
    if (min !== null && !(this.latencyMin[slot] <= min)) this.latencyMin[slot] = min;
    if (max !== null && !(this.latencyMax[slot] >= max)) this.latencyMax[slot] = max;
  }

  /** The id's sums (a new object each call), or undefined for an id not given. */
  get(id: number): Accumulator | undefined {
    const slot = this.slot(id);
    if (slot < 0) return undefined;
    const min = this.latencyMin[slot];
    const max = this.latencyMax[slot];
    return { checks: this.checks[slot], failures: this.failures[slot], latency_sum: this.latencySum[slot], latency_min: Number.isNaN(min) ? null : min, latency_max: Number.isNaN(max) ? null : max };
  }

  /** The least minimum and greatest maximum latency over every scope; null when none has one. */
  extremes(): Pick<Accumulator, 'latency_min' | 'latency_max'> {
    let min = NaN;
    let max = NaN;
    for (let i = 0; i < this.latencyMin.length; i++) {
      if (this.latencyMin[i] < min || Number.isNaN(min)) min = this.latencyMin[i];
      if (this.latencyMax[i] > max || Number.isNaN(max)) max = this.latencyMax[i];
    }
    return { latency_min: Number.isNaN(min) ? null : min, latency_max: Number.isNaN(max) ? null : max };
  }
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function seriesItem(startMs: number, acc: Accumulator): SeriesItem {
  const figures = toFigures(acc);
  return {
    bucket_start: iso(startMs),
    checks: figures.checks,
    failures: figures.failures,
    uptime_percent: figures.uptime_percent,
    avg_latency_ms: figures.avg_latency_ms,
  };
}

function current(endpoint: EndpointFact): Current {
  const latest = endpoint.latest;
  return {
    up: latest?.success ?? null,
    last_check_at: latest?.checked_at ?? null,
    last_status_code: latest?.status_code ?? null,
    last_latency_ms: latest?.latency_ms ?? null,
    consecutive_failures: latest?.consecutive_failures ?? 0,
  };
}

const NEWEST_FIRST: Array<[string, SortDirection]> = [
  ['checked_at_ms', 'desc'],
  ['check_id', 'desc'],
];
/** What a walk reads of each row: its place in the list. */
const PLACE = ['checked_at_ms', 'check_id'];

/**
 * Monitoring's checks list and `GET` of one check (its `CheckListSource` port), from the raw
 * rows, which hold every retained check. The list is newest first (checked_at, then id); the
 * endpoint's (endpoint_id, outcome, checked_at_ms, check_id) index puts each outcome in a range
 * of its own, so a page is up to four keyset walks, one per outcome the `success` filter allows
 * (each reading at most `limit` rows from the cursor's keyset), merged by (checked_at, id)
 * descending. `source` is a filter on `flags` while walking, `region` one on the row's JSON
 * (the default region is stored as no region), `from`/`to` bounds on checked_at_ms. A page's
 * ids are kept per query while the collection is unchanged, and each check while its row is
 * not rewritten (a check only inserts; moves and retention rewrite or delete), so new checks show
 * at once and known ones are not read again.
 */
export class RollupCheckList implements CheckListSource {
  private readonly lists: ViewListCache<ListedCheck>;

  constructor(private readonly reader: ViewReader) {
    this.lists = new ViewListCache(reader, ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION, { lists: 1_000, values: 20_000 });
  }

  async list(endpointId: number, filters: CheckListFilters, after: [string, number] | undefined, limit: number, scope?: object): Promise<ListedCheck[]> {
    const walks = walksOf(endpointId, filters);
    const keyset = after === undefined ? undefined : [Date.parse(after[0]), after[1]];
    const ids = async () => {
      const pages = await Promise.all(
        walks.map((filter) => this.reader.find(ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION, { filter, sort: NEWEST_FIRST, after: keyset, limit, fields: PLACE })),
      );
      const rows = (pages.length === 1 ? pages[0] : pages.flat().sort(newestFirst)) as unknown as Array<Pick<RawCheckRow, 'checked_at_ms' | 'check_id'>>;
      return rows.slice(0, limit).map((row) => String(row.check_id));
    };
    return this.lists.list(
      JSON.stringify([endpointId, filters, after ?? null, limit]),
      ids,
      async (missing) => ((await this.reader.getMany(ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION, missing)) as unknown as RawCheckRow[]).map((row) => [row.id, listedCheck(row)]),
      scope,
    );
  }

  async check(checkId: number): Promise<ListedCheck | null> {
    const row = (await this.reader.get(ROLLUPS_PROJECTION, RAW_CHECKS_COLLECTION, checkId)) as RawCheckRow | null;
    return row ? listedCheck(row) : null;
  }
}

/** One filter per outcome the filters allow (manual checks are never counted: outcomes 2 and 3 only). */
function walksOf(endpointId: number, filters: CheckListFilters): Filter[] {
  let outcomes = filters.success === undefined ? [OUTCOME_FAILURE, OUTCOME_SUCCESS, OUTCOME_OTHER_FAILURE, OUTCOME_OTHER_SUCCESS] : filters.success ? [OUTCOME_SUCCESS, OUTCOME_OTHER_SUCCESS] : [OUTCOME_FAILURE, OUTCOME_OTHER_FAILURE];
  const common: Filter = {};
  if (filters.source !== undefined) {
    const manual = filters.source === 'manual';
    if (manual) outcomes = outcomes.filter((outcome) => outcome === OUTCOME_OTHER_FAILURE || outcome === OUTCOME_OTHER_SUCCESS);
    common.flags = { in: manual ? [CHECK_MANUAL, CHECK_MANUAL | CHECK_NO_EXCERPT] : [0, CHECK_NO_EXCERPT] };
  }
  // The rows leave out the default region (`eq: null` matches a missing field).
  if (filters.region !== undefined) common.region = filters.region === DEFAULT_REGION ? null : filters.region;
  if (filters.from !== undefined || filters.to !== undefined) {
    common.checked_at_ms = { ...(filters.from !== undefined ? { gte: Date.parse(filters.from) } : {}), ...(filters.to !== undefined ? { lt: Date.parse(filters.to) } : {}) };
  }
  return outcomes.map((outcome) => ({ endpoint_id: endpointId, outcome, ...common }));
}

function newestFirst(a: Record<string, unknown>, b: Record<string, unknown>): number {
  return (b.checked_at_ms as number) - (a.checked_at_ms as number) || (b.check_id as number) - (a.check_id as number);
}

/** The row as monitoring's port gives it. */
function listedCheck(row: RawCheckRow): ListedCheck {
  const check: ListedCheck = {
    check_id: row.check_id,
    endpoint_id: row.endpoint_id,
    configuration_version: row.configuration_version,
    success: row.outcome === OUTCOME_SUCCESS || row.outcome === OUTCOME_OTHER_SUCCESS,
    manual: (row.flags & CHECK_MANUAL) !== 0,
    has_excerpt: (row.flags & CHECK_NO_EXCERPT) === 0,
    status_code: rawStatusCode(row),
    latency_ms: row.latency_ms,
    ...rawTimings(row),
    latency_threshold_ms: row.latency_threshold_ms,
    checked_at: new Date(row.checked_at_ms).toISOString(),
  };
  if (row.body_complete !== undefined) check.body_complete = row.body_complete;
  if (row.latency_anomaly !== undefined) check.latency_anomaly = row.latency_anomaly;
  if (row.alert_suppressed !== undefined) check.alert_suppressed = row.alert_suppressed;
  if (row.failure_reason !== undefined) check.failure_reason = row.failure_reason;
  if (row.region !== undefined) check.region = row.region;
  return check;
}
