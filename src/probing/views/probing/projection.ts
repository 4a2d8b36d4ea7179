import { defineProjection } from '../../../platform/projections/projection.js';
import { evolveEndpoint, type EndpointSnapshot } from '../../../monitoring/domain/endpoint-snapshot.js';
import {
  DESTINATION_VERIFIED,
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_MAINTENANCE_UNTIL_SET,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
} from '../../../monitoring/domain/events.js';
import type { ProjectionHandler } from '../../../platform/projections/projection.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { PROBING_VIEW, SCHEDULE, type ScheduleRow } from './view.js';

const apply: ProjectionHandler = async (event, views) => {
  const endpointId = (event.data as { endpoint_id: number }).endpoint_id;
  const stored = await views.get(SCHEDULE, String(endpointId));
  // The row keeps the folded snapshot minus hidden values; rebuild the fold from what we keep.
  const previous = stored ? (stored.snapshot as EndpointSnapshot) : null;
  const next = evolveEndpoint(previous, event);
  if (next === null) {
    // Deleted: the scheduler stops publishing its jobs at its next refresh.
    if (stored) views.delete(SCHEDULE, String(endpointId));
    return;
  }
  const snapshot: EndpointSnapshot = { ...next, verification_token: '', configuration: { ...next.configuration, url: '', headers: {}, request_payload: null, expected_body: null } };
  const row: ScheduleRow = {
    id: String(endpointId),
    endpoint_id: endpointId,
    team_id: next.team_id,
    schedulable: next.enabled && next.destination_verified,
    interval_seconds: next.configuration.interval_seconds,
    configuration_version: next.configuration_version,
    snapshot,
  };
  views.put(SCHEDULE, row as unknown as Doc);
};

/** One row per endpoint for the scheduler (names and row type: view.ts). */
export const probingProjection = defineProjection({
  name: PROBING_VIEW,
  version: 1,
  collections: [{ name: SCHEDULE, indexes: [{ fields: ['schedulable', 'endpoint_id'] }] }],
  handlers: {
    [ENDPOINT_REGISTERED]: apply,
    [ENDPOINT_RECONFIGURED]: apply,
    [ENDPOINT_ENABLED]: apply,
    [ENDPOINT_DISABLED]: apply,
    [DESTINATION_VERIFIED]: apply,
    [ENDPOINT_MAINTENANCE_UNTIL_SET]: apply,
    [ENDPOINT_DELETED]: apply,
  },
});
