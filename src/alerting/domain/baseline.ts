/**
 * Robust latency baseline (api-decisions: Alerting): median + sensitivity x scaled MAD over the
 * recent successful applicable checks of an endpoint.
 *
 * Decisions:
 * - Window: the last max(min_samples, 100) samples, at most MAX_BASELINE_SAMPLES (1000). 100
 *   recent checks follow a changed normal within a few hours at common intervals while staying
 *   robust; a larger min_samples widens the window so the baseline can become ready at all.
 *   A min_samples above 1000 is treated as 1000 (the state keeps no more).
 * - Spread floor: the spread used for the threshold is max(scaled MAD, 1 ms, 5% of the median).
 *   A perfectly stable endpoint has MAD 0; without a floor its threshold would equal the
 *   median and +1 ms would be an anomaly. With the floor, a steady 100 ms endpoint at
 *   sensitivity 3 gets a threshold of 115 ms. `mad_ms` reports the raw MAD.
 * - Materiality floors: the threshold is at least median + `min_increase_ms` and median x
 *   (1 + `min_increase_percent` / 100) (per endpoint; defaults 25 ms and 25 %). A statistical
 *   outlier that is not also a material slowdown is no anomaly: a 2 ms endpoint's threshold
 *   is 27 ms, not 6 ms, so scheduling jitter on a busy machine opens no incident, while a
 *   100 ms endpoint keeps a threshold of 125 ms. Both floors are returned with the baseline.
 * - `median_ms` and `mad_ms` are exact (latencies are whole ms, so they are multiples of 0.25);
 *   `threshold_ms` is rounded to a whole ms, and a check is anomalous when strictly above it.
 */

import { materialityFloors, type LatencySettings } from '../../monitoring/domain/endpoint-configuration.js';

export const MAD_SCALE = 1.4826;
export const BASELINE_RECENT_SAMPLES = 100;
export const MAX_BASELINE_SAMPLES = 1000;
export const MIN_SPREAD_MS = 1;
export const MIN_SPREAD_RATIO = 0.05;

export interface LatencyBaseline {
  samples: number;
  median_ms: number;
  mad_ms: number;
  threshold_ms: number;
  /** checked_at of the newest sample in the window. */
  computed_at: string;
  /** The materiality floors the threshold respects (see above). */
  min_increase_ms: number;
  min_increase_percent: number;
}

/** The endpoint's latency settings the baseline reads; floors missing from an old configuration take their defaults. */
export type BaselineOptions = Pick<LatencySettings, 'latency_min_samples' | 'latency_sensitivity'> &
  Partial<Pick<LatencySettings, 'latency_min_increase_ms' | 'latency_min_increase_percent'>>;

/** Median of a non-empty list; the mean of the two middle values for an even count. */
export function median(values: ArrayLike<number>): number {
  if (values.length === 0) throw new RangeError('median of an empty list');
  // A typed array sorts numerically in native code, several times faster than a comparator.
  return medianInPlace(Float64Array.from(values).sort());
}

/** The baseline's working space: latencies are copied in, sorted, then replaced by their deviations. */
const SCRATCH = new Float64Array(MAX_BASELINE_SAMPLES);

/** Median of a sorted, non-empty typed array. */
function medianInPlace(sorted: Float64Array): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Samples a baseline needs before it exists: at least 1, at most MAX_BASELINE_SAMPLES. */
export function effectiveMinSamples(minSamples: number): number {
  return Math.min(Math.max(1, Math.floor(minSamples)), MAX_BASELINE_SAMPLES);
}

/** How many of the most recent samples the baseline is computed over. */
export function baselineWindowSize(minSamples: number): number {
  return Math.max(effectiveMinSamples(minSamples), BASELINE_RECENT_SAMPLES);
}

/**
 * The baseline over the most recent latencies (oldest first: an array, or a state's RecentValues), or null while fewer than
 * min_samples exist.
 */
export function computeBaseline(
  latencies: Pick<readonly number[], 'length' | 'at'>,
  options: BaselineOptions,
  computedAt: string,
): LatencyBaseline | null {
  if (latencies.length < effectiveMinSamples(options.latency_min_samples)) return null;
  // Computed once per recorded check: the window is sorted in a scratch buffer, not copied out.
  const size = Math.min(latencies.length, baselineWindowSize(options.latency_min_samples));
  const window = SCRATCH.subarray(0, size);
  for (let i = 0, from = latencies.length - size; i < size; i++) window[i] = latencies.at(from + i)!;
  const center = medianInPlace(window.sort());
  for (let i = 0; i < size; i++) window[i] = Math.abs(window[i] - center);
  const mad = medianInPlace(window.sort());
  const spread = Math.max(MAD_SCALE * mad, MIN_SPREAD_MS, MIN_SPREAD_RATIO * center);
  const { min_increase_ms: minIncreaseMs, min_increase_percent: minIncreasePercent } = materialityFloors(options);
  const statistical = center + options.latency_sensitivity * spread;
  const material = Math.max(center + minIncreaseMs, center * (1 + minIncreasePercent / 100));
  return {
    samples: size,
    median_ms: center,
    mad_ms: mad,
    threshold_ms: Math.round(Math.max(statistical, material)),
    computed_at: computedAt,
    min_increase_ms: minIncreaseMs,
    min_increase_percent: minIncreasePercent,
  };
}
