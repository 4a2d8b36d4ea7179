import fc from 'fast-check';
import { healthByProjectOf } from '../../../src/analytics/application/analytics-facts.js';
import { analyticsEndpointsProjection } from '../../../src/analytics/views/endpoints/projection.js';
import { ViewAnalyticsFacts } from '../../../src/analytics/views/endpoints/queries.js';
import { ANALYTICS_ENDPOINTS_PROJECTION, ANALYTICS_PROJECT_HEALTH_COLLECTION } from '../../../src/analytics/views/endpoints/view.js';
import {
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
} from '../../../src/monitoring/domain/events.js';
import type { RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { physicalCollection } from '../../../src/platform/projections/registry.js';
import { BatchViewTransaction } from '../../../src/platform/projections/view-transaction.js';
import { ViewReader } from '../../../src/platform/projections/views.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { check, recorded } from './support/checks.js';

/**
 * The per-project health counts the analytics endpoints view keeps (what team analytics read)
 * equal the counts made from every endpoint document (what the project object counts), after
 * any sequence of registrations, enables, disables, moves, deletions and checks in any order,
 * applied in batches of any size; and equal them again when the view has no counts collection
 * (a generation built before it), where they are counted from the documents.
 */
const TEAMS = [1, 2];
const PROJECTS: Record<number, number[]> = { 1: [11, 12, 13], 2: [21] };
const ENDPOINTS = [1, 2, 3, 4, 5];
const T0 = Date.parse('2026-03-01T00:00:00Z');

type Step =
  | { kind: 'register'; endpoint: number; team: number; project: number }
  | { kind: 'enable' | 'disable' | 'delete'; endpoint: number }
  | { kind: 'move'; endpoint: number; project: number }
  | { kind: 'check'; endpoint: number; second: number; success: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('register' as const), endpoint: fc.constantFrom(...ENDPOINTS), team: fc.constantFrom(...TEAMS), project: fc.nat() }).map((s) => ({
    ...s,
    project: PROJECTS[s.team][s.project % PROJECTS[s.team].length],
  })),
  fc.record({ kind: fc.constantFrom('enable' as const, 'disable' as const, 'delete' as const), endpoint: fc.constantFrom(...ENDPOINTS) }),
  fc.record({ kind: fc.constant('move' as const), endpoint: fc.constantFrom(...ENDPOINTS), project: fc.nat() }),
  fc.record({ kind: fc.constant('check' as const), endpoint: fc.constantFrom(...ENDPOINTS), second: fc.nat({ max: 50 }), success: fc.boolean() }),
);

function event(type: string, data: object, position: number): RecordedEvent {
  const at = new Date(T0).toISOString();
  return { id: `e${position}`, streamId: 'x', type, schemaVersion: 1, data, metadata: { actor: null, request_id: null, correlation_id: null, causation_id: null, occurred_at: at }, revision: position, position, recordedAt: at };
}

/** The events of the steps; an endpoint keeps the team it was first registered in (a move stays inside it). */
function eventsOf(steps: Step[]): RecordedEvent[] {
  const teamOf = new Map<number, number>();
  const events: RecordedEvent[] = [];
  for (const s of steps) {
    const position = events.length;
    if (s.kind === 'register') {
      const team = teamOf.get(s.endpoint) ?? s.team;
      teamOf.set(s.endpoint, team);
      const project = PROJECTS[team].includes(s.project) ? s.project : PROJECTS[team][0];
      events.push(event(ENDPOINT_REGISTERED, { endpoint_id: s.endpoint, team_id: team, project_id: project, name: `e${s.endpoint}` }, position));
      continue;
    }
    const team = teamOf.get(s.endpoint) ?? 1;
    if (s.kind === 'enable') events.push(event(ENDPOINT_ENABLED, { endpoint_id: s.endpoint, team_id: team }, position));
    if (s.kind === 'disable') events.push(event(ENDPOINT_DISABLED, { endpoint_id: s.endpoint, team_id: team }, position));
    if (s.kind === 'delete') events.push(event(ENDPOINT_DELETED, { endpoint_id: s.endpoint, team_id: team }, position));
    if (s.kind === 'move') {
      const project = PROJECTS[team][s.project % PROJECTS[team].length];
      events.push(event(ENDPOINT_RECONFIGURED, { endpoint_id: s.endpoint, team_id: team, project_id: project, changes: { project_id: project } }, position));
    }
    if (s.kind === 'check') {
      const data = check({ checked_at: new Date(T0 + s.second * 1000).toISOString(), endpoint_id: s.endpoint, team_id: team, success: s.success });
      events.push(recorded(data, position));
    }
  }
  return events;
}

function nonEmpty<V extends { enabled_endpoints: number }>(counts: Map<number, V>): Map<number, V> {
  return new Map([...counts].filter(([, c]) => c.enabled_endpoints > 0));
}

describe('analytics endpoints view: per-project health counts', () => {
  it('equal the counts of every endpoint document after any events, in batches of any size', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 60 }), fc.integer({ min: 1, max: 12 }), fc.boolean(), async (steps, batchSize, withCounts) => {
        const store = new SqliteReadStore(':memory:');
        try {
          const name = (collection: string) => physicalCollection(ANALYTICS_ENDPOINTS_PROJECTION, 1, collection);
          for (const spec of analyticsEndpointsProjection.collections) {
            if (withCounts || spec.name !== ANALYTICS_PROJECT_HEALTH_COLLECTION) await store.ensureCollection({ ...spec, name: name(spec.name) });
          }
          const events = eventsOf(steps);
          for (let i = 0; i < events.length; i += batchSize) {
            const views = new BatchViewTransaction(store, name);
            for (const e of events.slice(i, i + batchSize)) await analyticsEndpointsProjection.handlers[e.type]?.(e, views);
            const writes = views.writes().filter((w) => withCounts || w.collection !== name(ANALYTICS_PROJECT_HEALTH_COLLECTION));
            await store.commit(writes);
          }
          const facts = new ViewAnalyticsFacts(new ViewReader(store), store);
          for (const team of TEAMS) {
            const expected = healthByProjectOf(await facts.endpoints(team, { kind: 'team', id: team }));
            // A project without enabled endpoints may be missing (the view keeps no document for it).
            expect(nonEmpty(await facts.healthByProject(team))).toEqual(nonEmpty(expected));
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 150 },
    );
  });
});
