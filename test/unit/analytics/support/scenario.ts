import fc from 'fast-check';
import type { CheckRecordedData } from '../../../../src/checks/domain/check.js';
import { CHECKS_SUMMARIZED, checkSummariesStream, summarizeChecks } from '../../../../src/checks/domain/check-summary.js';
import type { RecordedEvent } from '../../../../src/platform/event-store/event-store.port.js';
import { healthByProjectOf, type AnalyticsFacts, type EndpointFact } from '../../../../src/analytics/application/analytics-facts.js';
import type { AnalyticsQuery } from '../../../../src/analytics/views/rollups/queries.js';
import { referenceAnalytics } from '../../../../src/analytics/domain/reference.js';
import { makeWindow } from '../../../../src/analytics/domain/window.js';
import { check } from './checks.js';

/** Random analytics scenarios for the property tests: topology, facts, windows and checks. */

export const T0 = Date.parse('2026-03-01T00:00:00Z');
const SPAN = 3 * 86_400_000;

// endpoint -> project -> team
export const TOPOLOGY = [
  { endpoint_id: 1, project_id: 1, team_id: 1 },
  { endpoint_id: 2, project_id: 1, team_id: 1 },
  { endpoint_id: 3, project_id: 2, team_id: 1 },
  { endpoint_id: 4, project_id: 3, team_id: 2 },
];

/** Facts over a topology (endpoint -> project -> team), as the endpoints view would give them now. */
export function factsOf(topology: ReadonlyArray<{ endpoint_id: number; project_id: number; team_id: number }>): AnalyticsFacts {
  const facts: AnalyticsFacts = {
    projects: async (teamId) =>
      [...new Set(topology.filter((t) => t.team_id === teamId).map((t) => t.project_id))].map((id) => ({
        project_id: id,
        name: `project ${id}`,
      })),
    endpoints: async (teamId, scope) =>
      topology.filter((t) => t.team_id === teamId && (scope.kind === 'team' || t[`${scope.kind}_id`] === scope.id)).map(
        (t): EndpointFact => ({ endpoint_id: t.endpoint_id, project_id: t.project_id, name: `e${t.endpoint_id}`, enabled: true, latest: null }),
      ),
    membersOf: async (projectIds) => topology.filter((t) => projectIds.includes(t.project_id)).map(({ endpoint_id, project_id }) => ({ endpoint_id, project_id })),
    incidentCounts: async () => ({ total: 0, open: 0 }),
    openIncidentsByProject: async () => new Map(),
    healthByProject: async (teamId) => healthByProjectOf(await facts.endpoints(teamId, { kind: 'team', id: teamId })),
  };
  return facts;
}

export const facts: AnalyticsFacts = factsOf(TOPOLOGY);

/** TOPOLOGY after endpoint 2 moved from project 1 to project 2: its checks were recorded under project 1. */
export const MOVED_TOPOLOGY = TOPOLOGY.map((t) => (t.endpoint_id === 2 ? { ...t, project_id: 2 } : t));
export const CURRENT_PROJECTS_AFTER_MOVE: ReadonlyMap<number, number> = new Map(MOVED_TOPOLOGY.map((t) => [t.endpoint_id, t.project_id]));

/** Instants near boundaries matter most: on a day/hour/minute edge, or a few ms either side. */
export const instant = fc.oneof(
  fc.integer({ min: 0, max: SPAN - 1 }),
  fc.tuple(fc.constantFrom(60_000, 3_600_000, 86_400_000), fc.nat(200), fc.integer({ min: -2, max: 2 })).map(
    ([unit, n, nudge]) => Math.min(SPAN - 1, Math.max(0, ((n * unit) % SPAN) + nudge)),
  ),
);

function checkArb(at: fc.Arbitrary<number>) {
  return fc.record({
    at,
    where: fc.constantFrom(...TOPOLOGY),
    source: fc.constantFrom<'scheduled' | 'manual'>('scheduled', 'scheduled', 'scheduled', 'manual'),
    alert_suppressed: fc.integer({ min: 0, max: 9 }).map((n) => n < 3),
    success: fc.boolean(),
    latency_ms: fc.integer({ min: 0, max: 5000 }),
    // Probe regions: most checks local (as before regions), some from two others.
    region: fc.constantFrom(...REGIONS_OF_CHECKS),
  });
}

/** The regions generated checks come from (`local` twice as often); `unused` is never among them. */
export const REGIONS_OF_CHECKS = ['local', 'local', 'a', 'b'] as const;

export type GeneratedCheck = {
  at: number;
  where: (typeof TOPOLOGY)[number];
  source: 'scheduled' | 'manual';
  alert_suppressed: boolean;
  success: boolean;
  latency_ms: number;
  region: (typeof REGIONS_OF_CHECKS)[number];
};

/** The window first, then checks, many of them exactly on (or 1 ms beside) a bucket boundary or `to`. */
export const scenario = fc
  .record({
    from: instant,
    length: fc.oneof(fc.integer({ min: 1, max: SPAN }), fc.constantFrom(60_000, 3_600_000, 86_400_000, 2 * 86_400_000)),
    buckets: fc.oneof(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 6 })),
    scope: fc.constantFrom(
      { kind: 'team' as const, id: 1 },
      { kind: 'project' as const, id: 1 },
      { kind: 'project' as const, id: 2 },
      { kind: 'endpoint' as const, id: 2 },
    ),
    batchSize: fc.integer({ min: 1, max: 25 }),
    redeliver: fc.nat(5),
  })
  .chain((w) => {
    const window = makeWindow(w.from, w.from + w.length, w.buckets);
    const boundary = fc
      .tuple(fc.integer({ min: 0, max: w.buckets }), fc.integer({ min: -1, max: 1 }))
      .map(([i, nudge]) => Math.min(window.to, window.from + i * window.bucket_seconds * 1000) + nudge);
    const at = fc.oneof(instant, boundary);
    return fc.record({ checks: fc.array(checkArb(at), { maxLength: 60 }) }).map((c) => ({ ...w, ...c }));
  });

export function toChecks(generated: GeneratedCheck[]): CheckRecordedData[] {
  return generated.map((g) =>
    check({
      checked_at: new Date(T0 + g.at).toISOString(),
      ...g.where,
      source: g.source,
      alert_suppressed: g.alert_suppressed,
      success: g.success,
      latency_ms: g.latency_ms,
      region: g.region,
    }),
  );
}

export type Scenario = typeof scenario extends fc.Arbitrary<infer S> ? S : never;

/** Runs the scenario's analytics object through the query and asserts it equals brute force. */
export async function expectObjectMatchesReference(
  query: AnalyticsQuery,
  checks: CheckRecordedData[],
  s: Scenario,
  currentProjects?: ReadonlyMap<number, number>,
): Promise<void> {
  const window = makeWindow(T0 + s.from, T0 + s.from + s.length, s.buckets);
  // Team 1's projects, or the endpoints the project holds now.
  const projectOf = currentProjects ?? new Map(TOPOLOGY.map((t) => [t.endpoint_id, t.project_id]));
  const childIds =
    s.scope.kind === 'endpoint' ? [] : s.scope.kind === 'team' ? [1, 2] : TOPOLOGY.map((t) => t.endpoint_id).filter((id) => projectOf.get(id) === s.scope.id);
  const expected = referenceAnalytics(checks, s.scope, window, childIds, currentProjects);
  const actual =
    s.scope.kind === 'team'
      ? await query.teamAnalytics(1, window)
      : s.scope.kind === 'project'
        ? await query.projectAnalytics(1, s.scope.id, window)
        : await query.endpointAnalytics(1, s.scope.id, window);

  expect(actual!.totals).toEqual(expected.totals);
  expect(actual!.series).toEqual(expected.series);
  const rows: Array<{ checks: number; failures: number; uptime_percent: number | null; avg_latency_ms: number | null }> =
    'projects' in actual! ? actual.projects : 'endpoints' in actual! ? actual.endpoints : [];
  expect(rows.map(({ checks, failures, uptime_percent, avg_latency_ms }) => ({ checks, failures, uptime_percent, avg_latency_ms }))).toEqual(
    childIds.map((id) => {
      const f = expected.children.get(id)!;
      return { checks: f.checks, failures: f.failures, uptime_percent: f.uptime_percent, avg_latency_ms: f.avg_latency_ms };
    }),
  );
}

/** Retention's summaries of each endpoint's checks older than the horizon (a prefix of its stream), as the store reads them. */
export function summaries(checks: CheckRecordedData[], horizon: number): RecordedEvent[] {
  const events: RecordedEvent[] = [];
  for (const { endpoint_id: endpointId, team_id: teamId } of TOPOLOGY) {
    const stream = checks.filter((c) => c.endpoint_id === endpointId).map((check, revision) => ({ revision, check }));
    const cut = stream.findIndex(({ check }) => Date.parse(check.checked_at) >= horizon);
    const prefix = cut === -1 ? stream : stream.slice(0, cut);
    if (prefix.length === 0) continue;
    const at = new Date(horizon).toISOString();
    events.push({
      id: `summary-${endpointId}`,
      streamId: checkSummariesStream(endpointId),
      type: CHECKS_SUMMARIZED,
      schemaVersion: 1,
      data: summarizeChecks(endpointId, teamId, prefix, at),
      metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at },
      revision: 0,
      position: 1_000_000 + endpointId,
      recordedAt: at,
    });
  }
  return events;
}
