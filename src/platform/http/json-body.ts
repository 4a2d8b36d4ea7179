/**
 * Reading JSON request bodies without giving hostile input a way to hurt the process: nesting
 * is bounded before parsing (a document 10,000 levels deep would overflow the stack of every
 * recursive walk after it: validation, fingerprints, size checks), and `__proto__` keys and
 * `constructor.prototype` chains are refused (prototype poisoning of whatever copies the body).
 */

/** The deepest nesting of arrays and objects a request body may have. */
export const MAX_JSON_DEPTH = 64;

/** True when `text` nests arrays/objects deeper than `max`; brackets inside strings do not count. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

export type JsonBodyResult = { ok: true; value: unknown } | { ok: false; reason: 'too_deep' | 'invalid' | 'forbidden_key' };

function hasForbiddenKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      for (const item of current) stack.push(item);
      continue;
    }
    for (const key of Object.keys(current)) {
      const child = (current as Record<string, unknown>)[key];
      if (key === '__proto__') return true;
      if (key === 'constructor' && child !== null && typeof child === 'object' && Object.hasOwn(child, 'prototype')) return true;
      stack.push(child);
    }
  }
  return false;
}

/** Parses a request body: bounded depth first, then JSON, then no prototype-poisoning keys. */
export function parseJsonBody(text: string, maxDepth = MAX_JSON_DEPTH): JsonBodyResult {
  if (jsonDepthExceeds(text, maxDepth)) return { ok: false, reason: 'too_deep' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  // JSON.parse makes `__proto__` an own key (it never sets the prototype), so this finds it.
  if (text.includes('__proto__') || text.includes('prototype')) {
    if (hasForbiddenKey(value)) return { ok: false, reason: 'forbidden_key' };
  }
  return { ok: true, value };
}
