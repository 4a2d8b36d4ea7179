/**
 * The one polling helper: tests wait for something to become true on a deadline, never for a
 * fixed time. Deadlines are generous (CI is a loaded 2-core machine); a condition that holds
 * returns at once, so a generous deadline costs nothing when things work.
 */
import { inspect } from 'node:util';

export interface EventuallyOptions {
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
  /** Pause between attempts (default 50 ms). */
  intervalMs?: number;
  /** An error from `probe` that ends the wait at once (rethrown), e.g. the watched process died. */
  stopOn?: (error: unknown) => boolean;
}

/**
 * Calls `probe` until it returns a truthy value, and resolves with that value. On the deadline it
 * rejects naming `what` and showing the last value (or error) seen. A probe that throws is
 * retried like one that returns a falsy value (a server still starting refuses connections).
 */
export async function eventually<T>(what: string, probe: () => T | Promise<T>, options: EventuallyOptions | number = {}): Promise<Exclude<T, null | undefined | false | 0 | ''>> {
  const { timeoutMs = 30_000, intervalMs = 50, stopOn } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as Exclude<T, null | undefined | false | 0 | ''>;
      last = value;
    } catch (error) {
      if (stopOn?.(error)) throw error;
      last = error;
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${inspect(last, { depth: 4 })}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Reads `read()` until `done(value)` holds, and resolves with the value; on the deadline it
 * resolves with the last value read, so the test's own `expect` shows what was there instead.
 */
export async function settled<T>(read: () => Promise<T>, done: (value: T) => boolean, options: EventuallyOptions = {}): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
