import { alertingProjection } from '../../../src/alerting/views/alerting/projection.js';
import { ALERT_STATUS } from '../../../src/alerting/views/alerting/view.js';
import { alertStatusView } from '../../../src/alerting/domain/endpoint-alerts.js';
import { DEFAULT_CONFIGURATION } from '../../../src/monitoring/domain/endpoint.js';
import { given, type GivenEvent } from '../../support/projection-spec.js';
import { command, run } from '../alerting/support.js';

const T = '2026-11-23T10:00:00.000Z';

describe('alerting projection (alert status)', () => {
  it('folds the checks stream with the endpoint-alerts aggregate and keeps the latency settings it needs', async () => {
    // Three failing checks in a window of three trigger the availability signal.
    const steps = run([command({ success: false }), command({ success: false }), command({ success: false })], undefined);
    const checkEvents: GivenEvent[] = steps.flatMap((step) => step.events.map((event) => ({ type: event.type, data: event.data, streamId: 'checks-7' })));
    const views = await given(alertingProjection, [
      {
        type: 'EndpointRegistered',
        data: { endpoint_id: 7, team_id: 1, project_id: 3, name: 'API', description: '', configuration: { ...DEFAULT_CONFIGURATION, url: 'https://example.com', latency_sensitivity: 5 }, verification_token: 't', configuration_version: 1, created_at: T },
      },
      { type: 'EndpointReconfigured', data: { endpoint_id: 7, team_id: 1, project_id: 3, changes: { latency_min_increase_ms: 40 }, configuration_version: 2, updated_at: T } },
      ...checkEvents,
    ]);
    const doc = views.document(ALERT_STATUS, '7') as any;
    expect(doc).toMatchObject({ endpoint_id: 7, team_id: 1 });
    expect(doc.settings).toMatchObject({ latency_sensitivity: 5, latency_min_increase_ms: 40 });
    expect(doc.state.signals.availability).toMatchObject({ type: 'availability', state: 'triggered' });
    const { recentJobIds: _jobs, ...state } = steps[steps.length - 1].state;
    expect(doc.state).toEqual(state);
  });

  it('keeps no job ids in the view, and the alert status it answers is the aggregate\'s', async () => {
    // 120 probed checks, each of its own job, one in ten failing, some slow.
    const commands = Array.from({ length: 120 }, (_, i) => command({ success: i % 10 !== 9, latency_ms: i % 7 === 0 ? 900 : 80 + (i % 5) }));
    const steps = run(commands, undefined);
    const folded = steps[steps.length - 1].state;
    expect(folded.recentJobIds).toHaveLength(100);
    const views = await given(alertingProjection, [
      { type: 'EndpointRegistered', data: { endpoint_id: 7, team_id: 1, project_id: 3, name: 'API', description: '', configuration: { ...DEFAULT_CONFIGURATION, url: 'https://example.com' }, verification_token: 't', configuration_version: 1, created_at: T } },
      ...steps.flatMap((step) => step.events.map((event): GivenEvent => ({ type: event.type, data: event.data, streamId: event.type === 'CheckRecorded' ? 'checks-7' : 'alerts-7' }))),
    ]);
    const doc = views.document(ALERT_STATUS, '7') as any;
    expect(JSON.stringify(doc)).not.toContain('job-');
    const now = new Date(T);
    const ids = { team_id: 1, endpoint_id: 7 };
    expect(alertStatusView({ recentJobIds: [], ...doc.state }, ids, doc.settings, now)).toEqual(alertStatusView(folded, ids, doc.settings, now));
    expect(alertStatusView(folded, ids, doc.settings, now).latency_baseline).not.toBeNull();
  });
});
