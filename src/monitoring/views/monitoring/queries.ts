import { alertRelations, certificateExpiryDays, DEFAULT_LATENCY_SETTINGS, regionSettings } from '../../domain/endpoint-configuration.js';
import { Inject, Injectable } from '@nestjs/common';
import { CursorCodec, type Pagination } from '../../../platform/http/pagination.js';
import { PLATFORM, type Platform } from '../../../platform/platform.js';
import { ViewCache } from '../../../platform/projections/view-cache.js';
import type { ViewReader } from '../../../platform/projections/views.js';
import { EndpointNotFoundError, MaintenanceWindowNotFoundError, ProjectNotFoundError } from '../../domain/errors.js';
import type { Filter, SortDirection } from '../../../platform/read-store/read-store.port.js';
import { type Coverage, coverage, type MaintenanceWindow, projectCoverage } from '../../domain/maintenance.js';
import {
  type EndpointDoc,
  ENDPOINTS,
  MAINTENANCE_WINDOWS,
  type MaintenanceWindowDoc,
  MONITORING_VIEW,
  type ProjectDoc,
  PROJECTS,
} from './view.js';

interface RowTypes {
  [PROJECTS]: ProjectDoc;
  [ENDPOINTS]: EndpointDoc;
}

type RowCollection = keyof RowTypes;

const caches = new WeakMap<ViewReader, Map<RowCollection, ViewCache<ProjectDoc | EndpointDoc>>>();

/**
 * The one cache of a monitoring collection's rows per reader, shared by the path-resource guard
 * and the read handlers, so a request that checks an endpoint and then reads it finds one entry.
 */
function monitoringRows<C extends RowCollection>(reader: ViewReader, collection: C): ViewCache<RowTypes[C]> {
  let byCollection = caches.get(reader);
  if (!byCollection) caches.set(reader, (byCollection = new Map()));
  let cache = byCollection.get(collection);
  if (!cache) byCollection.set(collection, (cache = new ViewCache(reader, MONITORING_VIEW, collection)));
  return cache as ViewCache<RowTypes[C]>;
}

/**
 * Whether the team's project holds an endpoint, as the monitoring view has applied its
 * endpoints (one row read): a project deletion's refusal, and the SLOs whose project is left
 * without one.
 */
export async function projectHasEndpoints(reader: ViewReader, teamId: number, projectId: number): Promise<boolean> {
  return (await reader.find(MONITORING_VIEW, ENDPOINTS, { filter: { team_id: teamId, project_id: projectId }, limit: 1 })).length > 0;
}

/**
 * A project or endpoint row by id, through the shared cache (valid while the collection's stamp
 * holds; rows are shared, so callers copy and never mutate them). `scope`: see `ReadStore.stamps`.
 */
export function monitoringRow<C extends RowCollection>(reader: ViewReader, collection: C, id: number, scope?: object): Promise<RowTypes[C] | null> {
  const load = async () => (await reader.get(MONITORING_VIEW, collection, id)) as unknown as RowTypes[C] | null;
  return monitoringRows(reader, collection).get(String(id), load, scope);
}

const PROJECT_SORT: Array<[string, SortDirection]> = [['project_id', 'asc']];
const ENDPOINT_SORT: Array<[string, SortDirection]> = [['endpoint_id', 'asc']];

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

/**
 * Reads of the monitoring view, with maintenance coverage computed at request time. Project and
 * endpoint rows and each team's windows are cached while their collection's stamp is unchanged
 * (see ViewCache): rows are shared, so presentation copies and never mutates them.
 */
@Injectable()
export class MonitoringReads {
  private readonly cursors: CursorCodec;
  private readonly teamWindows: ViewCache<MaintenanceWindow[]>;

  constructor(@Inject(PLATFORM) private readonly platform: Platform) {
    this.cursors = new CursorCodec(platform.cursorKey);
    this.teamWindows = new ViewCache(platform.reader, MONITORING_VIEW, MAINTENANCE_WINDOWS, { capacity: 1_000 });
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
}
