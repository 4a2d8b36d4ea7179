import { isApplicable, type CheckRecordedData } from '../../checks/domain/check.js';
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { P95_SAMPLE_LIMIT, addCheck, emptyAccumulator, p95, toFigures, type RangeFigures } from './aggregate.js';
import type { AnalyticsScopeKind } from '../views/rollups/view.js';
import { bucketRange, type AnalyticsWindow } from './window.js';

/**
 * Brute force, for tests only: every figure computed straight from the rules by scanning every
 * check. The real query (rollups + range plans) must agree with it exactly.
 */

export interface ReferenceScope {
  kind: AnalyticsScopeKind;
  id: number;
  /** Only the checks recorded in this probe region (a check without one is `local`). */
  region?: string;
}

export interface ReferenceTotals extends RangeFigures {
  p95_latency_ms: number | null;
}

export interface ReferenceSeriesItem {
  bucket_start: string;
  checks: number;
  failures: number;
  uptime_percent: number | null;
  avg_latency_ms: number | null;
}

export interface ReferenceAnalytics {
  totals: ReferenceTotals;
  series: ReferenceSeriesItem[];
  /** Figures per child (projects of a team, endpoints of a project), keyed by child id. */
  children: Map<number, RangeFigures>;
}

/**
 * Endpoint id -> the project it is in now. A check counts for its endpoint's current project;
 * without a map, for the project it was recorded under (the same while no endpoint has moved).
 */
export type CurrentProjects = ReadonlyMap<number, number>;

function inScope(check: CheckRecordedData, scope: ReferenceScope, projects?: CurrentProjects): boolean {
  if (scope.region !== undefined && (check.region ?? DEFAULT_REGION) !== scope.region) return false;
  if (scope.kind === 'team') return check.team_id === scope.id;
  if (scope.kind === 'endpoint') return check.endpoint_id === scope.id;
  return (projects ? projects.get(check.endpoint_id) : check.project_id) === scope.id;
}

function inRange(check: CheckRecordedData, from: number, to: number): boolean {
  const at = Date.parse(check.checked_at);
  return from <= at && at < to;
}

export function referenceFigures(checks: CheckRecordedData[], scope: ReferenceScope, from: number, to: number, projects?: CurrentProjects): RangeFigures {
  const acc = emptyAccumulator();
  for (const check of checks) {
    if (isApplicable(check) && inScope(check, scope, projects) && inRange(check, from, to)) addCheck(acc, check);
  }
  return toFigures(acc);
}

export function referenceP95(checks: CheckRecordedData[], scope: ReferenceScope, from: number, to: number, projects?: CurrentProjects): number | null {
  const newestFirst = checks
    .filter((c) => isApplicable(c) && c.success && inScope(c, scope, projects) && inRange(c, from, to))
    .sort((a, b) => Date.parse(b.checked_at) - Date.parse(a.checked_at) || b.check_id - a.check_id);
  return p95(newestFirst.slice(0, P95_SAMPLE_LIMIT).map((c) => c.latency_ms));
}

export function referenceAnalytics(
  checks: CheckRecordedData[],
  scope: ReferenceScope,
  window: AnalyticsWindow,
  childIds: number[] = [],
  projects?: CurrentProjects,
): ReferenceAnalytics {
  const totals = {
    ...referenceFigures(checks, scope, window.from, window.to, projects),
    p95_latency_ms: referenceP95(checks, scope, window.from, window.to, projects),
  };
  const series: ReferenceSeriesItem[] = [];
  for (let i = 0; i < window.buckets; i++) {
    const { start, end } = bucketRange(window, i);
    const figures = referenceFigures(checks, scope, start, end, projects);
    series.push({
      bucket_start: new Date(start).toISOString(),
      checks: figures.checks,
      failures: figures.failures,
      uptime_percent: figures.uptime_percent,
      avg_latency_ms: figures.avg_latency_ms,
    });
  }
  const childKind: AnalyticsScopeKind = scope.kind === 'team' ? 'project' : 'endpoint';
  const children = new Map<number, RangeFigures>();
  for (const id of childIds) {
    children.set(id, referenceFigures(checks, { kind: childKind, id }, window.from, window.to, projects));
  }
  return { totals, series, children };
}
