import type { Doc, Filter, ReadStore, Scalar } from '../../platform/read-store/read-store.port.js';
import {
  P95_SAMPLE_LIMIT,
  addAccumulator,
  addCheck,
  emptyAccumulator,
  p95,
  toFigures,
  type Accumulator,
  type RangeFigures,
} from '../domain/aggregate.js';
import { SCOPE_FIELD, rollupRange } from '../domain/rollup.js';
import { RAW_CHECKS_COLLECTION, ROLLUPS_COLLECTION, type RawCheckRow, type RollupScopeKind } from '../domain/views.js';
import { GRANULARITY_MS, floorTo, planRange, type Granularity, type RangePiece } from '../domain/range-plan.js';
import { bucketRange, type AnalyticsWindow } from '../domain/window.js';
import type { AnalyticsFacts, AnalyticsScope, EndpointFact, ProjectMember } from './analytics-facts.js';
import { newestFirst } from './newest-first.js';

/**
 * Analytics figures from time rollups: each range is planned into day/hour/minute rollup rows
 * plus sub-minute raw edges, so a query reads (range / granularity + edges) rows whatever the
 * number of checks. Proven equal to the brute-force reference in test/unit/analytics.
 *
 * A check counts for its team and for its endpoint's CURRENT project (docs/decisions.md,
 * "Analytics"): team figures come from the team's rollups, project figures from the rollups and
 * raw rows of the endpoints the project holds now (`AnalyticsFacts.membersOf`), so a project's
 * totals, series and p95, its endpoint rows and its row in the team object follow one rule.
 */

/** The rollup scopes whose sums make up an analytics scope's figures. */
interface Counted {
  kind: RollupScopeKind;
  ids: number[];
}

/** Half-open, epoch milliseconds. */
export interface TimeRange {
  from: number;
  to: number;
}

/** Physical names of the two views (the projection runner maps logical names per generation). */
export interface AnalyticsCollections {
  rollups: string;
  checks: string;
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

export interface Health {
  enabled_endpoints: number;
  healthy_endpoints: number;
  failing_endpoints: number;
  unchecked_endpoints: number;
}

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
const PAGE = 5000;
const ROLLUP_SUMS = ['checks', 'failures', 'latency_sum'];

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
  ) {}

  /** Raw checks before this instant may have left (retention); -Infinity when none have. */
  private rawHorizon(): number {
    return this.options.rawHorizon?.() ?? -Infinity;
  }

  /** Figures of one scope over one range, p95 included. */
  async computeTotals(scope: AnalyticsScope, range: TimeRange): Promise<Totals> {
    const counted = await this.counted(scope);
    const [sums, p95Value] = await Promise.all([this.sumPerScope(counted.kind, counted.ids, range), this.p95Of(counted, range.from, range.to)]);
    const total = [...sums.values()].reduce((acc, part) => addAccumulator(acc, part), emptyAccumulator());
    return { ...toFigures(total), p95_latency_ms: p95Value };
  }

  /** A team and an endpoint are counted from their own rollups, a project from its endpoints'. */
  private async counted(scope: AnalyticsScope, members?: ProjectMember[]): Promise<Counted> {
    if (scope.kind !== 'project') return { kind: scope.kind, ids: [scope.id] };
    return { kind: 'endpoint', ids: (members ?? (await this.facts.membersOf([scope.id]))).map((m) => m.endpoint_id) };
  }

  async computeSeries(
    scope: AnalyticsScope,
    from: number,
    to: number,
    bucket_seconds: number,
    buckets: number,
  ): Promise<SeriesItem[]> {
    const window: AnalyticsWindow = { from, to, bucket_seconds, buckets };
    const sums = await this.sumBuckets(await this.counted(scope), window);
    return sums.map((acc, i) => seriesItem(bucketRange(window, i).start, acc));
  }

  /** Nearest-rank p95 over the newest P95_SAMPLE_LIMIT successful applicable checks in range. */
  async computeP95(scope: AnalyticsScope, from: number, to: number): Promise<number | null> {
    return this.p95Of(await this.counted(scope), from, to);
  }

  /**
   * One scope's sample is one indexed walk, newest first. Several endpoints' (a project's) are
   * merged: each endpoint's walk is read newest first in pages and the newest head taken until
   * the sample is full, so at most P95_SAMPLE_LIMIT rows plus one page per endpoint are read.
   */
  private async p95Of(counted: Counted, from: number, to: number): Promise<number | null> {
    const { checks } = await this.names();
    const field = SCOPE_FIELD[counted.kind];
    const walks = counted.ids.map((id) => (limit: number, after?: [number, number]) =>
      this.store.find(checks, {
        filter: { [field]: id, success: true, checked_at_ms: { gte: from, lt: to } },
        sort: [
          ['checked_at_ms', 'desc'],
          ['check_id', 'desc'],
        ],
        after,
        limit,
      }) as unknown as Promise<RawCheckRow[]>,
    );
    const sample = await newestFirst(walks, P95_SAMPLE_LIMIT);
    // The sample would have reached past the horizon, where raw checks may be gone: no figure.
    if (from < this.rawHorizon() && sample.length < P95_SAMPLE_LIMIT) return null;
    return p95(sample.map((row) => Number(row.latency_ms)));
  }

  async teamAnalytics(teamId: number, window: AnalyticsWindow): Promise<TeamAnalytics> {
    const scope: AnalyticsScope = { kind: 'team', id: teamId };
    const [common, projects, endpoints, openByProject] = await Promise.all([
      this.common(teamId, scope, window),
      this.facts.projects(teamId),
      this.facts.endpoints(teamId, scope),
      this.facts.openIncidentsByProject(teamId),
    ]);
    // Each project row sums the endpoints the project holds now, as the project object does.
    const members = await this.facts.membersOf(projects.map((p) => p.project_id));
    const perEndpoint = await this.sumPerScope('endpoint', members.map((m) => m.endpoint_id), window);
    const perProject = new Map<number, Accumulator>();
    for (const member of members) {
      const acc = perProject.get(member.project_id) ?? emptyAccumulator();
      perProject.set(member.project_id, addAccumulator(acc, perEndpoint.get(member.endpoint_id)!));
    }
    const rows = [...projects]
      .sort((a, b) => a.project_id - b.project_id)
      .map((project): ProjectRow => {
        const figures = toFigures(perProject.get(project.project_id) ?? emptyAccumulator());
        return {
          project_id: project.project_id,
          name: project.name,
          enabled_endpoints: endpoints.filter((e) => e.enabled && e.project_id === project.project_id).length,
          checks: figures.checks,
          failures: figures.failures,
          uptime_percent: figures.uptime_percent,
          avg_latency_ms: figures.avg_latency_ms,
          open_incidents: openByProject.get(project.project_id) ?? 0,
        };
      });
    const { window: w, totals, incidents, series } = common;
    return { team_id: teamId, window: w, health: health(endpoints), totals, incidents, series, projects: rows };
  }

  async projectAnalytics(teamId: number, projectId: number, window: AnalyticsWindow): Promise<ProjectAnalytics> {
    const scope: AnalyticsScope = { kind: 'project', id: projectId };
    const [members, endpoints] = await Promise.all([this.facts.membersOf([projectId]), this.facts.endpoints(teamId, scope)]);
    const [common, perEndpoint] = await Promise.all([
      this.common(teamId, scope, window, members),
      this.sumPerScope('endpoint', endpoints.map((e) => e.endpoint_id), window),
    ]);
    const rows = [...endpoints]
      .sort((a, b) => a.endpoint_id - b.endpoint_id)
      .map((endpoint): EndpointRow => {
        const figures = toFigures(perEndpoint.get(endpoint.endpoint_id) ?? emptyAccumulator());
        return {
          endpoint_id: endpoint.endpoint_id,
          name: endpoint.name,
          enabled: endpoint.enabled,
          checks: figures.checks,
          failures: figures.failures,
          uptime_percent: figures.uptime_percent,
          avg_latency_ms: figures.avg_latency_ms,
          up: endpoint.latest?.success ?? null,
          last_check_at: endpoint.latest?.checked_at ?? null,
        };
      });
    const { window: w, totals, incidents, series } = common;
    return { team_id: teamId, project_id: projectId, window: w, health: health(endpoints), totals, incidents, series, endpoints: rows };
  }

  /** null when the endpoint is not among the team's endpoints. */
  async endpointAnalytics(teamId: number, endpointId: number, window: AnalyticsWindow): Promise<EndpointAnalytics | null> {
    const scope: AnalyticsScope = { kind: 'endpoint', id: endpointId };
    const [common, endpoints] = await Promise.all([this.common(teamId, scope, window), this.facts.endpoints(teamId, scope)]);
    const endpoint = endpoints.find((e) => e.endpoint_id === endpointId);
    if (!endpoint) return null;
    const { window: w, totals, incidents, series } = common;
    return { team_id: teamId, project_id: endpoint.project_id, endpoint_id: endpointId, window: w, totals, incidents, series, current: current(endpoint) };
  }

  /** Window, totals, incidents and series: the part all three objects share. */
  private async common(teamId: number, scope: AnalyticsScope, window: AnalyticsWindow, members?: ProjectMember[]): Promise<Common> {
    const counted = await this.counted(scope, members);
    const [bucketSums, p95Value, incidents] = await Promise.all([
      this.sumBuckets(counted, window),
      this.p95Of(counted, window.from, window.to),
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
    };
  }

  /**
   * Partial sums of every bucket, over every scope of `counted` together: per bucket, the store
   * sums the rollup rows of its pieces (id ranges, per scope id); the raw edges of all buckets
   * are fetched together and assigned in memory.
   */
  private async sumBuckets(counted: Counted, window: AnalyticsWindow): Promise<Accumulator[]> {
    const plans: RangePiece[][] = [];
    for (let i = 0; i < window.buckets; i++) {
      const { start, end } = bucketRange(window, i);
      plans.push(planRange(start, end, this.rawHorizon()));
    }
    const [rollupSums, raw] = await Promise.all([
      Promise.all(plans.map((plan) => this.sumRollups(counted.kind, counted.ids, plan))),
      this.fetchRawEdges(counted.kind, counted.ids, plans.flat()),
    ]);
    const horizon = this.rawHorizon();
    return plans.map((plan, i) => {
      const acc = rollupSums[i];
      for (const piece of plan) {
        if (piece.kind !== 'raw' || piece.from < horizon) continue;
        for (const check of raw.get(floorTo(piece.from, GRANULARITY_MS.minute)) ?? []) {
          if (piece.from <= check.checked_at_ms && check.checked_at_ms < piece.to) addCheck(acc, check);
        }
      }
      return acc;
    });
  }

  /** Partial sums of one range for several scopes of one kind, each summed by the store. */
  private async sumPerScope(kind: RollupScopeKind, ids: number[], range: TimeRange): Promise<Map<number, Accumulator>> {
    const sums = new Map<number, Accumulator>(ids.map((id) => [id, emptyAccumulator()]));
    if (ids.length === 0) return sums;
    const pieces = planRange(range.from, range.to, this.rawHorizon());
    const queries = ids.map(async (id) => {
      addAccumulator(sums.get(id)!, await this.sumRollups(kind, [id], pieces));
    });
    const field = SCOPE_FIELD[kind];
    const horizon = this.rawHorizon();
    const edges = this.fetchRawEdges(kind, ids, pieces).then((byMinute) => {
      for (const piece of pieces) {
        if (piece.kind !== 'raw' || piece.from < horizon) continue;
        for (const check of byMinute.get(floorTo(piece.from, GRANULARITY_MS.minute)) ?? []) {
          if (piece.from <= check.checked_at_ms && check.checked_at_ms < piece.to) addCheck(sums.get(check[field])!, check);
        }
      }
    });
    await Promise.all([...queries, edges]);
    return sums;
  }

  /**
   * The sums of the scopes' rollup rows over the pieces' periods, by the store. Consecutive
   * periods of one granularity are one id range (a bucket has at most five: minutes, hours,
   * days, hours, minutes), so the store reads only the rows that exist.
   */
  private async sumRollups(kind: RollupScopeKind, ids: number[], pieces: RangePiece[]): Promise<Accumulator> {
    const acc = emptyAccumulator();
    const runs = rollupRuns(pieces);
    if (runs.length === 0 || ids.length === 0) return acc;
    const { rollups } = await this.names();
    const groups = await Promise.all(
      ids.flatMap((id) =>
        runs.map((run) =>
          this.store.aggregate(rollups, {
            filter: { id: rollupRange(kind, id, run.granularity, run.from / 1000, run.to / 1000) },
            sum: ROLLUP_SUMS,
            min: ['latency_min'],
            max: ['latency_max'],
          }),
        ),
      ),
    );
    for (const group of groups.flat()) {
      if (group.count === 0) continue;
      addAccumulator(acc, {
        checks: group.sum.checks,
        failures: group.sum.failures,
        latency_sum: group.sum.latency_sum,
        latency_min: group.min.latency_min,
        latency_max: group.max.latency_max,
      });
    }
    return acc;
  }

  /**
   * Raw checks of the minutes that hold raw edges, grouped by minute start (epoch ms). Read by
   * time range through the (scope, success, checked_at_ms, check_id) indexes that p95 uses too
   * (`success IN (0, 1)`: two index ranges per scope), so the raw rows need no minute index of
   * their own; adjacent minutes are read as one range.
   */
  private async fetchRawEdges(kind: RollupScopeKind, ids: number[], pieces: RangePiece[]): Promise<Map<number, RawCheckRow[]>> {
    const minutes = [...new Set(pieces.flatMap((p) => (p.kind === 'raw' ? [floorTo(p.from, GRANULARITY_MS.minute)] : [])))];
    const byMinute = new Map<number, RawCheckRow[]>();
    if (minutes.length === 0 || ids.length === 0) return byMinute;
    const { checks } = await this.names();
    const field = SCOPE_FIELD[kind];
    const requests = pairs(chunk(ids, IN_CHUNK), minuteSpans(minutes)).map(([idChunk, span]) =>
      this.findAll(checks, {
        [field]: idChunk.length === 1 ? idChunk[0] : { in: idChunk },
        success: { in: [false, true] },
        checked_at_ms: { gte: span.from, lt: span.to },
      }),
    );
    for (const row of (await Promise.all(requests)).flat() as unknown as RawCheckRow[]) {
      const key = floorTo(row.checked_at_ms, GRANULARITY_MS.minute);
      const list = byMinute.get(key) ?? [];
      list.push(row);
      byMinute.set(key, list);
    }
    return byMinute;
  }

  /** Every matching row, paged by id so that no adapter page limit can cut the result. */
  private async findAll(collection: string, filter: Filter): Promise<Doc[]> {
    const rows: Doc[] = [];
    let after: Scalar[] | undefined;
    for (;;) {
      const page = await this.store.find(collection, { filter, sort: [['id', 'asc']], after, limit: PAGE });
      rows.push(...page);
      if (page.length < PAGE) return rows;
      after = [page[page.length - 1].id];
    }
  }

  private async names(): Promise<AnalyticsCollections> {
    return typeof this.collections === 'function' ? this.collections() : this.collections;
  }
}

/** The pieces' rollup periods as runs of consecutive periods of one granularity (epoch ms). */
function rollupRuns(pieces: RangePiece[]): Array<{ granularity: Granularity; from: number; to: number }> {
  const runs: Array<{ granularity: Granularity; from: number; to: number }> = [];
  for (const piece of pieces) {
    if (piece.kind !== 'rollup') continue;
    const last = runs[runs.length - 1];
    if (last && last.granularity === piece.granularity && last.to === piece.start) last.to += GRANULARITY_MS[piece.granularity];
    else runs.push({ granularity: piece.granularity, from: piece.start, to: piece.start + GRANULARITY_MS[piece.granularity] });
  }
  return runs;
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

function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

function pairs<A, B>(left: A[], right: B[]): Array<[A, B]> {
  return left.flatMap((a) => right.map((b): [A, B] => [a, b]));
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

/** From each enabled endpoint's latest applicable check; none yet: unchecked. */
function health(endpoints: EndpointFact[]): Health {
  const enabled = endpoints.filter((e) => e.enabled);
  return {
    enabled_endpoints: enabled.length,
    healthy_endpoints: enabled.filter((e) => e.latest?.success === true).length,
    failing_endpoints: enabled.filter((e) => e.latest?.success === false).length,
    unchecked_endpoints: enabled.filter((e) => e.latest === null).length,
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
