/** What deleting an endpoint or a project does to the monitoring and analytics views, event by event. */
import { analyticsEndpointsProjection } from '../../../src/analytics/views/endpoints/projection.js';
import { ANALYTICS_ENDPOINTS_COLLECTION, ANALYTICS_PROJECTS_COLLECTION } from '../../../src/analytics/views/endpoints/view.js';
import { monitoringProjection } from '../../../src/monitoring/views/monitoring/projection.js';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import { given } from '../../support/projection-spec.js';

const T = '2026-11-23T10:00:00.000Z';
const project = { type: 'ProjectCreated', data: { project_id: 2, team_id: 1, name: 'Shop', description: '', created_at: T } };
const endpoint = (id: number) => ({
  type: 'EndpointRegistered',
  data: { endpoint_id: id, team_id: 1, project_id: 2, name: `E${id}`, description: '', configuration: { ...DEFAULT_CONFIGURATION, url: 'https://example.com/' }, verification_token: 't', configuration_version: 1, created_at: T },
});
const endpointDeleted = (id: number) => ({ type: 'EndpointDeleted', data: { endpoint_id: id, team_id: 1, project_id: 2, deleted_at: T } });
const projectDeleted = { type: 'ProjectDeleted', data: { project_id: 2, team_id: 1, deleted_at: T } };
const check = (id: number) => ({
  type: 'CheckRecorded',
  data: { check_id: 100 + id, team_id: 1, project_id: 2, endpoint_id: id, configuration_version: 1, source: 'scheduled', job_id: null, success: true, status_code: 200, latency_ms: 50, time_to_first_byte_ms: 50, duration_ms: 50, body_complete: true, failure_reason: null, response_excerpt: null, checked_at: T, alert_suppressed: false, latency_anomaly: false, latency_threshold_ms: null },
});

describe('deleting endpoints and projects', () => {
  it('monitoring: the deleted endpoint, then the emptied project, leave their collections', async () => {
    const views = await given(monitoringProjection, [project, endpoint(5), endpoint(6), endpointDeleted(5)]);
    expect(views.documents('endpoints').map((doc) => doc.endpoint_id)).toEqual([6]);
    const emptied = await given(monitoringProjection, [project, endpoint(5), endpointDeleted(5), projectDeleted]);
    expect([emptied.documents('endpoints'), emptied.documents('projects')]).toEqual([[], []]);
  });

  it('analytics: a deleted endpoint stays as a tombstone in its project (its checks count there), and a late check of it changes nothing', async () => {
    const views = await given(analyticsEndpointsProjection, [project, endpoint(5), endpoint(6), endpointDeleted(5), check(5), check(6)]);
    expect(views.documents(ANALYTICS_ENDPOINTS_COLLECTION).map((doc) => [doc.endpoint_id, doc.project_id, doc.deleted ?? false, doc.latest_check_id])).toEqual([
      [5, 2, true, null],
      [6, 2, false, 106],
    ]);
    const emptied = await given(analyticsEndpointsProjection, [project, endpoint(5), endpointDeleted(5), projectDeleted]);
    expect(emptied.documents(ANALYTICS_PROJECTS_COLLECTION)).toEqual([]);
  });
});
