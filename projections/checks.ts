import { defineProjection } from '../src/platform/projections/projection.js';
import { CHECK_RECORDED, type CheckRecordedData } from '../src/monitoring/domain/check.js';

/**
 * Every recorded check, without its response excerpt (only whether one was stored).
 *
 * checks: id (string), check_id, team_id, project_id, endpoint_id, configuration_version,
 *         success, status_code, latency_ms, time_to_first_byte_ms, duration_ms, source,
 *         body_complete, latency_anomaly, latency_threshold_ms, alert_suppressed,
 *         failure_reason, response_excerpt_omitted, imported, job_id, checked_at
 */
export const checksProjection = defineProjection({
  name: 'checks',
  version: 1,
  collections: [
    {
      name: 'checks',
      indexes: [
        { fields: ['endpoint_id', 'checked_at', 'check_id'] },
        { fields: ['endpoint_id', 'source', 'checked_at', 'check_id'] },
        { fields: ['endpoint_id', 'success', 'checked_at', 'check_id'] },
      ],
    },
  ],
  handlers: {
    [CHECK_RECORDED]: (event, views) => {
      const { response_excerpt, ...d } = event.data as CheckRecordedData;
      views.put('checks', { id: String(d.check_id), ...d, response_excerpt_omitted: response_excerpt !== null && response_excerpt !== undefined });
    },
  },
});
