/**
 * Probe regions: where a prober process probes from (PROBE_REGION). A region name is 1-32
 * characters of `a-z`, `0-9` and `-`, so it is also a valid NATS subject token and consumer name.
 * A process without PROBE_REGION is in region `local` (the embedded process, and every check
 * recorded before regions existed).
 */
export const DEFAULT_REGION = 'local';

export const REGION_NAME = /^[a-z0-9-]{1,32}$/;

export function isRegionName(value: unknown): value is string {
  return typeof value === 'string' && REGION_NAME.test(value);
}

/** The header every probe request carries, so a target can tell vantage points apart. */
export const PROBE_REGION_HEADER = 'X-Probe-Region';
