/**
 * The alerting view (projection `alerting`), defined here once: written by `projection.ts`, read
 * through `queries.ts` by the alert-status route, and by the public status pages.
 */
import type { AlertSettings, EndpointAlertsState } from '../../domain/endpoint-alerts.js';

export const ALERTING_VIEW = 'alerting';

/**
 * Alert status per endpoint: the endpoint-alerts aggregate folded from `checks-<id>` and
 * `alerts-<id>` (the state is plain arrays and records, so it is stored as is), plus the endpoint's latency settings
 * (from its endpoint stream) that the baseline needs.
 */
export const ALERT_STATUS = 'alert_status';

export interface AlertStatusDoc {
  id: string;
  endpoint_id: number;
  team_id: number;
  settings: AlertSettings;
  /** Without the recent job ids (projection.ts); documents written before keep theirs. */
  state: Omit<EndpointAlertsState, 'recentJobIds'> & { recentJobIds?: readonly string[] };
}
