import { Inject, Injectable } from '@nestjs/common';
import { DEFAULT_REGION } from '../../platform/config/region.js';
import { CursorCodec } from '../../platform/http/pagination.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import type { Doc, SortDirection } from '../../platform/read-store/read-store.port.js';
import { CHECK_LIST_SOURCE, type CheckListFilters, type CheckListSource, type ListedCheck } from './check-list-source.js';
import { CheckNotFoundError } from '../domain/errors.js';
import { MonitoringReads, monitoringRow } from '../views/monitoring/queries.js';
import { ENDPOINTS } from '../views/monitoring/view.js';

/** The list's order, and the fields its cursor keeps (checked_at as ISO text, then the id). */
const CHECK_SORT: Array<[string, SortDirection]> = [['checked_at', 'desc'], ['check_id', 'desc']];

export function presentCheck(check: ListedCheck) {
  // body_complete, latency_anomaly, alert_suppressed, failure_reason and region are given only
  // when they differ from their default (ListedCheck).
  return {
    id: check.check_id,
    endpoint_id: check.endpoint_id,
    configuration_version: check.configuration_version,
    success: check.success,
    status_code: check.status_code,
    latency_ms: check.latency_ms,
    time_to_first_byte_ms: check.time_to_first_byte_ms,
    duration_ms: check.duration_ms,
    source: check.manual ? ('manual' as const) : ('scheduled' as const),
    body_complete: check.body_complete ?? true,
    latency_anomaly: check.latency_anomaly ?? false,
    latency_threshold_ms: check.latency_threshold_ms,
    alert_suppressed: check.alert_suppressed ?? false,
    failure_reason: check.failure_reason ?? null,
    response_excerpt_omitted: check.has_excerpt,
    region: check.region ?? DEFAULT_REGION,
    checked_at: check.checked_at,
  };
}

export type CheckFilters = CheckListFilters;

/**
 * The checks of an endpoint, behind the endpoint's monitoring row (a check of another team's
 * endpoint is missing), read through the `CheckListSource` port (bound by the composition root).
 */
@Injectable()
export class CheckReads {
  private readonly cursors: CursorCodec;
  /** Each check's presented JSON, made once per check object the source hands out (it keeps them while unchanged). */
  private readonly json = new WeakMap<ListedCheck, string>();

  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    private readonly monitoring: MonitoringReads,
    @Inject(CHECK_LIST_SOURCE) private readonly source: CheckListSource,
  ) {
    this.cursors = new CursorCodec(platform.cursorKey);
  }

  /** A page of checks as JSON text. */
  async checksJson(teamId: number, endpointId: number, filters: CheckFilters, limit: number, cursor: string | undefined, scope?: object): Promise<string> {
    const bound = { list: 'checks', team_id: teamId, endpoint_id: endpointId, ...filters };
    const after = this.cursors.decode(cursor, bound) as [string, number] | undefined;
    // Every check of the team's endpoint is the team's: no per-row team filter in the query.
    await this.monitoring.endpointRow(teamId, endpointId, scope);
    const checks = await this.source.list(endpointId, filters, after, limit + 1, scope);
    const page = this.cursors.page(checks as unknown as Doc[], limit, CHECK_SORT, bound);
    return `{"data":[${(page.rows as unknown as ListedCheck[]).map((check) => this.jsonOf(check)).join(',')}],"pagination":${JSON.stringify(page.pagination)}}`;
  }

  private jsonOf(check: ListedCheck): string {
    let json = this.json.get(check);
    if (json === undefined) this.json.set(check, (json = JSON.stringify(presentCheck(check))));
    return json;
  }

  /**
   * The check when it is the endpoint's and the endpoint is the team's (a check's team is its
   * endpoint's: endpoints never change team); a check of another team's endpoint is missing.
   */
  async check(teamId: number, endpointId: number, checkId: number) {
    const [check, endpoint] = await Promise.all([this.source.check(checkId), monitoringRow(this.platform.reader, ENDPOINTS, endpointId)]);
    if (!check || check.endpoint_id !== endpointId || !endpoint || endpoint.team_id !== teamId) throw new CheckNotFoundError(checkId);
    return presentCheck(check);
  }
}
