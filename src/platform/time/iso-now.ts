/**
 * `new Date().toISOString()`, made once per millisecond: the text changes only when the clock's
 * millisecond does, and formatting it (a C++ builtin, about half a microsecond) was the largest
 * part of the hash-chained store's own work on a single-event append (docs/benchmarks.md).
 * Date.now() is the clock `new Date()` reads, so the text is the same as before, fake timers
 * included.
 */
let lastMs = Number.NaN;
let lastText = '';

export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}
