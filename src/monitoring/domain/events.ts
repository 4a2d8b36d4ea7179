/**
 * The monitoring context's events and streams. This file is the contract other contexts build
 * on (probing, alerting, incidents, analytics): change it additively.
 *
 * Streams:
 *   project-<projectId>        ProjectCreated, ProjectUpdated, ProjectDeleted (last)
 *   endpoint-<endpointId>      EndpointRegistered, EndpointReconfigured, EndpointEnabled, EndpointDisabled,
 *                              DestinationVerified, EndpointMaintenanceUntilSet, EndpointDeleted (last)
 *   maintenance-<teamId>       MaintenanceWindowScheduled, MaintenanceWindowCancelled
 *   checks-<endpointId>        CheckRecorded (see check.ts) and the alerting signal events
 *
 * Views (projection `monitoring`, collections `projects`, `endpoints`, `maintenance_windows`;
 * projection `checks`, collection `checks`): the slices under ../views/ (monitoring, checks).
 */
import type { EndpointConfiguration } from './endpoint-configuration.js';

export const PROJECT_CREATED = 'ProjectCreated';
export const PROJECT_UPDATED = 'ProjectUpdated';
export const PROJECT_DELETED = 'ProjectDeleted';
export const ENDPOINT_REGISTERED = 'EndpointRegistered';
export const ENDPOINT_RECONFIGURED = 'EndpointReconfigured';
export const ENDPOINT_ENABLED = 'EndpointEnabled';
export const ENDPOINT_DISABLED = 'EndpointDisabled';
export const DESTINATION_VERIFIED = 'DestinationVerified';
export const ENDPOINT_MAINTENANCE_UNTIL_SET = 'EndpointMaintenanceUntilSet';
export const ENDPOINT_DELETED = 'EndpointDeleted';
export const MAINTENANCE_WINDOW_SCHEDULED = 'MaintenanceWindowScheduled';
export const MAINTENANCE_WINDOW_CANCELLED = 'MaintenanceWindowCancelled';

export const projectStream = (projectId: number) => `project-${projectId}`;
export const endpointStream = (endpointId: number) => `endpoint-${endpointId}`;
export const maintenanceStream = (teamId: number) => `maintenance-${teamId}`;

export interface ProjectCreatedData {
  project_id: number;
  team_id: number;
  name: string;
  description: string;
  /** Automatic incidents grouping window (absent: 0, off); see project.ts. */
  incident_grouping_seconds?: number;
  created_at: string;
}

export interface ProjectUpdatedData {
  project_id: number;
  team_id: number;
  changes: { name?: string; description?: string; incident_grouping_seconds?: number };
  updated_at: string;
}

/** The project had no endpoints left. Its events stay in the log; it leaves every list. */
export interface ProjectDeletedData {
  project_id: number;
  team_id: number;
  deleted_at: string;
}

export interface EndpointRegisteredData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  name: string;
  description: string;
  /** Full configuration including hidden values: it never leaves the service. */
  configuration: EndpointConfiguration;
  verification_token: string;
  configuration_version: 1;
  created_at: string;
}

export interface EndpointReconfiguredData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  /** Only the fields that changed (name, description, project_id or any configuration field). */
  changes: Partial<EndpointConfiguration> & { name?: string; description?: string; project_id?: number };
  /** The new version: previous + 1. Name/description-only edits also count as configuration changes. */
  configuration_version: number;
  updated_at: string;
}

export interface EndpointToggledData {
  endpoint_id: number;
  team_id: number;
  at: string;
}

export interface DestinationVerifiedData {
  endpoint_id: number;
  team_id: number;
  verified_at: string;
}

export interface EndpointMaintenanceUntilSetData {
  endpoint_id: number;
  team_id: number;
  /** Legacy maintenance: covered until this time; null clears it. */
  maintenance_until: string | null;
  at: string;
}

/**
 * The endpoint is no longer probed nor listed, and leaves analytics comparisons from then on.
 * Its events (checks included) stay in the log for auditors; incidents that link it stay readable.
 */
export interface EndpointDeletedData {
  endpoint_id: number;
  team_id: number;
  project_id: number;
  deleted_at: string;
}

export interface MaintenanceWindowScheduledData {
  window_id: number;
  team_id: number;
  /** Both null: team-wide. */
  project_id: number | null;
  endpoint_id: number | null;
  starts_at: string;
  ends_at: string;
  reason: string | null;
  created_at: string;
}

export interface MaintenanceWindowCancelledData {
  window_id: number;
  team_id: number;
  cancelled_at: string;
}

/** What each stream holds, typed: deciders return these and folds read them. */
export type ProjectEvent =
  | { type: typeof PROJECT_CREATED; data: ProjectCreatedData }
  | { type: typeof PROJECT_UPDATED; data: ProjectUpdatedData }
  | { type: typeof PROJECT_DELETED; data: ProjectDeletedData };

export type EndpointEvent =
  | { type: typeof ENDPOINT_REGISTERED; data: EndpointRegisteredData }
  | { type: typeof ENDPOINT_RECONFIGURED; data: EndpointReconfiguredData }
  | { type: typeof ENDPOINT_ENABLED; data: EndpointToggledData }
  | { type: typeof ENDPOINT_DISABLED; data: EndpointToggledData }
  | { type: typeof DESTINATION_VERIFIED; data: DestinationVerifiedData }
  | { type: typeof ENDPOINT_MAINTENANCE_UNTIL_SET; data: EndpointMaintenanceUntilSetData }
  | { type: typeof ENDPOINT_DELETED; data: EndpointDeletedData };

export type MaintenanceEvent =
  | { type: typeof MAINTENANCE_WINDOW_SCHEDULED; data: MaintenanceWindowScheduledData }
  | { type: typeof MAINTENANCE_WINDOW_CANCELLED; data: MaintenanceWindowCancelledData };
