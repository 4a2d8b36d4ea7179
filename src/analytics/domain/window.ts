import { isRegionName } from '../../platform/config/region.js';
import { parseRfc3339 } from '../../platform/time/rfc3339.js';

/**
 * The analytics window: which range is measured and how it is cut into series buckets.
 *
 * Precision decision: `from` and `to` keep their milliseconds (epoch milliseconds here), and
 * every range is half-open `[from, to)` at millisecond precision, the precision of `checked_at`.
 * Nothing is truncated, so a check at 12:00:00.500 is inside `from=12:00:00.400Z` and outside
 * `from=12:00:00.600Z`. `bucket_seconds` is a whole number of seconds:
 * `ceil((to - from) / 1000 / buckets)`, computed in integers. Bucket i covers
 * `[from + i * bucket_seconds, from + (i + 1) * bucket_seconds)` cut at `to`, so later buckets may
 * be shorter or lie entirely after `to` (then they are empty: null uptime and latency).
 */
export interface AnalyticsWindow {
  /** Epoch milliseconds, inclusive. */
  from: number;
  /** Epoch milliseconds, exclusive. */
  to: number;
  bucket_seconds: number;
  buckets: number;
}

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

export type WindowResult = { ok: true; window: AnalyticsWindow } | { ok: false; errors: FieldError[] };

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export const WINDOWS: Readonly<Record<string, number>> = {
  '1h': HOUR_MS,
  '6h': 6 * HOUR_MS,
  '24h': DAY_MS,
  '7d': 7 * DAY_MS,
  '30d': 30 * DAY_MS,
  '90d': 90 * DAY_MS,
};
export const DEFAULT_WINDOW = '24h';
export const DEFAULT_BUCKETS = 48;
export const MAX_BUCKETS = 200;
export const MAX_RANGE_MS = 90 * DAY_MS;

/** Query values as an HTTP layer hands them over: absent, one string, or repeated. */
export type QueryParams = Record<string, unknown>;

/**
 * Reads `window`, `from`, `to` and `buckets`, reporting every violated rule at once.
 * `now` is epoch milliseconds; it becomes `to` when the range comes from `window`.
 */
export function parseAnalyticsWindow(query: QueryParams, now: number): WindowResult {
  const errors: FieldError[] = [];
  const windowText = single(query, 'window', errors);
  const fromText = single(query, 'from', errors);
  const toText = single(query, 'to', errors);
  const bucketsText = single(query, 'buckets', errors);

  const windowMs = windowText === undefined ? WINDOWS[DEFAULT_WINDOW] : parseWindowName(windowText, errors);
  const from = fromText === undefined ? undefined : parseTimestamp('from', fromText, errors);
  const to = toText === undefined ? undefined : parseTimestamp('to', toText, errors);
  const buckets = bucketsText === undefined ? DEFAULT_BUCKETS : parseBuckets(bucketsText, errors);

  if (fromText !== undefined && toText === undefined) {
    errors.push({ field: 'to', code: 'required', message: 'to is required when from is given' });
  }
  if (toText !== undefined && fromText === undefined) {
    errors.push({ field: 'from', code: 'required', message: 'from is required when to is given' });
  }
  if (typeof from === 'number' && typeof to === 'number') checkRange(from, to, errors);

  if (errors.length > 0) return { ok: false, errors };
  const end = to ?? now;
  const start = from ?? end - (windowMs as number);
  return { ok: true, window: makeWindow(start, end, buckets as number) };
}

/** Builds the window for an already valid range (`from < to`) and bucket count. */
export function makeWindow(from: number, to: number, buckets: number): AnalyticsWindow {
  const perBucketMs = 1000 * buckets;
  const bucket_seconds = Math.floor((to - from + perBucketMs - 1) / perBucketMs);
  return { from, to, bucket_seconds, buckets };
}

/** Half-open range of bucket i, cut at `to`; empty (start >= end) when it lies after `to`. */
export function bucketRange(window: AnalyticsWindow, index: number): { start: number; end: number } {
  const start = window.from + index * window.bucket_seconds * 1000;
  return { start, end: Math.min(start + window.bucket_seconds * 1000, window.to) };
}

/**
 * `region` of the endpoint route: absent (every applicable check counts), or one probe region
 * name, 1-32 of `a-z`, `0-9` and `-` (any other value is a violated rule, added to `errors`).
 * A well-formed name no check came from is not an error: it selects no checks.
 */
export function parseRegionFilter(query: QueryParams, errors: FieldError[]): string | undefined {
  const text = single(query, 'region', errors);
  if (text === undefined || isRegionName(text)) return text;
  errors.push({ field: 'region', code: 'invalid_value', message: 'region must be a probe region name: 1 to 32 of a-z, 0-9 and -' });
  return undefined;
}

function single(query: QueryParams, field: string, errors: FieldError[]): string | undefined {
  const value = query[field];
  if (value === undefined) return undefined;
  if (typeof value === 'string') return value;
  errors.push({ field, code: 'invalid_value', message: `${field} must be given once, as a single value` });
  return undefined;
}

function parseWindowName(text: string, errors: FieldError[]): number | undefined {
  if (Object.hasOwn(WINDOWS, text)) return WINDOWS[text];
  errors.push({
    field: 'window',
    code: 'invalid_value',
    message: `window must be one of ${Object.keys(WINDOWS).join(', ')}`,
  });
  return undefined;
}

function parseTimestamp(field: string, text: string, errors: FieldError[]): number | undefined {
  const ms = parseRfc3339(text);
  if (ms !== null) return ms;
  // A `+` offset sent unencoded in a query string arrives as a space.
  const hint = / \d{2}:\d{2}$/.test(text) ? ' (encode a + offset as %2B)' : '';
  errors.push({
    field,
    code: 'invalid_value',
    message: `${field} must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z${hint}`,
  });
  return undefined;
}

function parseBuckets(text: string, errors: FieldError[]): number | undefined {
  if (!/^[0-9]+$/.test(text)) {
    errors.push({ field: 'buckets', code: 'invalid_type', message: 'buckets must be a base-10 integer' });
    return undefined;
  }
  const value = Number(text);
  if (value < 1 || value > MAX_BUCKETS) {
    errors.push({ field: 'buckets', code: 'out_of_range', message: `buckets must be between 1 and ${MAX_BUCKETS}` });
    return undefined;
  }
  return value;
}

function checkRange(from: number, to: number, errors: FieldError[]): void {
  if (from >= to) {
    errors.push({ field: 'from', code: 'conflict', message: 'from must be before to' });
  } else if (to - from > MAX_RANGE_MS) {
    errors.push({ field: 'to', code: 'out_of_range', message: 'the range from..to must be at most 90 days' });
  }
}
