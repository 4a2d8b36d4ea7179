/**
 * The one fold of an endpoint's stream `endpoint-<id>` (monitoring contract,
 * src/monitoring/domain/events.ts). Monitoring's commands decide on it (endpoint.ts), probing
 * schedules and probes from it, alerting reads its settings from it. Plain data, JSON-serialisable.
 */
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import type { EndpointConfiguration } from './endpoint-configuration.js';
import {
  DESTINATION_VERIFIED,
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_MAINTENANCE_UNTIL_SET,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  type EndpointEvent,
} from './events.js';
import { verificationUrl as verificationUrlOf } from './url.js';

export interface EndpointSnapshot {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  name: string;
  /** Missing from the rows the probing view stored before it was folded here (that view never reads it). */
  description: string;
  configuration: EndpointConfiguration;
  verification_token: string;
  configuration_version: number;
  enabled: boolean;
  destination_verified: boolean;
  destination_verified_at: string | null;
  maintenance_until: string | null;
}

/** null: never registered, or deleted (nothing to probe or change from then on). */
export type EndpointSnapshotState = EndpointSnapshot | null;

const CONFIG_META_FIELDS = new Set(['name', 'description', 'project_id']);

/** Folds one event of the endpoint stream (which holds endpoint events only, see events.ts). */
export function evolveEndpoint(state: EndpointSnapshotState, event: { type: string; data: unknown }): EndpointSnapshotState {
  return evolve(state, event as EndpointEvent);
}

function evolve(state: EndpointSnapshotState, event: EndpointEvent): EndpointSnapshotState {
  if (event.type === ENDPOINT_REGISTERED) {
    const { data } = event;
    return {
      endpoint_id: data.endpoint_id,
      team_id: data.team_id,
      project_id: data.project_id,
      name: data.name,
      description: data.description,
      configuration: { ...data.configuration },
      verification_token: data.verification_token,
      configuration_version: data.configuration_version ?? 1,
      enabled: false,
      destination_verified: false,
      destination_verified_at: null,
      maintenance_until: null,
    };
  }
  if (state === null) return state;
  switch (event.type) {
    case ENDPOINT_DELETED:
      // Nothing to probe from here on: jobs already queued are skipped.
      return null;
    case ENDPOINT_RECONFIGURED: {
      const { data } = event;
      const configuration = { ...state.configuration } as Record<string, unknown>;
      for (const [key, value] of Object.entries(data.changes)) {
        if (!CONFIG_META_FIELDS.has(key)) configuration[key] = value;
      }
      return {
        ...state,
        name: data.changes.name ?? state.name,
        description: data.changes.description ?? state.description,
        project_id: data.changes.project_id ?? data.project_id ?? state.project_id,
        configuration: configuration as unknown as EndpointConfiguration,
        configuration_version: data.configuration_version,
      };
    }
    case ENDPOINT_ENABLED:
      return { ...state, enabled: true };
    case ENDPOINT_DISABLED:
      return { ...state, enabled: false };
    case DESTINATION_VERIFIED:
      return { ...state, destination_verified: true, destination_verified_at: event.data.verified_at };
    case ENDPOINT_MAINTENANCE_UNTIL_SET:
      return { ...state, maintenance_until: event.data.maintenance_until };
    default:
      return state;
  }
}

/** The endpoint's verification URL (`url.ts`), or null when its URL has no host to verify. */
export function verificationUrl(endpoint: Pick<EndpointSnapshot, 'endpoint_id' | 'configuration'>): string | null {
  try {
    return verificationUrlOf(endpoint.configuration.url, endpoint.endpoint_id);
  } catch {
    return null;
  }
}

/** The endpoint stream's fold in the shape runStreamCommand, loadStream and StreamCache take. */
export const endpointSnapshotAggregate = {
  initial: (): EndpointSnapshotState => null,
  evolve: (state: EndpointSnapshotState, event: RecordedEvent): EndpointSnapshotState => evolveEndpoint(state, event),
};
