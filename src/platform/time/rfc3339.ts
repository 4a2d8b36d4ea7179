/**
 * The one RFC 3339 date-time parser (section 5.6): `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
 * Every query parameter, request body, import and CLI option that takes a timestamp reads it
 * here. Pure (no HTTP, no Nest), so domain code may import it.
 *
 * - `Date.parse` alone is not enough: it accepts non-RFC shapes ("2024-01-01", "Jan 1 2024")
 *   and rolls impossible dates over (February 30 becomes March 2). Those are refused here, as
 *   are month 13, day 0, hour 24 (`T24:00:00`), minute or second 60, and offsets past ±23:59.
 * - Leap seconds (`:60`) are refused: JavaScript time has no representation for them.
 * - Fractions finer than a millisecond are truncated: stored timestamps have millisecond
 *   precision, so nothing finer can change which records fall in a range.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Epoch milliseconds of an RFC 3339 date-time, or null when `text` is not a valid one. */
export function parseRfc3339(text: string): number | null {
  const m = DATE_TIME.exec(text);
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

/**
 * Epoch milliseconds of a timestamp the service stored itself (always RFC 3339: events'
 * `recordedAt`, view fields). Throws on anything else: such a value is a bug upstream, and
 * reading it leniently would hide it.
 */
export function millisOf(value: string): number {
  const ms = parseRfc3339(value);
  if (ms === null) throw new RangeError(`Not an RFC 3339 date-time: ${value}`);
  return ms;
}

/** The canonical stored form (UTC, milliseconds, `Z`); throws on an invalid input (validate first). */
export function toUtcMillis(value: string): string {
  const ms = parseRfc3339(value);
  if (ms === null) throw new RangeError(`Not an RFC 3339 date-time: ${value}`);
  return new Date(ms).toISOString();
}
