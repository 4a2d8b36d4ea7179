/**
 * Coded records (issue 31): the values of a packed record whose values are all scalars (a probed
 * check's) as one short text of 7-bit characters, stored in the event log's TEXT `data` column
 * after the mark U+0003 (or, for shapes 1-20, after a mark that names the shape, the shape's
 * own value left out: sqlite-event-store.ts).
 *
 * Why a code of our own and not a well-kept library such as msgpackr (MessagePack is as small:
 * 15 bytes for a probed check's `[2,true,200,17,79,"ok",3,1,1,1,69]`): a binary format must be
 * stored as a BLOB, and better-sqlite3 hands every BLOB out as a new Buffer, about 1.2 us more
 * per row read than a string of the same length (1.86 against 0.63 us a row, raw better-sqlite3,
 * pages of 250). With msgpackr in a BLOB, reading the log took 4.7 us an event against 3.1 with
 * packed JSON (both builds in one process, alternating); with this text, 3.8 against 4.1 (a
 * busier run). A library writing only 7-bit text would do; none in our dependencies does.
 * Strings are kept as they are (their characters follow their length), so only their length is
 * coded, and a property test (test/unit/platform/record-codec.property.test.ts) holds every
 * value to JSON's reading of it.
 *
 * Each value starts with one character (U+0001-U+007F; U+0000 never appears outside a string):
 *
 * | first character | value |
 * |---|---|
 * | U+0030-U+007F | the integer 0-79 (the character minus U+0030) |
 * | U+002D, U+002E, U+002F | true, false, null |
 * | U+001B-U+002C | the integer 80-2,365: 80 + 127 * (character - U+001B) + the next character's digit |
 * | U+0013-U+001A | a negative integer: -1 minus the number of the next 1-8 digits (character - U+0012) |
 * | U+000B-U+0012 | a string of 0-7 UTF-16 units (character - U+000B), its units next |
 * | U+000A | a string: its length as an integer value, then its units |
 * | U+0009 | any other number: the length of its text as one character, then `String(number)` |
 * | U+0001-U+0008 | a non-negative integer: the number of the next 1-8 digits |
 *
 * A digit is a character U+0001-U+007F standing for 0-126 (base 127, most significant first).
 * Every value reads back as JSON.parse would give it from the record's JSON text, and its JSON is
 * the same byte for byte (-0 reads as 0, as in JSON); values that could not (NaN, infinities,
 * strings with a lone surrogate, which UTF-8 cannot hold, or U+0000, which SQLite's text
 * functions stop at; objects, arrays) make `encodeRecord` return null.
 */

/** `[shape, value, ...]` as a coded record's characters (without the mark), or null when a value cannot be coded. */
export function encodeRecord(values: readonly unknown[]): string | null {
  let out = '';
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    switch (typeof value) {
      case 'number':
        if (Number.isSafeInteger(value)) out += value >= 0 ? unsigned(value) : negative(value);
        else if (Number.isFinite(value)) {
          const text = String(value);
          out += NUMBER + String.fromCharCode(text.length) + text;
        } else return null;
        break;
      case 'boolean':
        out += value ? TRUE : FALSE;
        break;
      case 'string':
        if (UNCODABLE.test(value)) return null;
        out += (value.length < 8 ? String.fromCharCode(SHORT_STRING + value.length) : STRING + unsigned(value.length)) + value;
        break;
      default:
        if (value !== null) return null;
        out += NULL;
    }
  }
  return out;
}

/** The values of the coded record in `text` from `start` (the character after the mark). */
export function decodeRecord(text: string, start: number): unknown[] {
  const values: unknown[] = [];
  let at = start;
  /** The number of `n` digits from `at`. */
  const digits = (n: number): number => {
    if (at + n > text.length) throw corrupt(text);
    let value = 0;
    for (const end = at + n; at < end; at++) {
      const c = text.charCodeAt(at);
      if (c < 1 || c > 0x7f) throw corrupt(text);
      value = value * 127 + (c - 1);
    }
    return value;
  };
  /** The non-negative integer whose first character is `c`, or -1 when `c` does not start one. */
  const unsignedFrom = (c: number): number => {
    if (c >= SMALL && c <= 0x7f) return c - SMALL;
    if (c >= TWO_CHAR && c < TWO_CHAR + 18) return 80 + 127 * (c - TWO_CHAR) + digits(1);
    if (c >= 1 && c <= 8) return digits(c);
    return -1;
  };
  const units = (length: number): string => {
    if (length < 0 || at + length > text.length) throw corrupt(text);
    const value = text.slice(at, at + length);
    at += length;
    return value;
  };
  while (at < text.length) {
    const c = text.charCodeAt(at++);
    const integer = unsignedFrom(c);
    if (integer >= 0) values.push(integer);
    else if (c === 0x2d || c === 0x2e || c === 0x2f) values.push(c === 0x2d ? true : c === 0x2e ? false : null);
    else if (c >= NEGATIVE && c < NEGATIVE + 8) values.push(-1 - digits(c - NEGATIVE + 1));
    else if (c >= SHORT_STRING && c < SHORT_STRING + 8) values.push(units(c - SHORT_STRING));
    else if (c === 0x0a) values.push(units(unsignedFrom(text.charCodeAt(at++))));
    else if (c === 0x09) {
      const length = at < text.length ? text.charCodeAt(at++) : 0;
      const number = Number(units(length > 0 ? length : -1));
      if (!Number.isFinite(number)) throw corrupt(text);
      values.push(number);
    } else throw corrupt(text);
  }
  return values;
}

const SMALL = 0x30;
const TRUE = '\u002d';
const FALSE = '\u002e';
const NULL = '\u002f';
const TWO_CHAR = 0x1b;
const NEGATIVE = 0x13;
const SHORT_STRING = 0x0b;
const STRING = '\u000a';
const NUMBER = '\u0009';

/** In unicode mode a surrogate pair is one code point: this matches a surrogate without its partner, or U+0000. */
const UNCODABLE = /\p{Surrogate}|\u0000/u;

/** A non-negative safe integer's characters. */
function unsigned(value: number): string {
  if (value < 80) return String.fromCharCode(SMALL + value);
  if (value < 80 + 127 * 18) {
    const rest = value - 80;
    return String.fromCharCode(TWO_CHAR + Math.floor(rest / 127), 1 + (rest % 127));
  }
  const coded = digitChars(value);
  return String.fromCharCode(coded.length) + coded;
}

/** A negative safe integer's characters. */
function negative(value: number): string {
  const coded = digitChars(-1 - value);
  return String.fromCharCode(NEGATIVE - 1 + coded.length) + coded;
}

/** Base-127 digits, most significant first (1-8 of them for a safe integer). */
function digitChars(value: number): string {
  let out = '';
  do {
    out = String.fromCharCode(1 + (value % 127)) + out;
    value = Math.floor(value / 127);
  } while (value > 0);
  return out;
}

function corrupt(text: string): Error {
  return new Error(`The event log holds a coded record it cannot read (${JSON.stringify(text.slice(0, 40))})`);
}
