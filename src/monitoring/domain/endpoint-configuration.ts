/**
 * Everything that shapes how an endpoint is probed and judged. Includes hidden values (query,
 * user-info, header values, payload, expected body) that never leave the service.
 */

export const PROBE_METHODS = ['GET', 'HEAD', 'OPTIONS'] as const;
export type ProbeMethod = (typeof PROBE_METHODS)[number];

export const BODY_MATCH_MODES = ['none', 'exact', 'contains', 'json_subset'] as const;
export type BodyMatchMode = (typeof BODY_MATCH_MODES)[number];

export const LATENCY_DETECTION_MODES = ['auto', 'fixed', 'off'] as const;
export type LatencyDetectionMode = (typeof LATENCY_DETECTION_MODES)[number];

export interface LatencySettings {
  latency_detection_mode: LatencyDetectionMode;
  latency_fixed_threshold_ms: number | null;
  latency_sensitivity: number;
  latency_min_samples: number;
  latency_trigger_count: number;
  latency_trigger_window: number;
  latency_recovery_count: number;
  /**
   * Materiality floors of auto mode: a check is anomalous only when it is also at least this many
   * ms and this many percent over the baseline's median, so jitter on a fast endpoint (2 ms
   * median, 15 ms checks on a busy machine) never opens an incident. Endpoints registered before
   * these existed have neither field: `materialityFloors` gives them the defaults.
   */
  latency_min_increase_ms: number;
  latency_min_increase_percent: number;
}

/**
 * How an endpoint's alerts relate to other endpoints and to its own history (issue 26):
 * `depends_on` names endpoints of the same team whose triggered availability suppresses this
 * one's failing checks; `flap_*` say when the availability signal is flapping. Endpoints
 * registered before these existed have none of them: `alertRelations` gives the defaults.
 */
export interface AlertRelationSettings {
  depends_on: number[];
  flap_threshold: number;
  flap_window_seconds: number;
}

export const DEFAULT_ALERT_RELATIONS: AlertRelationSettings = {
  depends_on: [],
  flap_threshold: 6,
  flap_window_seconds: 3_600,
};

/** The dependency and flapping settings of a configuration, with the defaults for one stored before they existed. */
export function alertRelations(settings: Partial<AlertRelationSettings>): AlertRelationSettings {
  return {
    depends_on: settings.depends_on ?? DEFAULT_ALERT_RELATIONS.depends_on,
    flap_threshold: settings.flap_threshold ?? DEFAULT_ALERT_RELATIONS.flap_threshold,
    flap_window_seconds: settings.flap_window_seconds ?? DEFAULT_ALERT_RELATIONS.flap_window_seconds,
  };
}

export interface EndpointConfiguration extends LatencySettings, Partial<AlertRelationSettings> {
  /** The full configured URL, hidden query and user-info included. */
  url: string;
  method: ProbeMethod;
  /** Header name -> hidden value. */
  headers: Record<string, string>;
  request_payload: string | null;
  expected_status: number;
  body_match_mode: BodyMatchMode;
  expected_body: string | null;
  interval_seconds: number;
  timeout_seconds: number;
  /**
   * https: the certificate signal triggers when the server's certificate expires within this many
   * days (0: off). Absent from endpoints registered before it existed: `certificateExpiryDays`.
   */
  certificate_expiry_days?: number;
  /**
   * Probe regions (RegionSettings). Absent on endpoints configured before regions existed:
   * `regionSettings` gives the defaults.
   */
  regions?: string[];
  region_quorum?: number | null;
}

export const DEFAULT_CERTIFICATE_EXPIRY_DAYS = 14;

/** The certificate threshold in days of a configuration (0: off). */
export function certificateExpiryDays(config: { certificate_expiry_days?: number }): number {
  return config.certificate_expiry_days ?? DEFAULT_CERTIFICATE_EXPIRY_DAYS;
}

/**
 * Where an endpoint is probed from: `regions` empty means "the region of whichever prober takes
 * the job" (one check per slot); otherwise each slot is probed once in every listed region and
 * the endpoint is down when at least `region_quorum` of them fail (null exactly when regions is
 * empty).
 */
export interface RegionSettings {
  regions: string[];
  region_quorum: number | null;
}

export const MAX_REGIONS = 16;

/** Half or more of the regions: ceil(n / 2); null without regions. */
export function defaultRegionQuorum(regions: readonly string[]): number | null {
  return regions.length === 0 ? null : Math.ceil(regions.length / 2);
}

/** The region settings of a configuration, with the defaults for one stored before they existed. */
export function regionSettings(config: Pick<EndpointConfiguration, 'regions' | 'region_quorum'>): RegionSettings {
  const regions = config.regions ?? [];
  return { regions, region_quorum: regions.length === 0 ? null : (config.region_quorum ?? defaultRegionQuorum(regions)) };
}

export const DEFAULT_LATENCY_SETTINGS: LatencySettings = {
  latency_detection_mode: 'auto',
  latency_fixed_threshold_ms: null,
  latency_sensitivity: 3,
  latency_min_samples: 20,
  latency_trigger_count: 3,
  latency_trigger_window: 5,
  latency_recovery_count: 3,
  latency_min_increase_ms: 25,
  latency_min_increase_percent: 25,
};

/** The floors of a configuration, with the defaults for one stored before they existed. */
export function materialityFloors(settings: Partial<LatencySettings>): { min_increase_ms: number; min_increase_percent: number } {
  return {
    min_increase_ms: settings.latency_min_increase_ms ?? DEFAULT_LATENCY_SETTINGS.latency_min_increase_ms,
    min_increase_percent: settings.latency_min_increase_percent ?? DEFAULT_LATENCY_SETTINGS.latency_min_increase_percent,
  };
}

/** Availability signal settings follow the latency trigger settings (api-decisions: Alerting). */
export interface AlertRules {
  trigger_count: number;
  trigger_window: number;
  recovery_count: number;
}
