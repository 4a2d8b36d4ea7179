/** The monitoring view and the per-check rows, given events: what the project, endpoint, window and check routes read. */
import { analyticsRollupsProjection } from '../../../src/analytics/views/rollups/projection.js';
import { monitoringProjection } from '../../../src/monitoring/views/monitoring/projection.js';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import { CHECK_MANUAL, CHECK_NO_EXCERPT, OUTCOME_FAILURE, OUTCOME_OTHER_FAILURE, OUTCOME_OTHER_SUCCESS, OUTCOME_SUCCESS, RAW_CHECKS_COLLECTION, packStatusAndTimings, rawStatusCode, rawTimings, type RawCheckRow } from '../../../src/analytics/views/rollups/view.js';
import { ENDPOINTS, type EndpointDoc, MAINTENANCE_WINDOWS, PROJECTS } from '../../../src/monitoring/views/monitoring/view.js';
import { given } from '../../support/projection-spec.js';

const T0 = '2026-11-23T10:00:00.000Z';
const T1 = '2026-11-23T11:00:00.000Z';
const T2 = '2026-11-23T12:00:00.000Z';

const projectCreated = (project_id: number) => ({ type: 'ProjectCreated', data: { project_id, team_id: 1, name: `P${project_id}`, description: '', created_at: T0 } });
const registered = {
  type: 'EndpointRegistered',
  data: {
    endpoint_id: 5,
    team_id: 1,
    project_id: 2,
    name: 'API',
    description: 'public API',
    configuration: {
      ...DEFAULT_CONFIGURATION,
      url: 'https://user:pw@api.example.com/health?key=s3cret',
      headers: { Authorization: 'Bearer hidden' },
      request_payload: '{"hidden":true}',
      expected_body: 'hidden body',
      body_match_mode: 'contains',
    },
    verification_token: 'token-5',
    configuration_version: 1,
    created_at: T0,
  },
};

describe('monitoring projection', () => {
  it('keeps an endpoint with its public configuration only: no query, user-info, header value, payload or expected body', async () => {
    const views = await given(monitoringProjection, [projectCreated(2), registered]);
    const endpoint = views.document(ENDPOINTS, '5') as unknown as EndpointDoc;
    expect(endpoint).toMatchObject({
      endpoint_id: 5,
      team_id: 1,
      project_id: 2,
      url: 'https://api.example.com/health',
      url_query_configured: true,
      header_names: ['Authorization'],
      request_payload_configured: true,
      expected_body_configured: true,
      enabled: false,
      destination_verified: false,
      verification_url: 'https://api.example.com/.well-known/monitor-verification/5',
      configuration_version: 1,
      created_at: T0,
      updated_at: T0,
    });
    const stored = JSON.stringify(views.documents(ENDPOINTS));
    for (const hidden of ['s3cret', 'pw@', 'Bearer hidden', '{\\"hidden\\":true}', 'hidden body']) expect(stored).not.toContain(hidden);
  });

  it('follows reconfiguration, a move to another project, enabling, verification and legacy maintenance', async () => {
    const views = await given(monitoringProjection, [
      projectCreated(2),
      projectCreated(3),
      registered,
      { type: 'EndpointReconfigured', data: { endpoint_id: 5, team_id: 1, project_id: 2, changes: { name: 'Shop API', project_id: 3, url: 'https://shop.example.com/?q=1', interval_seconds: 30 }, configuration_version: 2, updated_at: T1 } },
      { type: 'DestinationVerified', data: { endpoint_id: 5, team_id: 1, verified_at: T1 } },
      { type: 'EndpointEnabled', data: { endpoint_id: 5, team_id: 1, at: T1 } },
      { type: 'EndpointMaintenanceUntilSet', data: { endpoint_id: 5, team_id: 1, maintenance_until: T2, at: T2 } },
    ]);
    expect(views.document(ENDPOINTS, '5')).toMatchObject({
      name: 'Shop API',
      description: 'public API',
      project_id: 3,
      url: 'https://shop.example.com/',
      verification_url: 'https://shop.example.com/.well-known/monitor-verification/5',
      interval_seconds: 30,
      configuration_version: 2,
      destination_verified: true,
      destination_verified_at: T1,
      enabled: true,
      maintenance_until: T2,
      updated_at: T2,
    });
    const disabled = await given(monitoringProjection, [registered, { type: 'EndpointEnabled', data: { endpoint_id: 5, team_id: 1, at: T1 } }, { type: 'EndpointDisabled', data: { endpoint_id: 5, team_id: 1, at: T2 } }]);
    expect(disabled.document(ENDPOINTS, '5')).toMatchObject({ enabled: false, updated_at: T2 });
  });

  it('updates a project and keeps windows, cancelled ones with their cancellation time', async () => {
    const window = (window_id: number) => ({
      type: 'MaintenanceWindowScheduled',
      data: { window_id, team_id: 1, project_id: 2, endpoint_id: null, starts_at: T1, ends_at: T2, reason: 'upgrade', created_at: T0 },
    });
    const views = await given(monitoringProjection, [
      projectCreated(2),
      { type: 'ProjectUpdated', data: { project_id: 2, team_id: 1, changes: { name: 'Shop' }, updated_at: T1 } },
      window(8),
      window(9),
      { type: 'MaintenanceWindowCancelled', data: { window_id: 9, team_id: 1, cancelled_at: T1 } },
    ]);
    expect(views.documents(PROJECTS)).toEqual([{ id: '2', project_id: 2, team_id: 1, name: 'Shop', description: '', created_at: T0, updated_at: T1 }]);
    expect(views.documents(MAINTENANCE_WINDOWS).map((doc) => [doc.window_id, doc.cancelled_at])).toEqual([
      [8, null],
      [9, T1],
    ]);
  });
});

const recorded = (check_id: number, fields: Record<string, unknown> = {}) => ({
  type: 'CheckRecorded',
  data: {
    check_id,
    team_id: 1,
    project_id: 2,
    endpoint_id: 5,
    configuration_version: 1,
    source: 'scheduled',
    job_id: null,
    success: true,
    status_code: 200,
    latency_ms: 50,
    time_to_first_byte_ms: 50,
    duration_ms: 50,
    body_complete: true,
    failure_reason: null,
    response_excerpt: null,
    checked_at: T0,
    alert_suppressed: false,
    latency_anomaly: false,
    latency_threshold_ms: null,
    imported: false,
    ...fields,
  },
});

describe('the per-check rows the checks list reads (analytics rollups, analytics_checks)', () => {
  it('keeps every check compact: the fields at their default are left out, the response excerpt never stored', async () => {
    const views = await given(analyticsRollupsProjection, [
      recorded(1),
      recorded(2, { success: false, status_code: 503, failure_reason: 'status: 503', response_excerpt: 'secret page', time_to_first_byte_ms: 20, latency_anomaly: true, latency_threshold_ms: 40 }),
      recorded(3, { source: 'manual', response_excerpt: 'secret page', region: 'eu-west' }),
      recorded(4, { success: false, alert_suppressed: true, body_complete: false }),
    ]);
    // A scheduled success without an excerpt: outcome 1 (counted success), the no-excerpt bit;
    // no team id in the team's primary project, its first check's here (no registration: the
    // sparse team index); nothing packed for its status 200 and its timings equal to its latency (v14).
    const plain: RawCheckRow = {
      id: '1', check_id: 1, team_id: null, project_id: 2, endpoint_id: 5, outcome: OUTCOME_SUCCESS, checked_at_ms: Date.parse(T0), latency_ms: 50,
      configuration_version: 1, flags: CHECK_NO_EXCERPT, status_and_timings: null, latency_threshold_ms: null,
    };
    expect(rawStatusCode(plain)).toBe(200);
    expect(rawTimings(plain)).toEqual({ time_to_first_byte_ms: 50, duration_ms: 50 });
    expect(views.document(RAW_CHECKS_COLLECTION, '1')).toEqual(plain);
    expect(views.document(RAW_CHECKS_COLLECTION, '2')).toEqual({
      ...plain,
      id: '2',
      check_id: 2,
      outcome: OUTCOME_FAILURE,
      flags: 0,
      status_and_timings: packStatusAndTimings(503, 50, 20, 50),
      failure_reason: 'status: 503',
      latency_anomaly: true,
      latency_threshold_ms: 40,
    });
    expect(rawStatusCode(views.document(RAW_CHECKS_COLLECTION, '2') as unknown as RawCheckRow)).toBe(503);
    expect(rawTimings(views.document(RAW_CHECKS_COLLECTION, '2') as unknown as RawCheckRow)).toEqual({ time_to_first_byte_ms: 20, duration_ms: 50 });
    // Manual and suppressed checks are listed, never counted: outcomes of their own.
    expect(views.document(RAW_CHECKS_COLLECTION, '3')).toEqual({ ...plain, id: '3', check_id: 3, outcome: OUTCOME_OTHER_SUCCESS, flags: CHECK_MANUAL, region: 'eu-west' });
    expect(views.document(RAW_CHECKS_COLLECTION, '4')).toEqual({ ...plain, id: '4', check_id: 4, outcome: OUTCOME_OTHER_FAILURE, alert_suppressed: true, body_complete: false });
    expect(JSON.stringify(views.documents(RAW_CHECKS_COLLECTION))).not.toContain('secret page');
  });

  it('drops the checks a retention summary stands for, counted or not, and keeps the newer ones', async () => {
    const summary = { type: 'ChecksSummarized', data: { endpoint_id: 5, team_id: 1, from_revision: 0, through_revision: 2, horizon: T1, check_ids: [1, 2, 3], hours: [], latest_applicable: null } };
    const views = await given(analyticsRollupsProjection, [recorded(1), recorded(2, { source: 'manual' }), recorded(3, { alert_suppressed: true }), recorded(4), recorded(5, { source: 'manual' }), summary]);
    expect(views.documents(RAW_CHECKS_COLLECTION).map((doc) => doc.check_id)).toEqual([4, 5]);
  });
});
