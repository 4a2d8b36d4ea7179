/**
 * Ordering of stored timestamps. Parsing is the platform's one strict RFC 3339 parser
 * (`platform/time/rfc3339.ts`); stored values are UTC with exactly three fractional digits.
 */
import { millisOf, toUtcMillis } from '../../platform/time/rfc3339.js';

export { toUtcMillis };

export function compareTimes(a: string, b: string): number {
  return millisOf(a) - millisOf(b);
}

export function earliest(a: string, b: string): string {
  return compareTimes(b, a) < 0 ? b : a;
}

export function latest(a: string, b: string): string {
  return compareTimes(b, a) > 0 ? b : a;
}
