import { healthByProjectOf, type AnalyticsFacts, type EndpointFact } from '../../../src/analytics/application/analytics-facts.js';
import { makeWindow } from '../../../src/analytics/domain/window.js';
import { check, queryOver } from './support/checks.js';

const FROM = Date.parse('2026-03-01T00:00:00Z');
const TO = Date.parse('2026-03-01T02:00:00Z');
const WINDOW = makeWindow(FROM, TO, 2);

const latest = (success: boolean, consecutive_failures = 0) => ({
  checked_at: '2026-03-01T01:59:00.000Z',
  success,
  status_code: success ? 200 : 503,
  latency_ms: 42,
  consecutive_failures,
});

const ENDPOINTS: EndpointFact[] = [
  { endpoint_id: 12, project_id: 1, name: 'checkout', enabled: true, latest: latest(false, 3) },
  { endpoint_id: 11, project_id: 1, name: 'home', enabled: true, latest: latest(true) },
  { endpoint_id: 13, project_id: 1, name: 'new', enabled: true, latest: null },
  { endpoint_id: 14, project_id: 1, name: 'old', enabled: false, latest: latest(false, 9) },
  { endpoint_id: 21, project_id: 2, name: 'api', enabled: true, latest: latest(true) },
];

const facts: AnalyticsFacts = {
  projects: async () => [
    { project_id: 2, name: 'API' },
    { project_id: 1, name: 'Shop' },
    { project_id: 3, name: 'Empty' },
  ],
  endpoints: async (_team, scope) =>
    ENDPOINTS.filter((e) => scope.kind === 'team' || (scope.kind === 'project' ? e.project_id : e.endpoint_id) === scope.id),
  membersOf: async (projectIds) => ENDPOINTS.filter((e) => projectIds.includes(e.project_id)),
  incidentCounts: async (_team, scope) => (scope.kind === 'team' ? { total: 4, open: 1 } : { total: 1, open: 0 }),
  openIncidentsByProject: async () => new Map([[1, 1]]),
  healthByProject: async () => healthByProjectOf(ENDPOINTS),
};

const CHECKS = [
  check({ checked_at: '2026-03-01T00:30:00Z', endpoint_id: 11, latency_ms: 100 }),
  check({ checked_at: '2026-03-01T01:30:00Z', endpoint_id: 12, success: false, latency_ms: 300 }),
  check({ checked_at: '2026-03-01T01:40:00Z', endpoint_id: 21, project_id: 2, latency_ms: 50 }),
];

describe('team analytics object', () => {
  it('has health from enabled endpoints, incident counts, and one row per project in id order', async () => {
    const { query } = await queryOver(CHECKS, facts);
    const team = await query.teamAnalytics(1, WINDOW);
    expect(team.window).toEqual({ from: '2026-03-01T00:00:00.000Z', to: '2026-03-01T02:00:00.000Z', bucket_seconds: 3600 });
    expect(team.health).toEqual({ enabled_endpoints: 4, healthy_endpoints: 2, failing_endpoints: 1, unchecked_endpoints: 1 });
    expect(team.incidents).toEqual({ total: 4, open: 1 });
    expect(team.totals).toMatchObject({ checks: 3, failures: 1, uptime_percent: 66.667, avg_latency_ms: 150 });
    expect(team.series.map((s) => s.checks)).toEqual([1, 2]);
    expect(team.projects).toEqual([
      { project_id: 1, name: 'Shop', enabled_endpoints: 3, checks: 2, failures: 1, uptime_percent: 50, avg_latency_ms: 200, open_incidents: 1 },
      { project_id: 2, name: 'API', enabled_endpoints: 1, checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 50, open_incidents: 0 },
      { project_id: 3, name: 'Empty', enabled_endpoints: 0, checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null, open_incidents: 0 },
    ]);
  });
});

describe('project analytics object', () => {
  it('compares every endpoint of the project, disabled and unchecked ones included', async () => {
    const { query } = await queryOver(CHECKS, facts);
    const project = await query.projectAnalytics(1, 1, WINDOW);
    expect(project.incidents).toEqual({ total: 1, open: 0 });
    expect(project.totals.checks).toBe(2);
    expect(project.endpoints).toEqual([
      { endpoint_id: 11, name: 'home', enabled: true, checks: 1, failures: 0, uptime_percent: 100, avg_latency_ms: 100, up: true, last_check_at: '2026-03-01T01:59:00.000Z' },
      { endpoint_id: 12, name: 'checkout', enabled: true, checks: 1, failures: 1, uptime_percent: 0, avg_latency_ms: 300, up: false, last_check_at: '2026-03-01T01:59:00.000Z' },
      { endpoint_id: 13, name: 'new', enabled: true, checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null, up: null, last_check_at: null },
      { endpoint_id: 14, name: 'old', enabled: false, checks: 0, failures: 0, uptime_percent: null, avg_latency_ms: null, up: false, last_check_at: '2026-03-01T01:59:00.000Z' },
    ]);
  });
});

describe('endpoint analytics object', () => {
  it('adds the current state from the latest applicable check', async () => {
    const { query } = await queryOver(CHECKS, facts);
    const endpoint = await query.endpointAnalytics(1, 12, WINDOW);
    expect(endpoint).toMatchObject({ team_id: 1, project_id: 1, endpoint_id: 12 });
    expect(endpoint!.totals).toMatchObject({ checks: 1, failures: 1, p95_latency_ms: null });
    expect(endpoint!.current).toEqual({
      up: false,
      last_check_at: '2026-03-01T01:59:00.000Z',
      last_status_code: 503,
      last_latency_ms: 42,
      consecutive_failures: 3,
    });
  });

  it('reports an unchecked endpoint as unknown (up null, not down) with no last check', async () => {
    const { query } = await queryOver(CHECKS, facts);
    const endpoint = await query.endpointAnalytics(1, 13, WINDOW);
    expect(endpoint!.current).toEqual({ up: null, last_check_at: null, last_status_code: null, last_latency_ms: null, consecutive_failures: 0 });
  });

  it('is null for an endpoint outside the team', async () => {
    const { query } = await queryOver(CHECKS, facts);
    expect(await query.endpointAnalytics(1, 99, WINDOW)).toBeNull();
  });
});
