/** The slos view, given events: what both APIs list and the burn-rate reactor finds by team. */
import { slosProjection } from '../../../src/slos/views/slos/projection.js';
import { SLOS_COLLECTION, type SloDoc } from '../../../src/slos/views/slos/view.js';
import { given } from '../../support/projection-spec.js';

const T0 = '2026-11-23T10:00:00.000Z';
const T1 = '2026-11-23T11:00:00.000Z';
const created = (slo_id: number) => ({
  type: 'SloCreated',
  streamId: `slo-${slo_id}`,
  data: { slo_id, team_id: 1, name: 'Checkout', endpoint_ids: [4, 5], project_id: null, objective_percent: 99.9, window_days: 30, latency_threshold_ms: null, created_at: T0 },
});

describe('slos projection', () => {
  it('keeps one document per SLO, with its selection, updates and active alerts', async () => {
    const views = await given(slosProjection, [
      created(3),
      { type: 'SloUpdated', streamId: 'slo-3', data: { slo_id: 3, team_id: 1, changes: { project_id: 2, endpoint_ids: null, window_days: 7 }, updated_at: T1 } },
      { type: 'SloBurnAlertTriggered', streamId: 'slo-3', data: { slo_id: 3, team_id: 1, severity: 'page', long_window: '1h', long_burn_rate: 20, short_window: '5m', short_burn_rate: 30, check_id: 9, endpoint_id: 4, triggered_at: T1 } },
      { type: 'SloBurnIncidentLinked', streamId: 'slo-3', data: { slo_id: 3, severity: 'page', incident_id: 12, since: T1 } },
      { type: 'SloBurnAlertTriggered', streamId: 'slo-3', data: { slo_id: 3, team_id: 1, severity: 'ticket', long_window: '6h', long_burn_rate: 7, short_window: '30m', short_burn_rate: 8, check_id: 9, endpoint_id: 4, triggered_at: T1 } },
      { type: 'SloBurnAlertRecovered', streamId: 'slo-3', data: { slo_id: 3, team_id: 1, severity: 'ticket', short_window: '30m', short_burn_rate: 1, check_id: 10, recovered_at: T1 } },
    ]);
    const doc: SloDoc = {
      id: '3',
      slo_id: 3,
      team_id: 1,
      name: 'Checkout',
      endpoint_ids: null,
      project_id: 2,
      objective_percent: 99.9,
      window_days: 7,
      latency_threshold_ms: null,
      alerts: { page: { since: T1, incident_id: 12 }, ticket: null },
      created_at: T0,
      updated_at: T1,
    };
    expect(views.documents(SLOS_COLLECTION)).toEqual([doc]);
  });

  it('removes a deleted SLO and leaves the others', async () => {
    const views = await given(slosProjection, [created(3), created(4), { type: 'SloDeleted', streamId: 'slo-3', data: { slo_id: 3, team_id: 1, deleted_at: T1 } }]);
    expect(views.documents(SLOS_COLLECTION).map((d) => d.id)).toEqual(['4']);
  });
});
