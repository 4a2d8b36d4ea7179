/**
 * RFC 8785 JSON Canonicalization Scheme (JCS) for the values an event holds: object members
 * sorted by their names' UTF-16 code units, no whitespace, numbers in ECMAScript's shortest
 * round-trip form and strings escaped as JSON.stringify escapes them (both are what RFC 8785
 * prescribes). Values JSON cannot hold are treated as JSON.stringify treats them, so the
 * canonical form of a value equals that of the value read back from its JSON text: `toJSON`
 * is applied, undefined and functions vanish from objects and become null in arrays,
 * non-finite numbers become null.
 */
export function canonicalJson(value: unknown): string {
  const text = canonical(value, false);
  return text ?? 'null';
}

function canonical(value: unknown, inArray: boolean): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(): unknown }).toJSON();
  }
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
    case 'undefined':
    case 'function':
    case 'symbol':
      return inArray ? 'null' : undefined;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item, true)).join(',')}]`;
  let out = '';
  // Default sort compares UTF-16 code units, the order RFC 8785 section 3.2.3 asks for.
  for (const key of Object.keys(value as object).sort()) {
    const member = canonical((value as Record<string, unknown>)[key], false);
    if (member !== undefined) out += `${out === '' ? '' : ','}${quotedKey(key)}:${member}`;
  }
  return `{${out}}`;
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
