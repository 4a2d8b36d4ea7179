import { presentEndpoint, presentEndpointJson } from '../../../src/monitoring/views/monitoring/queries.js';
import type { MaintenanceWindow } from '../../../src/monitoring/domain/maintenance.js';
import type { EndpointDoc } from '../../../src/monitoring/views/monitoring/view.js';

const NOW = new Date('2026-11-21T12:00:00.000Z');

/** An endpoint document as an earlier version wrote it: without the fields added since (their defaults are put back). */
function row(extra: Partial<EndpointDoc> = {}): EndpointDoc {
  return {
    id: '7',
    endpoint_id: 7,
    team_id: 3,
    project_id: 5,
    name: 'Checkout "health", \\ ünïcode',
    description: '',
    url: 'https://shop.example.com/api/health',
    url_query_configured: true,
    method: 'GET',
    header_names: ['x-probe'],
    request_payload_configured: false,
    expected_status: 200,
    body_match_mode: 'none',
    expected_body_configured: false,
    interval_seconds: 30,
    timeout_seconds: 5,
    enabled: false,
    destination_verified: false,
    verification_url: 'https://shop.example.com/.well-known/monitor-verification/7',
    verification_token: 'a'.repeat(64),
    latency_detection_mode: 'auto',
    latency_sensitivity: 3,
    latency_min_samples: 20,
    latency_trigger_count: 3,
    latency_trigger_window: 5,
    latency_recovery_count: 3,
    configuration_version: 2,
    created_at: '2026-11-01T00:00:00.000Z',
    updated_at: '2026-11-02T00:00:00.000Z',
    ...extra,
  };
}

function window(id: number, scope: Partial<MaintenanceWindow>, startsAt: string, endsAt: string): MaintenanceWindow {
  return { window_id: id, team_id: 3, project_id: null, endpoint_id: null, starts_at: startsAt, ends_at: endsAt, cancelled_at: null, ...scope };
}

describe('presentEndpointJson', () => {
  const cases: Array<[string, EndpointDoc, MaintenanceWindow[]]> = [
    ['no windows', row(), []],
    ['covered by team, project and endpoint windows', row(), [
      window(9, {}, '2026-11-21T11:00:00.000Z', '2026-11-21T13:00:00.000Z'),
      window(4, { project_id: 5 }, '2026-11-21T11:00:00.000Z', '2026-11-21T13:00:00.000Z'),
      window(6, { endpoint_id: 7 }, '2026-11-21T11:00:00.000Z', '2026-11-21T13:00:00.000Z'),
      window(8, { endpoint_id: 8 }, '2026-11-21T11:00:00.000Z', '2026-11-21T13:00:00.000Z'),
      window(10, {}, '2026-11-21T13:00:00.000Z', '2026-11-21T14:00:00.000Z'),
    ]],
    ['legacy maintenance and nullable values set', row({ maintenance_until: '2026-11-21T12:30:00.000Z', destination_verified_at: '2026-11-03T00:00:00.000Z', latency_fixed_threshold_ms: 800 }), []],
    ['fields missing from the row', row({ description: undefined, created_at: undefined, updated_at: undefined }), []],
  ];

  it.each(cases)('is exactly JSON.stringify of the presented endpoint: %s', (_name, doc, windows) => {
    expect(presentEndpointJson(doc, windows, NOW)).toBe(JSON.stringify(presentEndpoint(doc, windows, NOW)));
  });

  it('recomputes coverage on every call while reusing the row', () => {
    const doc = row();
    const windows = [window(9, {}, '2026-11-21T11:00:00.000Z', '2026-11-21T12:00:01.000Z')];
    expect(JSON.parse(presentEndpointJson(doc, windows, NOW))).toMatchObject({ under_maintenance: true, maintenance_window_ids: [9] });
    const later = new Date('2026-11-21T12:00:01.000Z');
    expect(JSON.parse(presentEndpointJson(doc, windows, later))).toMatchObject({ under_maintenance: false, maintenance_window_ids: [] });
  });
});
