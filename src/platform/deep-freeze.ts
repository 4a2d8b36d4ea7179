/**
 * Freezes a value and everything it holds. For values shared between readers (cached events,
 * cached query answers): a reader that tried to change one in place would fail loudly instead
 * of changing what the next reader gets.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
