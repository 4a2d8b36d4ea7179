import { alertRelations, certificateExpiryDays, DEFAULT_LATENCY_SETTINGS, regionSettings } from '../domain/endpoint-configuration.js';
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { Inject, Injectable } from '@nestjs/common';
import { CursorCodec, type Pagination } from '../../platform/http/pagination.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import { ViewCache, ViewListCache } from '../../platform/projections/view-cache.js';
import { monitoringRow } from './monitoring-rows.js';
import { CheckNotFoundError, EndpointNotFoundError, MaintenanceWindowNotFoundError, ProjectNotFoundError } from '../domain/errors.js';
import type { Filter, SortDirection } from '../../platform/read-store/read-store.port.js';
import { type Coverage, coverage, type MaintenanceWindow, projectCoverage } from '../domain/maintenance.js';
import {
  type CheckDoc,
  CHECKS,
  CHECKS_VIEW,
  type EndpointDoc,
  ENDPOINTS,
  MAINTENANCE_WINDOWS,
  type MaintenanceWindowDoc,
  MONITORING_VIEW,
  type ProjectDoc,
  PROJECTS,
} from '../domain/views.js';


const PROJECT_SORT: Array<[string, SortDirection]> = [['project_id', 'asc']];
const ENDPOINT_SORT: Array<[string, SortDirection]> = [['endpoint_id', 'asc']];
const CHECK_SORT: Array<[string, SortDirection]> = [['checked_at', 'desc'], ['check_id', 'desc']];

export interface Page<T> {
  data: T[];
  pagination: Pagination;
}

export function presentProject(row: ProjectDoc, windows: MaintenanceWindow[], now: Date) {
  const covered = projectCoverage(now, { team_id: row.team_id, project_id: row.project_id }, windows);
  return {
    id: row.project_id,
    team_id: row.team_id,
    name: row.name,
    description: row.description,
    incident_grouping_seconds: row.incident_grouping_seconds ?? 0,
    ...covered,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function endpointCoverage(row: EndpointDoc, windows: MaintenanceWindow[], now: Date): Coverage {
  return coverage(
    now,
    { team_id: row.team_id, project_id: row.project_id, endpoint_id: row.endpoint_id, maintenance_until: row.maintenance_until ?? null },
    windows,
  );
}

/** The presented endpoint's fields before its coverage (the order is the spec's). */
function endpointConfiguration(row: EndpointDoc) {
  return {
    id: row.endpoint_id,
    team_id: row.team_id,
    project_id: row.project_id,
    name: row.name,
    description: row.description,
    url: row.url,
    url_query_configured: row.url_query_configured,
    method: row.method,
    header_names: row.header_names,
    request_payload_configured: row.request_payload_configured,
    expected_status: row.expected_status,
    body_match_mode: row.body_match_mode,
    expected_body_configured: row.expected_body_configured,
    interval_seconds: row.interval_seconds,
    timeout_seconds: row.timeout_seconds,
    enabled: row.enabled,
    destination_verified: row.destination_verified,
    verification_url: row.verification_url,
    verification_token: row.verification_token,
    destination_verified_at: row.destination_verified_at ?? null,
    latency_detection_mode: row.latency_detection_mode,
    latency_fixed_threshold_ms: row.latency_fixed_threshold_ms ?? null,
    latency_sensitivity: row.latency_sensitivity,
    latency_min_samples: row.latency_min_samples,
    latency_trigger_count: row.latency_trigger_count,
    latency_trigger_window: row.latency_trigger_window,
    latency_recovery_count: row.latency_recovery_count,
    latency_min_increase_ms: row.latency_min_increase_ms ?? DEFAULT_LATENCY_SETTINGS.latency_min_increase_ms,
    latency_min_increase_percent: row.latency_min_increase_percent ?? DEFAULT_LATENCY_SETTINGS.latency_min_increase_percent,
    ...alertRelations(row),
    certificate_expiry_days: certificateExpiryDays(row),
    ...regionSettings(row),
    configuration_version: row.configuration_version,
    maintenance_until: row.maintenance_until ?? null,
  };
}

/** The presented endpoint's fields after its coverage. */
function endpointTimestamps(row: EndpointDoc) {
  return { created_at: row.created_at, updated_at: row.updated_at };
}

export function presentEndpoint(row: EndpointDoc, windows: MaintenanceWindow[], now: Date) {
  return { ...endpointConfiguration(row), ...endpointCoverage(row, windows, now), ...endpointTimestamps(row) };
}

/** The JSON around an endpoint's coverage, made once per (cached, immutable) row. */
const endpointJsonParts = new WeakMap<EndpointDoc, { before: string; after: string }>();

/** `JSON.stringify(presentEndpoint(row, windows, now))`, serialising only the coverage per request. */
export function presentEndpointJson(row: EndpointDoc, windows: MaintenanceWindow[], now: Date): string {
  let parts = endpointJsonParts.get(row);
  if (!parts) {
    parts = { before: JSON.stringify(endpointConfiguration(row)).slice(0, -1), after: JSON.stringify(endpointTimestamps(row)).slice(1) };
    endpointJsonParts.set(row, parts);
  }
  const covered = endpointCoverage(row, windows, now);
  const coverageJson = `"under_maintenance":${covered.under_maintenance},"maintenance_window_ids":${JSON.stringify(covered.maintenance_window_ids)}`;
  const head = parts.before === '{' ? parts.before : `${parts.before},`;
  return `${head}${coverageJson}${parts.after === '}' ? '}' : `,${parts.after}`}`;
}

export function presentCheck(row: CheckDoc) {
  return {
    id: row.check_id,
    endpoint_id: row.endpoint_id,
    configuration_version: row.configuration_version,
    success: row.success,
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    // The checks view leaves out fields at their default (projections/checks.ts).
    time_to_first_byte_ms: row.time_to_first_byte_ms ?? row.latency_ms,
    duration_ms: row.duration_ms ?? row.latency_ms,
    source: row.source,
    body_complete: row.body_complete ?? true,
    latency_anomaly: row.latency_anomaly ?? false,
    latency_threshold_ms: row.latency_threshold_ms ?? null,
    alert_suppressed: row.alert_suppressed ?? false,
    failure_reason: row.failure_reason ?? null,
    response_excerpt_omitted: row.response_excerpt_omitted === true,
    region: row.region ?? DEFAULT_REGION,
    checked_at: row.checked_at,
  };
}

/** A check as the list serves it: its JSON, and its sort values for the next cursor. */
type CheckEntry = { id: string; checked_at: unknown; check_id: unknown; json: string };

function presentedCheck(row: CheckDoc): CheckEntry {
  return { id: row.id, checked_at: row.checked_at, check_id: row.check_id, json: JSON.stringify(presentCheck(row)) };
}

export function presentWindow(row: MaintenanceWindowDoc | (MaintenanceWindow & { reason: string | null; created_at: string })) {
  return {
    id: row.window_id,
    team_id: row.team_id,
    project_id: row.project_id ?? null,
    endpoint_id: row.endpoint_id ?? null,
    starts_at: row.starts_at,
    ends_at: row.ends_at,
    reason: row.reason ?? null,
    created_at: row.created_at,
  };
}

export interface EndpointFilters {
  project_id?: number;
  enabled?: boolean;
}

export interface CheckFilters {
  source?: 'scheduled' | 'manual';
  success?: boolean;
  /** Checks taken in this region only (an unknown region lists nothing). */
  region?: string;
  from?: string;
  to?: string;
}

/**
 * Reads of the monitoring views, with maintenance coverage computed at request time. Project and
 * endpoint rows and each team's windows are cached while their collection's stamp is unchanged
 * (see ViewCache): rows are shared, so presentation copies and never mutates them.
 */
@Injectable()
export class MonitoringReads {
  private readonly cursors: CursorCodec;
  private readonly teamWindows: ViewCache<MaintenanceWindow[]>;
  private readonly checkLists: ViewListCache<CheckEntry>;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
    this.teamWindows = new ViewCache(platform.reader, MONITORING_VIEW, MAINTENANCE_WINDOWS, { capacity: 1_000 });
    this.checkLists = new ViewListCache(platform.reader, CHECKS_VIEW, CHECKS, { lists: 1_000, values: 20_000 });
  }

  /**
   * The team's windows that had not ended when read (cancelled ones included): coverage at any
   * later `now` skips the cancelled and the ended ones itself.
   */
  async windows(teamId: number, now: Date, scope?: object): Promise<MaintenanceWindow[]> {
    const load = async () => {
      const rows = await this.platform.reader.find(MONITORING_VIEW, MAINTENANCE_WINDOWS, { filter: { team_id: teamId, ends_at: { gt: now.toISOString() } } });
      return rows as unknown as MaintenanceWindowDoc[];
    };
    const windows = await this.teamWindows.get(String(teamId), load, scope);
    return windows ?? [];
  }

  async projectRow(teamId: number, projectId: number): Promise<ProjectDoc> {
    const row = await monitoringRow(this.platform.reader, PROJECTS, projectId);
    if (!row || row.team_id !== teamId) throw new ProjectNotFoundError(projectId);
    return row;
  }

  async endpointRow(teamId: number, endpointId: number, scope?: object): Promise<EndpointDoc> {
    const row = await monitoringRow(this.platform.reader, ENDPOINTS, endpointId, scope);
    if (!row || row.team_id !== teamId) throw new EndpointNotFoundError(endpointId);
    return row;
  }

  async project(teamId: number, projectId: number) {
    const row = await this.projectRow(teamId, projectId);
    const now = new Date();
    return presentProject(row, await this.windows(teamId, now), now);
  }

  async endpoint(teamId: number, endpointId: number) {
    const row = await this.endpointRow(teamId, endpointId);
    const now = new Date();
    return presentEndpoint(row, await this.windows(teamId, now), now);
  }

  /**
   * `{ data: endpoint }` as JSON text (the public GET, answered without re-serialising the row).
   * `scope` (the request): see `ReadStore.stamps`.
   */
  async endpointJson(teamId: number, endpointId: number, scope?: object): Promise<string> {
    const row = await this.endpointRow(teamId, endpointId, scope);
    const now = new Date();
    return `{"data":${presentEndpointJson(row, await this.windows(teamId, now, scope), now)}}`;
  }

  async window(teamId: number, windowId: number) {
    const row = (await this.platform.reader.get(MONITORING_VIEW, MAINTENANCE_WINDOWS, windowId)) as unknown as MaintenanceWindowDoc | null;
    if (!row || row.team_id !== teamId) throw new MaintenanceWindowNotFoundError(windowId);
    return presentWindow(row);
  }

  /** Decodes the cursor first, so a bad cursor is refused before anything is read. */
  cursor(cursor: string | undefined, filters: unknown) {
    return this.cursors.decode(cursor, filters);
  }

  async projects(teamId: number, limit: number, cursor: string | undefined): Promise<Page<ReturnType<typeof presentProject>>> {
    const bound = { list: 'projects', team_id: teamId };
    const after = this.cursor(cursor, bound);
    const rows = await this.platform.reader.find(MONITORING_VIEW, PROJECTS, { filter: { team_id: teamId }, sort: PROJECT_SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, PROJECT_SORT, bound);
    const now = new Date();
    const windows = await this.windows(teamId, now);
    return { data: (page.rows as unknown as ProjectDoc[]).map((row) => presentProject(row, windows, now)), pagination: page.pagination };
  }

  async endpoints(teamId: number, filters: EndpointFilters, limit: number, cursor: string | undefined): Promise<Page<ReturnType<typeof presentEndpoint>>> {
    const bound = { list: 'endpoints', team_id: teamId, project_id: filters.project_id ?? null, enabled: filters.enabled ?? null };
    const after = this.cursor(cursor, bound);
    const filter: Filter = { team_id: teamId };
    if (filters.project_id !== undefined) filter.project_id = filters.project_id;
    if (filters.enabled !== undefined) filter.enabled = filters.enabled;
    const rows = await this.platform.reader.find(MONITORING_VIEW, ENDPOINTS, { filter, sort: ENDPOINT_SORT, after, limit: limit + 1 });
    const page = this.cursors.page(rows, limit, ENDPOINT_SORT, bound);
    const now = new Date();
    const windows = await this.windows(teamId, now);
    return { data: (page.rows as unknown as EndpointDoc[]).map((row) => presentEndpoint(row, windows, now)), pagination: page.pagination };
  }

  /**
   * A page of checks as JSON text. The page's ids are kept per query while the checks collection
   * is unchanged and read from the index again after any write; each check's presented JSON is
   * kept until a check document is replaced or deleted (recording a check only inserts), so new
   * checks show at once and known ones are not read again.
   */
  async checksJson(teamId: number, endpointId: number, filters: CheckFilters, limit: number, cursor: string | undefined, scope?: object): Promise<string> {
    const bound = { list: 'checks', team_id: teamId, endpoint_id: endpointId, ...filters };
    const after = this.cursor(cursor, bound);
    // Every check of the team's endpoint is the team's: no per-row team filter in the query.
    await this.endpointRow(teamId, endpointId, scope);
    const filter: Filter = { endpoint_id: endpointId };
    if (filters.source !== undefined) filter.source = filters.source;
    if (filters.success !== undefined) filter.success = filters.success;
    // The view leaves out the default region (`eq: null` matches a missing field).
    if (filters.region !== undefined) filter.region = filters.region === DEFAULT_REGION ? null : filters.region;
    if (filters.from !== undefined || filters.to !== undefined) {
      filter.checked_at = { ...(filters.from !== undefined ? { gte: filters.from } : {}), ...(filters.to !== undefined ? { lt: filters.to } : {}) };
    }
    const query = { filter, sort: CHECK_SORT, after, limit: limit + 1 };
    const rows = await this.checkLists.list(
      JSON.stringify(query),
      () => this.platform.reader.findIds(CHECKS_VIEW, CHECKS, query),
      async (ids) => ((await this.platform.reader.getMany(CHECKS_VIEW, CHECKS, ids)) as unknown as CheckDoc[]).map((row) => [row.id, presentedCheck(row)]),
      scope,
    );
    const page = this.cursors.page(rows, limit, CHECK_SORT, bound);
    return `{"data":[${page.rows.map((row) => row.json).join(',')}],"pagination":${JSON.stringify(page.pagination)}}`;
  }

  async check(teamId: number, endpointId: number, checkId: number) {
    const row = (await this.platform.reader.get(CHECKS_VIEW, CHECKS, checkId)) as unknown as CheckDoc | null;
    if (!row || row.team_id !== teamId || row.endpoint_id !== endpointId) throw new CheckNotFoundError(checkId);
    return presentCheck(row);
  }
}
