import { Inject, Injectable } from '@nestjs/common';
import { DEFAULT_REGION } from '../../../platform/config/region.js';
import { CursorCodec } from '../../../platform/http/pagination.js';
import { PLATFORM, type Platform } from '../../../platform/platform.js';
import { ViewListCache } from '../../../platform/projections/view-cache.js';
import type { Filter, SortDirection } from '../../../platform/read-store/read-store.port.js';
import { CheckNotFoundError } from '../../domain/errors.js';
import { MonitoringReads, monitoringRow } from '../monitoring/queries.js';
import { ENDPOINTS } from '../monitoring/view.js';
import { CHECK_FAILED, CHECK_MANUAL, CHECK_NO_EXCERPT, type CheckDoc, CHECKS, CHECKS_VIEW, flagsMatching } from './view.js';

const CHECK_SORT: Array<[string, SortDirection]> = [['checked_at', 'desc'], ['check_id', 'desc']];

export function presentCheck(row: CheckDoc) {
  // body_complete, latency_anomaly, alert_suppressed, failure_reason and region are left out of
  // the view at their default (checkViewDoc, view.ts).
  return {
    id: row.check_id,
    endpoint_id: row.endpoint_id,
    configuration_version: row.configuration_version,
    success: (row.flags & CHECK_FAILED) === 0,
    status_code: row.status_code,
    latency_ms: row.latency_ms,
    time_to_first_byte_ms: row.time_to_first_byte_ms,
    duration_ms: row.duration_ms,
    source: (row.flags & CHECK_MANUAL) !== 0 ? ('manual' as const) : ('scheduled' as const),
    body_complete: row.body_complete ?? true,
    latency_anomaly: row.latency_anomaly ?? false,
    latency_threshold_ms: row.latency_threshold_ms,
    alert_suppressed: row.alert_suppressed ?? false,
    failure_reason: row.failure_reason ?? null,
    response_excerpt_omitted: (row.flags & CHECK_NO_EXCERPT) === 0,
    region: row.region ?? DEFAULT_REGION,
    checked_at: row.checked_at,
  };
}

/** A check as the list serves it: its JSON, and its sort values for the next cursor. */
type CheckEntry = { id: string; checked_at: unknown; check_id: unknown; json: string };

function presentedCheck(row: CheckDoc): CheckEntry {
  return { id: row.id, checked_at: row.checked_at, check_id: row.check_id, json: JSON.stringify(presentCheck(row)) };
}

export interface CheckFilters {
  source?: 'scheduled' | 'manual';
  success?: boolean;
  /** Checks taken in this region only (an unknown region lists nothing). */
  region?: string;
  from?: string;
  to?: string;
}

/** Reads of the checks view: an endpoint's checks, behind the endpoint's monitoring row (a check of another team's endpoint is missing). */
@Injectable()
export class CheckReads {
  private readonly cursors: CursorCodec;
  private readonly checkLists: ViewListCache<CheckEntry>;

  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    private readonly monitoring: MonitoringReads,
  ) {
    this.cursors = new CursorCodec(platform.cursorKey);
    this.checkLists = new ViewListCache(platform.reader, CHECKS_VIEW, CHECKS, { lists: 1_000, values: 20_000 });
  }

  /**
   * A page of checks as JSON text. The page's ids are kept per query while the checks collection
   * is unchanged and read from the index again after any write; each check's presented JSON is
   * kept until a check document is replaced or deleted (recording a check only inserts), so new
   * checks show at once and known ones are not read again.
   */
  async checksJson(teamId: number, endpointId: number, filters: CheckFilters, limit: number, cursor: string | undefined, scope?: object): Promise<string> {
    const bound = { list: 'checks', team_id: teamId, endpoint_id: endpointId, ...filters };
    const after = this.cursors.decode(cursor, bound);
    // Every check of the team's endpoint is the team's: no per-row team filter in the query.
    await this.monitoring.endpointRow(teamId, endpointId, scope);
    const filter: Filter = { endpoint_id: endpointId };
    if (filters.source !== undefined || filters.success !== undefined) {
      filter.flags = { in: flagsMatching(filters.success, filters.source === undefined ? undefined : filters.source === 'manual') };
    }
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

  /**
   * The check when it is the endpoint's and the endpoint is the team's (a check's team is its
   * endpoint's: endpoints never change team); a check of another team's endpoint is missing.
   */
  async check(teamId: number, endpointId: number, checkId: number) {
    const [row, endpoint] = await Promise.all([
      this.platform.reader.get(CHECKS_VIEW, CHECKS, checkId) as Promise<CheckDoc | null>,
      monitoringRow(this.platform.reader, ENDPOINTS, endpointId),
    ]);
    if (!row || row.endpoint_id !== endpointId || !endpoint || endpoint.team_id !== teamId) throw new CheckNotFoundError(checkId);
    return presentCheck(row);
  }
}
