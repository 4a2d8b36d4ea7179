/**
 * Freezes a value and everything it holds. For values shared between readers (cached events,
 * cached query answers): a reader that tried to change one in place would fail loudly instead
 * of changing what the next reader gets.
 *
 * Arrays are walked by index and only objects are visited: view documents hold arrays of
 * numbers and booleans (an alert status about two hundred), and `Object.values` copied each one
 * and made a call per element.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i];
        if (child !== null && typeof child === 'object') deepFreeze(child);
      }
    } else {
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const child: unknown = value[key];
        if (child !== null && typeof child === 'object') deepFreeze(child);
      }
    }
  }
  return value;
}
