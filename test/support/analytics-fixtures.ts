import type { CheckRecordedData } from '../../src/checks/domain/check.js';
import { configuration, startTarget, type Target } from '../e2e/support.js';
import { forwardTo, startedBeforeAll } from './started-before-all.js';
import { startTestApp, type TestApp } from './test-app.js';

/**
 * Analytics tests feed the service only as an operator and a client would: teams and tokens,
 * projects, endpoints (verified against a local target, then enabled), maintenance windows and
 * check imports through the application API; incidents through the public API.
 */

/** The projections behind the analytics routes (imports settle only monitoring's own views). */
const ANALYTICS_VIEWS = ['analytics_rollups', 'analytics_endpoints'];
const CATCH_UP_MS = 60_000;
/** The import route's limit per request. */
export const IMPORT_BATCH = 10_000;
export const INCIDENTS = '/api/public/v2/incidents';

export const iso = (ms: number) => new Date(ms).toISOString();

/** One check as the import route takes it; `at` in epoch ms. */
export interface CheckSpec {
  at: number;
  success?: boolean;
  latency?: number;
  status?: number;
  source?: 'scheduled' | 'manual';
  /** The probe region it was taken from (the import's default: local). */
  region?: string;
}

export interface AnalyticsTeam {
  teamId: number;
  /** analytics:read, monitoring:read, incidents:read and incidents:write, editor role. */
  token: string;
}

export interface AnalyticsWorld {
  t: TestApp;
  team(name?: string): Promise<AnalyticsTeam>;
  project(teamId: number, name?: string): Promise<number>;
  /** An endpoint of the project, verified and enabled unless `enabled` is false. */
  endpoint(teamId: number, projectId: number, name?: string, enabled?: boolean): Promise<number>;
  /** Imports the checks in requests of at most IMPORT_BATCH, then waits for the analytics views. */
  importChecks(teamId: number, endpointId: number, checks: CheckSpec[]): Promise<void>;
  /** Moves the endpoint to another project (application API), then waits for the analytics views. */
  moveEndpoint(teamId: number, endpointId: number, projectId: number): Promise<void>;
  /** A maintenance window over [startsAt, endsAt); scope {} is team-wide. */
  maintenance(teamId: number, scope: { project_id?: number; endpoint_id?: number }, startsAt: number, endsAt: number): Promise<number>;
  /** Waits until the analytics views have applied every event recorded so far. */
  settle(): Promise<void>;
  /** The endpoint's checks as the public checks route lists them, in the shape the reference reads. */
  recordedChecks(team: AnalyticsTeam, projectId: number, endpointId: number): Promise<CheckRecordedData[]>;
  close(): Promise<void>;
}

/**
 * A service under test for analytics. ROLE=api: no scheduler and no prober, so the only checks
 * are the imported ones (an enabled endpoint would otherwise be probed now and its latest check
 * would move `health` and `current`). The test app still runs the projections itself.
 */
/** startAnalyticsWorld before the tests of the enclosing describe, closed after them; `t` is `w.t`. */
export function analyticsWorld(): { w: AnalyticsWorld; t: TestApp } {
  const w = startedBeforeAll(() => startAnalyticsWorld(), (world) => world.close());
  return { w, t: forwardTo(() => w.t) };
}

export async function startAnalyticsWorld(env: Record<string, string> = {}): Promise<AnalyticsWorld> {
  const target: Target = await startTarget();
  // The fixtures' checks lie in 2025 and 2026: a ten-year retention keeps every range exact to
  // the millisecond (past the horizon analytics counts whole hours; see test/http/retention.test.ts).
  const t = await startTestApp({ ROLE: 'api', CHECK_RETENTION_DAYS: '3650', ...env });

  const expectStatus = (what: string, response: { statusCode: number; body: string }, status: number) => {
    if (response.statusCode !== status) throw new Error(`${what}: ${response.statusCode} ${response.body}`);
  };

  const waitForAnalytics = async () => {
    const head = await t.platform.events.headPosition();
    if (head === null) return;
    const deadline = Date.now() + CATCH_UP_MS;
    while (!(await t.platform.freshness.waitFor(head, ANALYTICS_VIEWS))) {
      if (Date.now() > deadline) throw new Error('the analytics views did not catch up');
    }
  };

  return {
    t,
    async team(name = 'Team') {
      const team = await t.createTeam(name);
      const { token } = await t.issueToken(team.id, ['analytics:read', 'monitoring:read', 'incidents:read', 'incidents:write'], 'editor');
      return { teamId: team.id, token };
    },

    async project(teamId, name = 'Project') {
      const response = await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name });
      expectStatus('create project', response, 201);
      await waitForAnalytics();
      return response.json().data.id;
    },

    async endpoint(teamId, projectId, name = 'Endpoint', enabled = true) {
      const created = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: projectId, name, ...configuration(`${target.url}/health`, { interval_seconds: 60 }) });
      expectStatus('create endpoint', created, 201);
      const { id, verification_token } = created.json().data;
      if (!enabled) return id;
      target.tokens.set(id, verification_token);
      expectStatus('verify destination', await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${id}/verify-destination`), 200);
      expectStatus('enable endpoint', await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${id}`, { enabled: true }), 200);
      await waitForAnalytics();
      return id;
    },

    async importChecks(teamId, endpointId, checks) {
      for (let i = 0; i < checks.length; i += IMPORT_BATCH) {
        const body = { checks: checks.slice(i, i + IMPORT_BATCH).map(importedCheck) };
        const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`, body);
        expectStatus('import checks', response, 201);
      }
      await waitForAnalytics();
    },

    async moveEndpoint(teamId, endpointId, projectId) {
      expectStatus('move endpoint', await t.admin('PATCH', `/api/v2/teams/${teamId}/endpoints/${endpointId}`, { project_id: projectId }), 200);
      await waitForAnalytics();
    },

    async maintenance(teamId, scope, startsAt, endsAt) {
      const response = await t.admin('POST', `/api/v2/teams/${teamId}/maintenance-windows`, { ...scope, starts_at: iso(startsAt), ends_at: iso(endsAt) });
      expectStatus('schedule maintenance', response, 201);
      return response.json().data.id;
    },

    settle: waitForAnalytics,

    async recordedChecks(team, projectId, endpointId) {
      const checks: CheckRecordedData[] = [];
      let cursor: string | null = null;
      do {
        const query: string = `limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const response = await t.request('GET', `/api/public/v2/endpoints/${endpointId}/checks?${query}`, { token: team.token });
        expectStatus('list checks', response, 200);
        const page = response.json();
        for (const check of page.data) checks.push(asRecorded(check, team.teamId, projectId));
        cursor = page.pagination.next_cursor;
      } while (cursor);
      return checks;
    },

    async close() {
      await t.close();
      await target.close();
    },
  };
}

function importedCheck(spec: CheckSpec) {
  const success = spec.success ?? true;
  return {
    checked_at: iso(spec.at),
    success,
    status_code: spec.status ?? (success ? 200 : 500),
    latency_ms: spec.latency ?? 100,
    source: spec.source ?? 'scheduled',
    failure_reason: success ? null : 'status: 500',
    ...(spec.region === undefined ? {} : { region: spec.region }),
  };
}

/** A public Check (plus the ids the route implies) in the shape of the CheckRecorded event. */
function asRecorded(check: any, teamId: number, projectId: number): CheckRecordedData {
  return {
    check_id: check.id,
    team_id: teamId,
    project_id: projectId,
    endpoint_id: check.endpoint_id,
    configuration_version: check.configuration_version,
    source: check.source,
    job_id: null,
    alert_suppressed: check.alert_suppressed,
    latency_anomaly: check.latency_anomaly,
    latency_threshold_ms: check.latency_threshold_ms,
    imported: true,
    success: check.success,
    status_code: check.status_code,
    latency_ms: check.latency_ms,
    time_to_first_byte_ms: check.time_to_first_byte_ms,
    duration_ms: check.duration_ms,
    body_complete: check.body_complete,
    failure_reason: check.failure_reason,
    response_excerpt: null,
    checked_at: check.checked_at,
    region: check.region,
  };
}

/** Incidents through the public API with an editor token. */
export async function createIncident(t: TestApp, token: string, body: Record<string, unknown>): Promise<any> {
  const response = await t.request('POST', INCIDENTS, { token, body: { title: 'Down', ...body } });
  if (response.statusCode !== 201) throw new Error(`create incident: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

export async function setResolved(t: TestApp, token: string, incidentId: number, resolved: boolean): Promise<any> {
  const response = await t.request('PATCH', `${INCIDENTS}/${incidentId}/status`, { token, body: { resolved } });
  if (response.statusCode !== 200) throw new Error(`incident status: ${response.statusCode} ${response.body}`);
  return response.json().data;
}
