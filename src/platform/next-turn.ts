/**
 * Resolves on the event loop's next turn (setImmediate: after the poll for I/O, with timers due
 * before it), so a long pass lets probes, requests and projection commits run between two of its
 * steps. Needed wherever a loop awaits SQLite: better-sqlite3 is synchronous, so each such
 * `await` resolves as a microtask and the whole loop would otherwise be one task.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
