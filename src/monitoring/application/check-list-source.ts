/**
 * Where monitoring's checks list and `GET` of one check read recorded checks from. Monitoring
 * keeps no per-check view of its own: analytics' rollups projection keeps one row per retained
 * check for its figures anyway, and implements this port beside its queries
 * (`RollupCheckList` in `analytics/views/rollups/queries.ts`); the composition root binds it (`src/app/contexts.ts`).
 * So the arrow runs analytics -> monitoring only: monitoring imports nothing of analytics.
 */

/** A recorded check as the list and `GET` present it, before the API's defaults are put back. */
export interface ListedCheck {
  check_id: number;
  endpoint_id: number;
  configuration_version: number;
  success: boolean;
  manual: boolean;
  /** The check kept a response excerpt (which the API leaves out: its `response_excerpt_omitted`). */
  has_excerpt: boolean;
  status_code: number;
  latency_ms: number;
  time_to_first_byte_ms: number;
  duration_ms: number;
  latency_threshold_ms: number | null;
  /** ISO 8601 with milliseconds, UTC (`toISOString()`). */
  checked_at: string;
  /** Present only when not the default (in brackets). [true] */
  body_complete?: boolean;
  /** [false] */
  latency_anomaly?: true;
  /** [false] */
  alert_suppressed?: true;
  /** [null] */
  failure_reason?: string;
  /** [`local`] */
  region?: string;
}

export interface CheckListFilters {
  source?: 'scheduled' | 'manual';
  success?: boolean;
  /** Checks taken in this region only (an unknown region lists nothing). */
  region?: string;
  /** Canonical ISO timestamps (`toISOString()`): checked at or after `from`, before `to`. */
  from?: string;
  to?: string;
}

export interface CheckListSource {
  /**
   * Up to `limit` checks of the endpoint matching the filters, newest first (checked_at
   * descending, then check id descending), after the keyset `after` ([checked_at, check_id] of
   * the last check of the page before). `scope`: the request, for the read store's stamps.
   */
  list(endpointId: number, filters: CheckListFilters, after: [string, number] | undefined, limit: number, scope?: object): Promise<ListedCheck[]>;
  /** The check, or null when there is none (never recorded, or summarized by retention). */
  check(checkId: number): Promise<ListedCheck | null>;
}

/** The Nest token the composition root binds the port to. */
export const CHECK_LIST_SOURCE = Symbol('CheckListSource');
