import fc from 'fast-check';
import { canonicalJson } from '../../../src/platform/canonical-json.js';

/** The straightforward recursive definition, for comparison. */
function reference(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const entries = Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${reference(record[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

describe('canonicalJson', () => {
  it('equals the recursive definition on any JSON value', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => canonicalJson(value) === reference(value)), { seed: 7, numRuns: 500 });
  });

  it('equals the recursive definition over runs of objects that repeat, permute or change their key lists', () => {
    // canonicalJson keeps the sorted order of the last key list it met: a run of events of one type
    // sorts once. Objects drawn from a few names (integer-like ones too, which JavaScript orders
    // first) repeat a list, permute it, or change it at the same length, nested or not.
    const names = fc.constantFrom('a', 'b', 'c', 'aa', '9', '10', 'é', 'B');
    const leaf = fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.constant(null), fc.constant(undefined), fc.boolean());
    const flat = fc.dictionary(names, leaf, { maxKeys: 5 });
    const nested = fc.dictionary(names, fc.oneof(leaf, flat, fc.array(flat, { maxLength: 2 })), { maxKeys: 5 });
    fc.assert(
      fc.property(fc.array(fc.oneof(flat, nested), { minLength: 2, maxLength: 12 }), (values) => values.every((value) => canonicalJson(value) === reference(value))),
      { seed: 11, numRuns: 1000 },
    );
  });

  it('sorts keys at every level, so key order does not change the fingerprint', () => {
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
    expect(canonicalJson({ b: 1, a: 2 })).toBe(canonicalJson({ a: 2, b: 1 }));
  });

  it('handles nesting far deeper than the call stack allows (iterative, issue 19)', () => {
    let value: unknown = 1;
    for (let i = 0; i < 100_000; i++) value = i % 2 ? [value] : { k: value };
    const text = canonicalJson(value);
    expect(text.startsWith('[{"k":[{"k":')).toBe(true);
    expect(text.length).toBeGreaterThan(300_000);
  });
});
