/**
 * The monitoring view (projection `monitoring`: projects, endpoints, maintenance windows), defined
 * here once: written by `projection.ts`, read through `queries.ts` (and its shared row cache,
 * `monitoringRow`) and by the contexts that show or check projects and endpoints (incidents,
 * notifications, status pages, SLOs). No hidden value is ever in these documents.
 */
import type { PublicConfiguration } from '../../domain/endpoint.js';
import type { MaintenanceWindowScheduledData, ProjectCreatedData } from '../../domain/events.js';

/** Projection `monitoring`: projects, endpoints and maintenance windows. */
export const MONITORING_VIEW = 'monitoring';
export const PROJECTS = 'projects';
export const ENDPOINTS = 'endpoints';
export const MAINTENANCE_WINDOWS = 'maintenance_windows';

/** A live project (a deleted one leaves the collection). */
export interface ProjectDoc extends ProjectCreatedData {
  id: string;
  updated_at: string;
}

/**
 * A live endpoint: its public configuration only (url without query or user-info, header names,
 * `*_configured` flags). The optional fields are absent from documents written before they
 * existed (the view is not rebuilt for a new field); readers put their defaults back.
 */
export interface EndpointDoc
  extends Omit<PublicConfiguration, 'latency_fixed_threshold_ms' | 'latency_min_increase_ms' | 'latency_min_increase_percent' | 'depends_on' | 'flap_threshold' | 'flap_window_seconds' | 'certificate_expiry_days' | 'regions' | 'region_quorum'> {
  id: string;
  endpoint_id: number;
  team_id: number;
  project_id: number;
  name: string;
  description: string;
  enabled: boolean;
  destination_verified: boolean;
  destination_verified_at?: string | null;
  verification_url: string;
  verification_token: string;
  configuration_version: number;
  maintenance_until?: string | null;
  latency_fixed_threshold_ms?: number | null;
  /** [DEFAULT_LATENCY_SETTINGS] */
  latency_min_increase_ms?: number;
  /** [DEFAULT_LATENCY_SETTINGS] */
  latency_min_increase_percent?: number;
  /** [DEFAULT_ALERT_RELATIONS] */
  depends_on?: number[];
  flap_threshold?: number;
  flap_window_seconds?: number;
  /** [DEFAULT_CERTIFICATE_EXPIRY_DAYS] */
  certificate_expiry_days?: number;
  /** [[]] */
  regions?: string[];
  /** [regionSettings: null without regions] */
  region_quorum?: number | null;
  created_at: string;
  updated_at: string;
}

/** A scheduled window as its event recorded it, cancelled ones included (`cancelled_at`). */
export interface MaintenanceWindowDoc extends MaintenanceWindowScheduledData {
  id: string;
  cancelled_at: string | null;
}
