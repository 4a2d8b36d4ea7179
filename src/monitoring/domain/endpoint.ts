import { randomBytes } from 'node:crypto';
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { DEFAULT_LATENCY_SETTINGS, type EndpointConfiguration } from './endpoint-configuration.js';
import {
  DESTINATION_VERIFIED,
  type DestinationVerifiedData,
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_MAINTENANCE_UNTIL_SET,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  type EndpointMaintenanceUntilSetData,
  type EndpointReconfiguredData,
  type EndpointRegisteredData,
  type EndpointToggledData,
} from './events.js';
import { publicUrl, urlQueryConfigured, verificationUrl } from './url.js';

/** Configuration limits (api-decisions leaves them open; documented in docs/monitoring.md). */
export const LIMITS = {
  interval_seconds: { min: 1, max: 86_400 },
  /** Also at most interval_seconds. */
  timeout_seconds: { min: 1, max: 60 },
  latency_fixed_threshold_ms: { min: 1, max: 600_000 },
  latency_sensitivity: { min: 1, max: 10 },
  latency_min_samples: { min: 1, max: 10_000 },
  latency_trigger_count: { min: 1, max: 100 },
  latency_trigger_window: { min: 1, max: 100 },
  latency_recovery_count: { min: 1, max: 100 },
  latency_min_increase_ms: { min: 0, max: 600_000 },
  latency_min_increase_percent: { min: 0, max: 10_000 },
  expected_status: { min: 100, max: 599 },
} as const;

export const DEFAULT_CONFIGURATION: Omit<EndpointConfiguration, 'url'> = {
  method: 'GET',
  headers: {},
  request_payload: null,
  expected_status: 200,
  body_match_mode: 'none',
  expected_body: null,
  interval_seconds: 60,
  timeout_seconds: 10,
  ...DEFAULT_LATENCY_SETTINGS,
};

export function newVerificationToken(): string {
  return randomBytes(32).toString('hex');
}

export interface EndpointState {
  /** Registered and not deleted. */
  exists: boolean;
  deleted: boolean;
  endpoint_id: number;
  team_id: number;
  project_id: number;
  name: string;
  description: string;
  configuration: EndpointConfiguration;
  verification_token: string;
  enabled: boolean;
  verified: boolean;
  verified_at: string | null;
  configuration_version: number;
  maintenance_until: string | null;
  created_at: string;
  updated_at: string;
}

export const endpointAggregate = {
  initial: (): EndpointState => ({
    exists: false,
    deleted: false,
    endpoint_id: 0,
    team_id: 0,
    project_id: 0,
    name: '',
    description: '',
    configuration: { url: '', ...DEFAULT_CONFIGURATION },
    verification_token: '',
    enabled: false,
    verified: false,
    verified_at: null,
    configuration_version: 0,
    maintenance_until: null,
    created_at: '',
    updated_at: '',
  }),
  evolve(state: EndpointState, event: RecordedEvent): EndpointState {
    switch (event.type) {
      case ENDPOINT_REGISTERED: {
        const d = event.data as EndpointRegisteredData;
        return {
          ...state,
          exists: true,
          endpoint_id: d.endpoint_id,
          team_id: d.team_id,
          project_id: d.project_id,
          name: d.name,
          description: d.description,
          configuration: d.configuration,
          verification_token: d.verification_token,
          configuration_version: d.configuration_version,
          created_at: d.created_at,
          updated_at: d.created_at,
        };
      }
      case ENDPOINT_RECONFIGURED: {
        const d = event.data as EndpointReconfiguredData;
        const { name, description, project_id, ...configuration } = d.changes;
        return {
          ...state,
          name: name ?? state.name,
          description: description ?? state.description,
          project_id: project_id ?? state.project_id,
          configuration: { ...state.configuration, ...configuration },
          configuration_version: d.configuration_version,
          updated_at: d.updated_at,
        };
      }
      case ENDPOINT_ENABLED:
        return { ...state, enabled: true, updated_at: (event.data as EndpointToggledData).at };
      case ENDPOINT_DISABLED:
        return { ...state, enabled: false, updated_at: (event.data as EndpointToggledData).at };
      case DESTINATION_VERIFIED: {
        const d = event.data as DestinationVerifiedData;
        return { ...state, verified: true, verified_at: d.verified_at, updated_at: d.verified_at };
      }
      case ENDPOINT_MAINTENANCE_UNTIL_SET: {
        const d = event.data as EndpointMaintenanceUntilSetData;
        return { ...state, maintenance_until: d.maintenance_until, updated_at: d.at };
      }
      case ENDPOINT_DELETED:
        return { ...state, exists: false, deleted: true, enabled: false };
      default:
        return state;
    }
  },
};

/** The non-hidden view of configuration fields: what views and responses may hold. */
export interface PublicConfiguration {
  url: string;
  url_query_configured: boolean;
  method: string;
  header_names: string[];
  request_payload_configured: boolean;
  expected_status: number;
  body_match_mode: string;
  expected_body_configured: boolean;
  interval_seconds: number;
  timeout_seconds: number;
  latency_detection_mode: string;
  latency_fixed_threshold_ms: number | null;
  latency_sensitivity: number;
  latency_min_samples: number;
  latency_trigger_count: number;
  latency_trigger_window: number;
  latency_recovery_count: number;
  latency_min_increase_ms: number;
  latency_min_increase_percent: number;
}

/** Maps (part of) a configuration to its public fields; hidden values never pass through. */
export function publicConfiguration(config: Partial<EndpointConfiguration>): Partial<PublicConfiguration> {
  const out: Partial<PublicConfiguration> = {};
  const { url, headers, request_payload, expected_body, ...visible } = config;
  if (url !== undefined) {
    out.url = publicUrl(url);
    out.url_query_configured = urlQueryConfigured(url);
  }
  if (headers !== undefined) out.header_names = Object.keys(headers);
  if (request_payload !== undefined) out.request_payload_configured = request_payload !== null;
  if (expected_body !== undefined) out.expected_body_configured = expected_body !== null;
  return { ...out, ...visible };
}

export { verificationUrl };

/** Configuration fields (hidden or not) whose value differs from the current one. */
export function configurationChanges(current: EndpointConfiguration, next: EndpointConfiguration): Partial<EndpointConfiguration> {
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(next) as Array<keyof EndpointConfiguration>) {
    if (JSON.stringify(current[key]) !== JSON.stringify(next[key])) changes[key] = next[key];
  }
  return changes as Partial<EndpointConfiguration>;
}

export interface RuleViolation {
  field: string;
  code: string;
  message: string;
}

/** Rules across fields, checked on the whole (merged) configuration. */
export function configurationViolations(config: EndpointConfiguration): RuleViolation[] {
  const violations: RuleViolation[] = [];
  if (config.timeout_seconds > config.interval_seconds) {
    violations.push({ field: 'timeout_seconds', code: 'out_of_range', message: 'must not exceed interval_seconds' });
  }
  if (config.latency_detection_mode === 'fixed' && config.latency_fixed_threshold_ms === null) {
    violations.push({ field: 'latency_fixed_threshold_ms', code: 'required', message: 'is required when latency_detection_mode is fixed' });
  }
  if (config.latency_detection_mode !== 'fixed' && config.latency_fixed_threshold_ms !== null) {
    violations.push({ field: 'latency_fixed_threshold_ms', code: 'invalid_value', message: 'must be null unless latency_detection_mode is fixed' });
  }
  if (config.latency_trigger_count > config.latency_trigger_window) {
    violations.push({ field: 'latency_trigger_count', code: 'out_of_range', message: 'must not exceed latency_trigger_window' });
  }
  if (config.body_match_mode !== 'none' && config.expected_body === null) {
    violations.push({ field: 'expected_body', code: 'required', message: `is required when body_match_mode is ${config.body_match_mode}` });
  }
  return violations;
}
