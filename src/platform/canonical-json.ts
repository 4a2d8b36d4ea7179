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
 * common shapes of event data. The sorted order of the last object's member names is kept, so a run
 * of objects with one key list (the events of one type) sorts and quotes its names once.
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
      const order = keyOrder(Object.keys(record));
      if (!allPlain(record, order.keys)) {
        out += '{';
        stack.push({ array: null, index: -1, record, keys: order.sorted, wrote: false });
      } else if (order.inOrder) out += JSON.stringify(record);
      else out += plainObject(record, order);
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

/** An object's member names in canonical order, and each quoted (filled on first use). */
interface KeyOrder {
  /** As Object.keys gave them. */
  keys: string[];
  /** Sorted by UTF-16 code units (JavaScript's default sort), the order RFC 8785 section 3.2.3 asks for. */
  sorted: string[];
  /** The sorted names as JSON strings, each followed by its colon. */
  quoted: string[] | null;
  /** `keys` are already sorted: JSON.stringify writes the members in canonical order. */
  inOrder: boolean;
}

/**
 * The last key list met. Event data of one type repeats its key list from event to event (and
 * from event to event of one append), so the sort and the quoting are done once for a run of them;
 * the names Object.keys gives are internalized strings, so comparing them is comparing pointers.
 */
let lastOrder: KeyOrder = { keys: [], sorted: [], quoted: [], inOrder: true };

function keyOrder(keys: string[]): KeyOrder {
  const last = lastOrder;
  if (keys.length === last.keys.length) {
    let i = 0;
    while (i < keys.length && keys[i] === last.keys[i]) i++;
    if (i === keys.length) return last;
  }
  let inOrder = true;
  for (let i = 1; i < keys.length && inOrder; i++) inOrder = keys[i - 1] < keys[i];
  return (lastOrder = { keys, sorted: inOrder ? keys : [...keys].sort(), quoted: null, inOrder });
}

/** Every member value is plain: the object holds no container to open. */
function allPlain(record: Record<string, unknown>, keys: string[]): boolean {
  for (let i = 0; i < keys.length; i++) if (!isPlain(record[keys[i]])) return false;
  return true;
}

/** An object of plain values whose names are out of order: written in one loop, without the stack. */
function plainObject(record: Record<string, unknown>, order: KeyOrder): string {
  const sorted = order.sorted;
  // Each name quoted with its colon: one piece per member name, as few strings built as can be.
  const names = (order.quoted ??= sorted.map((key) => `${quotedKey(key)}:`));
  let out = '';
  for (let i = 0; i < sorted.length; i++) {
    const member = record[sorted[i]];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    out = out === '' ? '{' + names[i] + leaf(member) : out + ',' + names[i] + leaf(member);
  }
  return out === '' ? '{}' : out + '}';
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
