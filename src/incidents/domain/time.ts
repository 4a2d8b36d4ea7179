/**
 * RFC 3339 timestamps. Inputs may carry any offset (`Z`, `+02:00`, `-05:30`) and any number of
 * fractional digits; stored values are UTC with exactly three (`2026-11-21T15:04:05.123Z`).
 * Digits beyond milliseconds are truncated. Leap seconds (`:60`) are rejected: JavaScript
 * time cannot represent them.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Epoch milliseconds, or null when `value` is not a valid RFC 3339 date-time. */
export function parseRfc3339(value: string): number | null {
  const m = RFC3339.exec(value);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return null;
  const midnight = new Date(0);
  midnight.setUTCFullYear(year, month - 1, day); // unlike Date.UTC, keeps years 0-99 as written
  if (day < 1 || midnight.getUTCDate() !== day || midnight.getUTCMonth() !== month - 1) return null;
  const millis = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  let offsetMinutes = 0;
  if (!m[8]) {
    const offsetHour = Number(m[10]);
    const offsetMinute = Number(m[11]);
    if (offsetHour > 23 || offsetMinute > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHour * 60 + offsetMinute);
  }
  return midnight.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + millis - offsetMinutes * 60_000;
}

export function isRfc3339(value: unknown): value is string {
  return typeof value === 'string' && parseRfc3339(value) !== null;
}

/** The canonical stored form; throws on an invalid input (validation runs first). */
export function toUtcMillis(value: string): string {
  const ms = parseRfc3339(value);
  if (ms === null) throw new RangeError(`Not an RFC 3339 date-time: ${value}`);
  return new Date(ms).toISOString();
}

export function compareTimes(a: string, b: string): number {
  return (parseRfc3339(a) ?? Date.parse(a)) - (parseRfc3339(b) ?? Date.parse(b));
}

export function earliest(a: string, b: string): string {
  return compareTimes(b, a) < 0 ? b : a;
}

export function latest(a: string, b: string): string {
  return compareTimes(b, a) > 0 ? b : a;
}
