/**
 * The figures of a range and how partial sums combine.
 *
 * Latency decision (spec, Analytics rules 3 and 4, read literally): count, uptime, average,
 * minimum and maximum latency cover ALL applicable checks in the range, failed ones included
 * (a timeout contributes the latency it measured). Only p95 is restricted to successful checks.
 */

/** Partial sums of applicable checks; what rollup rows store and what ranges add up to. */
export interface Accumulator {
  checks: number;
  failures: number;
  latency_sum: number;
  latency_min: number | null;
  latency_max: number | null;
}

export interface RangeFigures {
  checks: number;
  failures: number;
  /** Successes / checks x 100, 3 decimals; null when no applicable check. */
  uptime_percent: number | null;
  /** 2 decimals; null when no applicable check. */
  avg_latency_ms: number | null;
  min_latency_ms: number | null;
  max_latency_ms: number | null;
}

export const P95_SAMPLE_LIMIT = 10_000;

export function emptyAccumulator(): Accumulator {
  return { checks: 0, failures: 0, latency_sum: 0, latency_min: null, latency_max: null };
}

/** Adds one applicable check. Mutates and returns `acc`. */
export function addCheck(acc: Accumulator, check: { success: boolean; latency_ms: number }): Accumulator {
  return addAccumulator(acc, {
    checks: 1,
    failures: check.success ? 0 : 1,
    latency_sum: check.latency_ms,
    latency_min: check.latency_ms,
    latency_max: check.latency_ms,
  });
}

/** Adds partial sums (a rollup row or another range). Mutates and returns `acc`. */
export function addAccumulator(acc: Accumulator, part: Accumulator): Accumulator {
  if (part.checks === 0) return acc;
  acc.checks += part.checks;
  acc.failures += part.failures;
  acc.latency_sum += part.latency_sum;
  acc.latency_min = minOf(acc.latency_min, part.latency_min);
  acc.latency_max = maxOf(acc.latency_max, part.latency_max);
  return acc;
}

export function toFigures(acc: Accumulator): RangeFigures {
  if (acc.checks === 0) {
    return {
      checks: 0,
      failures: 0,
      uptime_percent: null,
      avg_latency_ms: null,
      min_latency_ms: null,
      max_latency_ms: null,
    };
  }
  return {
    checks: acc.checks,
    failures: acc.failures,
    uptime_percent: roundRatio((acc.checks - acc.failures) * 100, acc.checks, 3),
    avg_latency_ms: roundRatio(acc.latency_sum, acc.checks, 2),
    min_latency_ms: acc.latency_min,
    max_latency_ms: acc.latency_max,
  };
}

/**
 * numerator / denominator rounded half up to `decimals` places. Exact for integer inputs
 * (integer arithmetic, no binary floating point surprises such as 1.0005 -> 1); other inputs
 * fall back to ordinary floating point rounding.
 */
export function roundRatio(numerator: number, denominator: number, decimals: number): number {
  const scale = 10 ** decimals;
  if (Number.isInteger(numerator) && Number.isInteger(denominator) && numerator >= 0 && denominator > 0) {
    // floor((2 * scaled + den) / (2 * den)) is half-up rounding for non-negative values. In
    // doubles while every operand is an exact integer (below 2^53): the quotient is then
    // corrected to the exact floor. A project's thousands of rows are made this way.
    const twice = 2 * numerator * scale + denominator;
    const den = 2 * denominator;
    if (twice + den <= Number.MAX_SAFE_INTEGER) {
      let q = Math.floor(twice / den);
      if (q * den > twice) q--;
      else if ((q + 1) * den <= twice) q++;
      return q / scale;
    }
  }
  if (Number.isInteger(numerator) && Number.isInteger(denominator)) {
    const scaled = BigInt(numerator) * BigInt(scale);
    const den = BigInt(denominator);
    // floor((2 * scaled + den) / (2 * den)) is half-up rounding for non-negative values.
    const rounded = (2n * scaled + den) / (2n * den);
    return Number(rounded) / scale;
  }
  return Math.round((numerator / denominator) * scale) / scale;
}

/**
 * Nearest-rank p95 of a sample: sorted ascending, the value at index ceil(0.95 n) - 1.
 * Callers pass at most the P95_SAMPLE_LIMIT most recent successful applicable checks.
 */
export function p95(latencies: number[]): number | null {
  if (latencies.length === 0) return null;
  // A typed array sorts numbers natively (no comparator call per comparison): 10,000 of them per p95.
  const sorted = Float64Array.from(latencies).sort();
  return sorted[Math.ceil((95 * sorted.length) / 100) - 1];
}

function minOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.min(a, b);
}

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}
