/**
 * The one canonical JSON of the service: RFC 8785 JSON Canonicalization Scheme (JCS) for the
 * values it meets (the hash chain, idempotency fingerprints, pagination cursors, audit manifests).
 * Object members sorted by their names' UTF-16 code units, no whitespace, numbers in ECMAScript's
 * shortest round-trip form and strings escaped as JSON.stringify escapes them (both what RFC 8785
 * prescribes). Values JSON cannot hold are treated as JSON.stringify treats them, so the canonical
 * form of a value equals that of the value read back from its JSON text: `toJSON` is applied,
 * undefined, functions and symbols vanish from objects and become null in arrays, non-finite
 * numbers become null, a BigInt throws.
 *
 * Iterative (an explicit stack, never recursion), so no nesting depth can overflow the call
 * stack (a request body, issue 19). Arrays of plain values, and objects whose members are already
 * in canonical order and hold plain values, are written by one native JSON.stringify call: the
 * common shapes of event data.
 */
export function canonicalJson(value: unknown): string {
  let out = '';
  const stack: Frame[] = [];
  let current = resolve(value);
  for (;;) {
    // Write `current` (resolved: toJSON applied), or open its container.
    if (current === null || typeof current !== 'object') out += leaf(current);
    else if (Array.isArray(current)) {
      if (current.every(isPlain)) out += JSON.stringify(current);
      else {
        out += '[';
        stack.push({ array: current, index: -1, record: null, keys: null, wrote: false });
      }
    } else {
      const record = current as Record<string, unknown>;
      const keys = Object.keys(record);
      const shape = shapeOf(record, keys);
      if (shape === PLAIN_IN_ORDER) out += JSON.stringify(record);
      else if (shape === PLAIN) out += plainObject(record, keys.sort());
      else {
        out += '{';
        // Default sort compares UTF-16 code units, the order RFC 8785 section 3.2.3 asks for.
        stack.push({ array: null, index: -1, record, keys: keys.sort(), wrote: false });
      }
    }
    // Move to the next value to write, closing the containers that are done.
    let next: Next = NONE;
    while (next === NONE && stack.length > 0) {
      const frame = stack[stack.length - 1];
      if (frame.array) {
        if (++frame.index < frame.array.length) {
          if (frame.index > 0) out += ',';
          next = resolve(frame.array[frame.index]);
        } else {
          out += ']';
          stack.pop();
        }
        continue;
      }
      const keys = frame.keys!;
      while (++frame.index < keys.length) {
        const member = resolve(frame.record![keys[frame.index]]);
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
        out += `${frame.wrote ? ',' : ''}${quotedKey(keys[frame.index])}:`;
        frame.wrote = true;
        next = member;
        break;
      }
      if (next === NONE) {
        out += '}';
        stack.pop();
      }
    }
    if (next === NONE) return out;
    current = next;
  }
}

interface Frame {
  array: unknown[] | null;
  index: number;
  record: Record<string, unknown> | null;
  keys: string[] | null;
  /** An object member was written (the next one needs a comma). */
  wrote: boolean;
}

const NONE: unique symbol = Symbol('none');
type Next = unknown | typeof NONE;

function resolve(value: unknown): unknown {
  return value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function' ? (value as { toJSON(): unknown }).toJSON() : value;
}

/** A value JSON.stringify writes exactly as RFC 8785 does, alone or inside an array. */
function isPlain(value: unknown): boolean {
  return value === null || typeof value !== 'object';
}

const NESTED = 0;
const PLAIN = 1;
const PLAIN_IN_ORDER = 2;

/** PLAIN: every member value is plain; PLAIN_IN_ORDER: and the members are in code-unit order, so JSON.stringify writes it canonically. */
function shapeOf(record: Record<string, unknown>, keys: string[]): number {
  let inOrder = true;
  for (let i = 0; i < keys.length; i++) {
    if (!isPlain(record[keys[i]])) return NESTED;
    if (i > 0 && !(keys[i - 1] < keys[i])) inOrder = false;
  }
  return inOrder ? PLAIN_IN_ORDER : PLAIN;
}

/** An object of plain values, its keys sorted: written in one loop, without the stack. */
function plainObject(record: Record<string, unknown>, keys: string[]): string {
  let out = '{';
  for (const key of keys) {
    const member = record[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    out += `${out.length > 1 ? ',' : ''}${quotedKey(key)}:${leaf(member)}`;
  }
  return `${out}}`;
}

function leaf(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // ECMAScript Number::toString, as JSON.stringify and RFC 8785 section 3.2.2.3 write it (-0 as 0).
      return Number.isFinite(value) ? (value === 0 ? '0' : String(value)) : 'null';
    case 'bigint':
      throw new TypeError('canonicalJson: a BigInt has no JSON form');
    default:
      // null; and undefined, a function or a symbol at the top or in an array.
      return 'null';
  }
}

/** Member names repeat from event to event: each is escaped once (a bounded cache). */
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size >= 10_000) quotedKeys.clear();
    quotedKeys.set(key, quoted);
  }
  return quoted;
}
