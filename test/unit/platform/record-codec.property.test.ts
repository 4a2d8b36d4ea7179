/**
 * The event log's coded records (src/platform/event-store/sqlite/record-codec.ts): any list of
 * scalars the code accepts reads back as JSON.parse would give it from the list's JSON, so the
 * event it belongs to reads back byte for byte; anything else is left to the packed JSON form.
 */
import fc from 'fast-check';
import { decodeRecord, encodeRecord } from '../../../src/platform/event-store/sqlite/record-codec.js';

/** Scalars at every edge of the code's forms, and anywhere in between. */
const scalar = fc.oneof(
  fc.constantFrom(null, true, false, 0, -0, 79, 80, 2365, 2366, 16128, 16129, -1, -127, -128, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 2 ** 53, 1e21, 5e-324),
  fc.integer({ min: -3000, max: 3000 }),
  fc.maxSafeInteger(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.string({ unit: 'grapheme', minLength: 7, maxLength: 200 }),
  // Any UTF-16 units: lone surrogates too.
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 8 }).map((units) => String.fromCharCode(...units)),
);

describe('coded records', () => {
  it('read back every list of scalars as its JSON would, byte for byte', () => {
    fc.assert(
      fc.property(fc.array(scalar, { maxLength: 16 }), (values) => {
        const coded = encodeRecord(values);
        const json = JSON.stringify(values);
        // Only strings with a lone surrogate or U+0000 are left to JSON.
        if (coded === null) return values.some((v) => typeof v === 'string' && /\p{Surrogate}|\u0000/u.test(v));
        const decoded = decodeRecord(`\u0003${coded}`, 1);
        expect(JSON.stringify(decoded)).toBe(json);
        expect(decoded).toEqual(JSON.parse(json));
        return true;
      }),
      { numRuns: 2000 },
    );
  });

  it('leave to JSON what they could not give back the same', () => {
    for (const value of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 'a\ud800', '\udc00b', 'a\u0000', {}, [], undefined, 1n]) {
      expect(encodeRecord([1, value])).toBeNull();
    }
  });

  it("code a probed check's values in 14 characters", () => {
    expect(encodeRecord([2, true, 200, 17, 79, 'ok', 3, 1, 1, 1, 69])).toHaveLength(14);
  });
});
