/**
 * An endpoint's rules and the decider of its commands (stream `endpoint-<id>`), deciding on the
 * stream's one fold (endpoint-snapshot.ts).
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_ALERT_RELATIONS, DEFAULT_CERTIFICATE_EXPIRY_DAYS, DEFAULT_LATENCY_SETTINGS, defaultRegionQuorum, type AlertRelationSettings, type EndpointConfiguration, type LatencySettings } from './endpoint-configuration.js';
import type { EndpointSnapshot, EndpointSnapshotState } from './endpoint-snapshot.js';
import {
  AlreadyExistsError,
  DestinationNotVerifiedError,
  EndpointNotFoundError,
  MonitoringRulesError,
  TeamNotFoundError,
  type RuleViolation,
} from './errors.js';
import {
  DESTINATION_VERIFIED,
  ENDPOINT_DELETED,
  ENDPOINT_DISABLED,
  ENDPOINT_ENABLED,
  ENDPOINT_MAINTENANCE_UNTIL_SET,
  ENDPOINT_RECONFIGURED,
  ENDPOINT_REGISTERED,
  endpointStream,
  type EndpointEvent,
  type EndpointReconfiguredData,
} from './events.js';
import { maskedUrl, publicUrl, urlQueryConfigured, verificationUrl } from './url.js';

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
  flap_threshold: { min: 2, max: 50 },
  flap_window_seconds: { min: 60, max: 86_400 },
  /** How many endpoints one may depend on. */
  depends_on: { min: 0, max: 20 },
  certificate_expiry_days: { min: 0, max: 365 },
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
  ...DEFAULT_ALERT_RELATIONS,
  certificate_expiry_days: DEFAULT_CERTIFICATE_EXPIRY_DAYS,
};

export function newVerificationToken(): string {
  return randomBytes(32).toString('hex');
}

/** The non-hidden view of configuration fields: what views and responses may hold. */
export interface PublicConfiguration extends LatencySettings, AlertRelationSettings {
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
  certificate_expiry_days: number;
  regions?: string[];
  region_quorum?: number | null;
}

/**
 * The configuration members that hold hidden values, whole or in part (the URL's user-info, query
 * and fragment; header values; the payload; the expected body). The one list of them: no answer
 * passes them through (`publicConfiguration`), and an audit export masks them (`maskHiddenValues`,
 * src/audit/domain/withheld-values.ts). A member added here must be handled by both.
 */
export const HIDDEN_CONFIGURATION_MEMBERS = ['url', 'headers', 'request_payload', 'expected_body'] as const;
type HiddenMember = (typeof HIDDEN_CONFIGURATION_MEMBERS)[number];

/** Maps (part of) a configuration to its public fields; hidden values never pass through. */
export function publicConfiguration(config: Partial<EndpointConfiguration>): Partial<PublicConfiguration> {
  const out: Partial<PublicConfiguration> = {};
  const { url, headers, request_payload, expected_body } = config;
  if (url !== undefined) {
    out.url = publicUrl(url);
    out.url_query_configured = urlQueryConfigured(url);
  }
  if (headers !== undefined) out.header_names = Object.keys(headers);
  if (request_payload !== undefined) out.request_payload_configured = request_payload !== null;
  if (expected_body !== undefined) out.expected_body_configured = expected_body !== null;
  return { ...out, ...withoutHiddenMembers(config) };
}

function withoutHiddenMembers(config: Partial<EndpointConfiguration>): Omit<Partial<EndpointConfiguration>, HiddenMember> {
  const visible = { ...config };
  for (const member of HIDDEN_CONFIGURATION_MEMBERS) delete visible[member];
  return visible;
}

/** How each hidden member shows with its hidden values masked: the value shown, and the paths (under the member) masked. */
const MASKS: { [M in HiddenMember]: (value: NonNullable<EndpointConfiguration[M]>, marker: string) => { shown: unknown; paths: string[][] } } = {
  url: (url, marker) => {
    const shown = maskedUrl(url, marker);
    return { shown, paths: shown === url ? [] : [[]] };
  },
  headers: (headers, marker) => ({ shown: Object.fromEntries(Object.keys(headers).map((name) => [name, marker])), paths: Object.keys(headers).map((name) => [name]) }),
  request_payload: (_payload, marker) => ({ shown: marker, paths: [[]] }),
  expected_body: (_body, marker) => ({ shown: marker, paths: [[]] }),
};

/**
 * (Part of) a configuration, its shape kept, with every hidden value shown as `marker` (the URL
 * keeps its scheme, host and path, the headers their names), and the path of each value masked
 * (member, then header name). null when it holds no hidden value.
 */
export function maskHiddenValues(config: Partial<EndpointConfiguration>, marker: string): { configuration: Partial<EndpointConfiguration>; masked: string[][] } | null {
  const shown: Record<string, unknown> = { ...config };
  const masked: string[][] = [];
  for (const member of HIDDEN_CONFIGURATION_MEMBERS) {
    const value = config[member];
    if (value === undefined || value === null) continue;
    const mask = MASKS[member] as (value: unknown, marker: string) => { shown: unknown; paths: string[][] };
    const result = mask(value, marker);
    if (result.paths.length === 0) continue;
    shown[member] = result.shown;
    masked.push(...result.paths.map((path) => [member, ...path]));
  }
  return masked.length === 0 ? null : { configuration: shown as Partial<EndpointConfiguration>, masked };
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
  violations.push(...regionViolations(config));
  return violations;
}

function regionViolations(config: EndpointConfiguration): RuleViolation[] {
  const { regions, region_quorum } = config;
  if (regions === undefined) return [];
  if (regions.length === 0) {
    return region_quorum === null || region_quorum === undefined ? [] : [{ field: 'region_quorum', code: 'invalid_value', message: 'must be null when regions is empty' }];
  }
  if (region_quorum !== null && region_quorum !== undefined && region_quorum > regions.length) {
    return [{ field: 'region_quorum', code: 'out_of_range', message: `must not exceed the number of regions (${regions.length})` }];
  }
  return [];
}

/**
 * Switching latency mode away from fixed clears a threshold the client did not restate. Setting
 * `regions` without `region_quorum`, or `region_quorum` null, gives the default quorum
 * (ceil(n / 2); null without regions). Configurations without the region fields keep them absent.
 */
export function mergeConfiguration(current: EndpointConfiguration, patch: Partial<EndpointConfiguration>): EndpointConfiguration {
  const merged = { ...current, ...Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) } as EndpointConfiguration;
  if (patch.latency_detection_mode !== undefined && patch.latency_detection_mode !== 'fixed' && patch.latency_fixed_threshold_ms === undefined) {
    merged.latency_fixed_threshold_ms = null;
  }
  if (patch.regions !== undefined || patch.region_quorum !== undefined) {
    const regions = merged.regions ?? [];
    merged.regions = regions;
    const restated = patch.region_quorum !== undefined && patch.region_quorum !== null;
    // An explicit quorum with no regions stays, so the rules can refuse it.
    if (!restated && (patch.regions !== undefined || patch.region_quorum === null)) merged.region_quorum = defaultRegionQuorum(regions);
    // Still no regions on an endpoint that never had the fields: nothing changed.
    if (current.regions === undefined && regions.length === 0 && merged.region_quorum === null) {
      delete merged.regions;
      delete merged.region_quorum;
    }
  }
  return merged;
}

/**
 * What the handler found of the endpoints a new `depends_on` names (the decider cannot read
 * other streams): which are not live endpoints of the team, and a path of `depends_on` from one
 * of them back to the endpoint itself (a cycle), if any.
 */
export interface DependencyFacts {
  unknown: number[];
  cycle: number[] | null;
}

/** The rules of a new `depends_on` (field `depends_on`, 400 validation_failed at the edge). */
export function dependencyViolations(endpointId: number | null, dependsOn: readonly number[], facts: DependencyFacts | undefined): RuleViolation[] {
  const violations: RuleViolation[] = [];
  const field = 'depends_on';
  if (dependsOn.length > LIMITS.depends_on.max) violations.push({ field, code: 'out_of_range', message: `must name at most ${LIMITS.depends_on.max} endpoints` });
  if (new Set(dependsOn).size !== dependsOn.length) violations.push({ field, code: 'invalid_value', message: 'must not name an endpoint twice' });
  if (endpointId !== null && dependsOn.includes(endpointId)) violations.push({ field, code: 'invalid_value', message: 'must not name the endpoint itself' });
  if (facts === undefined) return violations;
  if (facts.unknown.length > 0) violations.push({ field, code: 'not_found', message: `names endpoints that are not endpoints of this team: ${facts.unknown.join(', ')}` });
  if (facts.cycle !== null) violations.push({ field, code: 'invalid_value', message: `would form a cycle: ${facts.cycle.join(' -> ')}` });
  return violations;
}

const unknownProject = (): RuleViolation => ({ field: 'project_id', code: 'not_found', message: 'does not name a project of this team' });

// ---------------------------------------------------------------------------------------------
// Decisions

/** A registration as the client asked for it, with the facts of other streams the handler gathered. */
export interface EndpointRegistration {
  team_id: number;
  project_id: number;
  name: string;
  description: string;
  /** The URL and the fields the client set; the others take their defaults. */
  configuration: Partial<EndpointConfiguration> & { url: string };
  team_exists: boolean;
  /** project_id names a project of the team. */
  project_known: boolean;
  /** What the named endpoints are, when the registration sets a non-empty depends_on. */
  dependencies?: DependencyFacts;
}

/** What an update may change; an absent field stays as it is. */
export interface EndpointChanges {
  name?: string;
  description?: string;
  project_id?: number;
  configuration: Partial<EndpointConfiguration>;
  enabled?: boolean;
  /** Legacy maintenance: null clears it. */
  maintenance_until?: string | null;
}

export type EndpointCommand =
  | ({ kind: 'register_endpoint'; endpoint_id: number; verification_token: string; created_at: string } & EndpointRegistration)
  | {
      kind: 'update_endpoint';
      endpoint_id: number;
      team_id: number;
      changes: EndpointChanges;
      /** changes.project_id (when given) names a project of the team. */
      project_known: boolean;
      /** What the named endpoints are, when the changes set depends_on. */
      dependencies?: DependencyFacts;
      at: string;
    }
  | { kind: 'verify_destination'; endpoint_id: number; team_id: number; verified_at: string }
  | { kind: 'delete_endpoint'; endpoint_id: number; team_id: number; deleted_at: string };

/**
 * The configuration a registration stores, or the refusal: 404 for the team first, then every
 * broken rule at once. Handlers call it before allocating an id (so a refused request uses none);
 * decide checks the same.
 */
export function checkRegistration(registration: EndpointRegistration): EndpointConfiguration {
  if (!registration.team_exists) throw new TeamNotFoundError(registration.team_id);
  const configuration = mergeConfiguration({ ...DEFAULT_CONFIGURATION, url: registration.configuration.url }, registration.configuration);
  const violations = configurationViolations(configuration);
  violations.push(...dependencyViolations(null, configuration.depends_on ?? [], registration.dependencies));
  if (!registration.project_known) violations.push(unknownProject());
  MonitoringRulesError.throwIfAny(violations);
  return configuration;
}

/** The endpoint when it exists in the team; EndpointNotFoundError otherwise. */
export function endpointOfTeam(state: EndpointSnapshotState, teamId: number, endpointId: number): EndpointSnapshot {
  if (state === null || state.team_id !== teamId) throw new EndpointNotFoundError(endpointId);
  return state;
}

export function decideEndpoint(state: EndpointSnapshotState, command: EndpointCommand): EndpointEvent[] {
  switch (command.kind) {
    case 'register_endpoint':
      return register(state, command);
    case 'update_endpoint':
      return update(endpointOfTeam(state, command.team_id, command.endpoint_id), command);
    case 'verify_destination': {
      const endpoint = endpointOfTeam(state, command.team_id, command.endpoint_id);
      if (endpoint.destination_verified) return [];
      return [{ type: DESTINATION_VERIFIED, data: { endpoint_id: endpoint.endpoint_id, team_id: endpoint.team_id, verified_at: command.verified_at } }];
    }
    case 'delete_endpoint': {
      const endpoint = endpointOfTeam(state, command.team_id, command.endpoint_id);
      return [{ type: ENDPOINT_DELETED, data: { endpoint_id: endpoint.endpoint_id, team_id: endpoint.team_id, project_id: endpoint.project_id, deleted_at: command.deleted_at } }];
    }
  }
}

function register(state: EndpointSnapshotState, command: Extract<EndpointCommand, { kind: 'register_endpoint' }>): EndpointEvent[] {
  const configuration = checkRegistration(command);
  // Ids are handed out once: a live endpoint on the stream means one was handed out twice.
  if (state !== null) throw new AlreadyExistsError(endpointStream(command.endpoint_id));
  const { endpoint_id, team_id, project_id, name, description, verification_token, created_at } = command;
  return [
    {
      type: ENDPOINT_REGISTERED,
      data: { endpoint_id, team_id, project_id, name, description, configuration, verification_token, configuration_version: 1, created_at },
    },
  ];
}

/** Checks in order: the rules of the merged configuration and the project (400), then enabling an unverified endpoint (409). */
function update(endpoint: EndpointSnapshot, command: Extract<EndpointCommand, { kind: 'update_endpoint' }>): EndpointEvent[] {
  const { changes, at } = command;
  const configuration = mergeConfiguration(endpoint.configuration, changes.configuration);
  const violations = configurationViolations(configuration);
  if (changes.configuration.depends_on !== undefined) violations.push(...dependencyViolations(endpoint.endpoint_id, changes.configuration.depends_on, command.dependencies));
  if (!command.project_known) violations.push(unknownProject());
  MonitoringRulesError.throwIfAny(violations);
  if (changes.enabled === true && !endpoint.enabled && !endpoint.destination_verified) throw new DestinationNotVerifiedError(endpoint.endpoint_id);

  const base = { endpoint_id: endpoint.endpoint_id, team_id: endpoint.team_id };
  const events: EndpointEvent[] = [];
  const reconfigured = reconfiguration(endpoint, changes, configuration);
  if (Object.keys(reconfigured).length > 0) {
    const data: EndpointReconfiguredData = {
      ...base,
      project_id: reconfigured.project_id ?? endpoint.project_id,
      changes: reconfigured,
      configuration_version: endpoint.configuration_version + 1,
      updated_at: at,
    };
    events.push({ type: ENDPOINT_RECONFIGURED, data });
  }
  if (changes.enabled !== undefined && changes.enabled !== endpoint.enabled) {
    events.push({ type: changes.enabled ? ENDPOINT_ENABLED : ENDPOINT_DISABLED, data: { ...base, at } });
  }
  if (changes.maintenance_until !== undefined && changes.maintenance_until !== endpoint.maintenance_until) {
    events.push({ type: ENDPOINT_MAINTENANCE_UNTIL_SET, data: { ...base, maintenance_until: changes.maintenance_until, at } });
  }
  return events;
}

/** Identity and configuration fields whose value differs (a name-only edit is a new configuration version too). */
function reconfiguration(endpoint: EndpointSnapshot, changes: EndpointChanges, configuration: EndpointConfiguration): EndpointReconfiguredData['changes'] {
  const reconfigured: EndpointReconfiguredData['changes'] = configurationChanges(endpoint.configuration, configuration);
  if (changes.name !== undefined && changes.name !== endpoint.name) reconfigured.name = changes.name;
  if (changes.description !== undefined && changes.description !== endpoint.description) reconfigured.description = changes.description;
  if (changes.project_id !== undefined && changes.project_id !== endpoint.project_id) reconfigured.project_id = changes.project_id;
  return reconfigured;
}
