/**
 * What probing needs of an endpoint, folded from its stream `endpoint-<id>` (monitoring
 * contract, src/monitoring/domain/events.ts). Plain data, JSON-serialisable.
 */
import type { EndpointConfiguration } from './endpoint-configuration.js';
import {
  DESTINATION_VERIFIED,
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_MAINTENANCE_UNTIL_SET,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  type DestinationVerifiedData,
  type EndpointMaintenanceUntilSetData,
  type EndpointReconfiguredData,
  type EndpointRegisteredData,
} from '../../monitoring/domain/events.js';

export interface EndpointSnapshot {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  name: string;
  configuration: EndpointConfiguration;
  verification_token: string;
  configuration_version: number;
  enabled: boolean;
  destination_verified: boolean;
  destination_verified_at: string | null;
  maintenance_until: string | null;
}

export type EndpointSnapshotState = EndpointSnapshot | null;

const CONFIG_META_FIELDS = new Set(['name', 'description', 'project_id']);

export function evolveEndpoint(state: EndpointSnapshotState, event: { type: string; data: unknown }): EndpointSnapshotState {
  if (event.type === ENDPOINT_REGISTERED) {
    const data = event.data as EndpointRegisteredData;
    return {
      endpoint_id: data.endpoint_id,
      team_id: data.team_id,
      project_id: data.project_id,
      name: data.name,
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
      const data = event.data as EndpointReconfiguredData;
      const configuration = { ...state.configuration } as Record<string, unknown>;
      for (const [key, value] of Object.entries(data.changes)) {
        if (!CONFIG_META_FIELDS.has(key)) configuration[key] = value;
      }
      return {
        ...state,
        name: data.changes.name ?? state.name,
        project_id: data.changes.project_id ?? data.project_id ?? state.project_id,
        configuration: configuration as unknown as EndpointConfiguration,
        configuration_version: data.configuration_version,
      };
    }
    case ENDPOINT_ENABLED:
      return { ...state, enabled: true };
    case ENDPOINT_DISABLED:
      return { ...state, enabled: false };
    case DESTINATION_VERIFIED: {
      const data = event.data as DestinationVerifiedData;
      return { ...state, destination_verified: true, destination_verified_at: data.verified_at };
    }
    case ENDPOINT_MAINTENANCE_UNTIL_SET: {
      const data = event.data as EndpointMaintenanceUntilSetData;
      return { ...state, maintenance_until: data.maintenance_until };
    }
    default:
      return state;
  }
}

/** `{scheme}://{host[:port]}/.well-known/monitor-verification/{endpoint_id}` (api-decisions). */
export function verificationUrl(endpoint: Pick<EndpointSnapshot, 'endpoint_id' | 'configuration'>): string | null {
  try {
    const url = new URL(endpoint.configuration.url);
    return `${url.protocol}//${url.host}/.well-known/monitor-verification/${endpoint.endpoint_id}`;
  } catch {
    return null;
  }
}

/** The endpoint stream's one command-side fold, in the shape runStreamCommand and StreamCache take. */
export const endpointSnapshotAggregate = {
  initial: (): EndpointSnapshotState => null,
  evolve: evolveEndpoint,
};
