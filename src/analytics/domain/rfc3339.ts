/**
 * Strict RFC 3339 date-time parsing (section 5.6): `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
 * `Date.parse` is not used on its own because it accepts many non-RFC shapes ("2024-01-01",
 * "Jan 1 2024") and silently rolls over impossible dates such as February 30.
 *
 * Fractions finer than a millisecond are truncated: every stored timestamp has millisecond
 * precision, so nothing finer can change which checks fall in a range.
 * Leap seconds (`:60`) are refused: JavaScript time has no representation for them.
 */

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Epoch milliseconds of an RFC 3339 date-time, or null when the text is not one. */
export function parseRfc3339(text: string): number | null {
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (!m[8]) {
    const offsetHours = Number(m[10]);
    const offsetMins = Number(m[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const millis = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const utc = Date.parse(
    `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.${pad(millis, 3)}Z`,
  );
  return utc - offsetMinutes * 60_000;
}
