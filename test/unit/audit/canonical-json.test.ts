/**
 * The canonical form the hash chain covers is RFC 8785 (JCS): an auditor recomputes it with any
 * JCS implementation, so it must match the RFC's own examples byte for byte.
 */
import { canonicalJson } from '../../../src/platform/canonical-json.js';
import { canonicalEvent, chainHash } from '../../../src/platform/event-store/chain.js';
import { createHash } from 'node:crypto';
import fc from 'fast-check';

describe('canonicalJson (RFC 8785)', () => {
  it('writes the example of RFC 8785 section 3.2.2 as the RFC does', () => {
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    );
    expect(canonicalJson(input)).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('sorts members by UTF-16 code units (RFC 8785 section 3.2.3)', () => {
    const input = { '\u20ac': 'Euro Sign', '\r': 'Carriage Return', '\ufb33': 'Hebrew Letter Dalet With Dagesh', '1': 'One', '\ud83d\ude00': 'Emoji: Grinning Face', '\u0080': 'Control', '\u00f6': 'Latin Small Letter O With Diaeresis' };
    // Values in the order written (JSON.parse would put the integer-like key "1" first).
    expect([...canonicalJson(input).matchAll(/:"([^"]*)"/g)].map((m) => m[1])).toEqual([
      'Carriage Return',
      'One',
      'Control',
      'Latin Small Letter O With Diaeresis',
      'Euro Sign',
      'Emoji: Grinning Face',
      'Hebrew Letter Dalet With Dagesh',
    ]);
  });

  it('gives a value the form of its JSON text read back (what the store keeps)', () => {
    const value = { b: [1, undefined, -0, Number.NaN], a: { when: new Date('2026-01-01T00:00:00Z'), gone: undefined } };
    expect(canonicalJson(value)).toBe(canonicalJson(JSON.parse(JSON.stringify(value))));
    expect(canonicalJson(value)).toBe('{"a":{"when":"2026-01-01T00:00:00.000Z"},"b":[1,null,0,null]}');
  });
});

describe('canonicalJson: one function for the chain, fingerprints and cursors', () => {
  it('writes every shape the same whichever path it takes (flat in order, flat unsorted, nested)', () => {
    const fn = () => 1;
    const cases: Array<[unknown, string]> = [
      [{ a: 1, b: 'x', c: null, d: undefined, e: fn }, '{"a":1,"b":"x","c":null}'],
      [{ z: -0, a: Number.POSITIVE_INFINITY, m: undefined, k: fn, b: true }, '{"a":null,"b":true,"z":0}'],
      [[1, undefined, fn, 'é', null, Number.NaN], '[1,null,null,"é",null,null]'],
      [{ b: [new Date(0), { y: 1, x: [2, { q: undefined }] }], a: {} }, '{"a":{},"b":["1970-01-01T00:00:00.000Z",{"x":[2,{}],"y":1}]}'],
      [{ toJSON: () => ({ b: 1, a: [] }) }, '{"a":[],"b":1}'],
      [{ '10': 1, '9': 2, a: 3 }, '{"10":1,"9":2,"a":3}'],
      [{ c: 1, a: undefined }, '{"c":1}'],
      [{ b: undefined, a: fn }, '{}'],
      [undefined, 'null'],
      [[], '[]'],
      [[[[]]], '[[[]]]'],
    ];
    for (const [value, text] of cases) expect(canonicalJson(value)).toBe(text);
    expect(() => canonicalJson({ n: 1n })).toThrow(TypeError);
  });
});

describe('chainHash', () => {
  it('is the hex SHA-256 of prev_hash followed by the canonical event, as docs/audit.md shows with openssl', () => {
    const event = { stream: 'incident-1', revision: 0, type: 'IncidentCreated', data: { title: 'Down', team_id: 1 }, occurred_at: '2026-01-01T00:00:00.000Z', actor: 'token:7', request_id: null };
    expect(canonicalEvent(event)).toBe('{"actor":"token:7","data":{"team_id":1,"title":"Down"},"occurred_at":"2026-01-01T00:00:00.000Z","request_id":null,"revision":0,"stream":"incident-1","type":"IncidentCreated"}');
    expect(canonicalEvent(event)).toBe(canonicalJson(event));
    const first = chainHash('', event);
    expect(first).toBe(createHash('sha256').update(canonicalEvent(event)).digest('hex'));
    const next = { ...event, revision: 1, type: 'IncidentCommented' };
    expect(chainHash(first, next)).toBe(createHash('sha256').update(first + canonicalEvent(next)).digest('hex'));
  });

  it('writes each event of a run as its own canonical form, whether its fields repeat the previous event or not', () => {
    // The string fields are quoted once for a run of equal values: a changed or emptied one must show.
    const event = fc.record({
      stream: fc.constantFrom('incident-1', 'incident-2', 'checks-"7"'),
      revision: fc.nat(3),
      type: fc.constantFrom('IncidentCreated', 'IncidentCommented'),
      data: fc.constantFrom({ b: 1, a: 'x' }, { a: 'x', b: 1 }, { b: 2, c: null }, [1, 2], null),
      occurred_at: fc.constantFrom('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z'),
      actor: fc.constantFrom('token:7', 'admin', 'é\n', null),
      request_id: fc.constantFrom('req-1', null),
    });
    fc.assert(
      fc.property(fc.array(event, { minLength: 2, maxLength: 10 }), (events) => events.every((e) => canonicalEvent(e) === canonicalJson(e))),
      { seed: 28, numRuns: 500 },
    );
  });
});
