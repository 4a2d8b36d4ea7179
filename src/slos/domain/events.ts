/**
 * Events of the slos context. Each SLO is one stream, `slo-<id>`: its definition
 * (created, updated, deleted, one of its listed endpoints deleted) and its burn-rate alert
 * signals (triggered, recovered, the automatic incident a triggered one opened, and their end
 * when the SLO's project is left without an endpoint).
 */

export const SLO_CREATED = 'SloCreated';
export const SLO_UPDATED = 'SloUpdated';
export const SLO_DELETED = 'SloDeleted';
export const SLO_BURN_ALERT_TRIGGERED = 'SloBurnAlertTriggered';
export const SLO_BURN_ALERT_RECOVERED = 'SloBurnAlertRecovered';
export const SLO_BURN_INCIDENT_LINKED = 'SloBurnIncidentLinked';
export const SLO_ENDPOINT_DELETED = 'SloEndpointDeleted';
export const SLO_PROJECT_EMPTIED = 'SloProjectEmptied';

export const SLO_EVENT_TYPES = [SLO_CREATED, SLO_UPDATED, SLO_DELETED, SLO_BURN_ALERT_TRIGGERED, SLO_BURN_ALERT_RECOVERED, SLO_BURN_INCIDENT_LINKED, SLO_ENDPOINT_DELETED, SLO_PROJECT_EMPTIED] as const;

export const sloStream = (sloId: number) => `slo-${sloId}`;

/** What a client sets. Exactly one of `endpoint_ids` and `project_id` is non-null. */
export interface SloFields {
  name: string;
  endpoint_ids: number[] | null;
  project_id: number | null;
  objective_percent: number;
  window_days: number;
  latency_threshold_ms: number | null;
}

export interface SloCreatedData extends SloFields {
  slo_id: number;
  team_id: number;
  created_at: string;
}

export interface SloUpdatedData {
  slo_id: number;
  team_id: number;
  changes: Partial<SloFields>;
  updated_at: string;
}

/**
 * A listed endpoint was deleted: it leaves the SLO's `endpoint_ids` (`endpoint_ids`: those left).
 * With none left the SLO covers no endpoint, and its alerts end (no check can recover them).
 */
export interface SloEndpointDeletedData {
  slo_id: number;
  team_id: number;
  endpoint_id: number;
  endpoint_ids: number[];
  /** The endpoint's deletion; for an endpoint already deleted when the SLO was given it, that change's time. */
  deleted_at: string;
}

/**
 * A project SLO's project has no endpoint left: its last one was deleted or moved to another
 * project. No check of the project will come to recover the SLO's alerts, so they end (the
 * event is appended only while one is active: it changes nothing else). The SLO measures again,
 * and may alert, once the project has an endpoint again.
 */
export interface SloProjectEmptiedData {
  slo_id: number;
  team_id: number;
  project_id: number;
  /** The endpoint whose deletion or move left the project empty; null when found empty by the repair (`found_empty`). */
  endpoint_id: number | null;
  /** `found_empty`: the repair pass found the project empty with the SLO's alert active (left by a version before this step). */
  left_by: 'deleted' | 'moved' | 'found_empty';
  emptied_at: string;
}

export interface SloDeletedData {
  slo_id: number;
  team_id: number;
  deleted_at: string;
}

/** The two multiwindow burn-rate alerts (Google SRE Workbook, "Alerting on SLOs"). */
export type BurnSeverity = 'page' | 'ticket';
export const BURN_SEVERITIES: readonly BurnSeverity[] = ['page', 'ticket'];

/** The windows burn rates are given for. */
export const BURN_WINDOWS = ['5m', '30m', '1h', '6h', '24h', '72h'] as const;
export type BurnWindow = (typeof BURN_WINDOWS)[number];

export interface SloBurnAlertTriggeredData {
  slo_id: number;
  team_id: number;
  severity: BurnSeverity;
  /** The burn rates of the rule's long and short windows when it triggered. */
  long_window: BurnWindow;
  long_burn_rate: number;
  short_window: BurnWindow;
  short_burn_rate: number;
  /** The live check whose evaluation triggered it. */
  check_id: number;
  endpoint_id: number;
  triggered_at: string;
}

export interface SloBurnAlertRecoveredData {
  slo_id: number;
  team_id: number;
  severity: BurnSeverity;
  short_window: BurnWindow;
  /** null when the short window held no check. */
  short_burn_rate: number | null;
  check_id: number;
  recovered_at: string;
}

export interface SloBurnIncidentLinkedData {
  slo_id: number;
  severity: BurnSeverity;
  incident_id: number;
  /** The trigger (its `triggered_at`) the incident was opened for. */
  since: string;
}
