/**
 * Whole non-negative numbers as self-delimiting text, for numbers packed into a view's string
 * field (issue 31: the alerting view's baseline samples, the rollups' packed hours). An alphabet
 * of 2 x `base` characters: a number is written most significant digit first, each digit but
 * its last as one of the alphabet's last `base` characters (another digit follows) and its last
 * as one of the first `base` (the number ends), so numbers follow one another without
 * separators. Each user picks printable ASCII without `"` or `\`, which JSON keeps at one byte a
 * character, and frames the numbers its own way (signs, nulls, differences).
 */
export class DigitCode {
  readonly base: number;
  /** Per character code: its digit (0 to 2 x base - 1), or -1 for a character outside the alphabet. */
  private readonly digitOf = new Int8Array(128).fill(-1);

  constructor(private readonly alphabet: string) {
    if (alphabet.length % 2 !== 0 || alphabet.length > 126) throw new Error(`A digit alphabet holds an even number of characters, at most 126, not ${alphabet.length}`);
    this.base = alphabet.length / 2;
    for (let digit = 0; digit < alphabet.length; digit++) this.digitOf[alphabet.charCodeAt(digit)] = digit;
  }

  /** The digits of `value`, a safe integer of at least 0. */
  write(value: number): string {
    const { alphabet, base } = this;
    let text = alphabet[value % base];
    for (let rest = Math.floor(value / base); rest > 0; rest = Math.floor(rest / base)) text = alphabet[base + (rest % base)] + text;
    return text;
  }

  /**
   * The number whose first digit is at `cursor.at` of `text`, moving `cursor.at` past it. NaN when
   * a character on the way is not a digit (`cursor.at` is then that character's index) or the text
   * ends inside the number (`cursor.at` is then the text's length).
   */
  read(text: string, cursor: { at: number }): number {
    const { base } = this;
    let value = 0;
    for (;;) {
      const code = text.charCodeAt(cursor.at);
      const digit = code < 128 ? this.digitOf[code] : -1;
      if (digit < 0) return NaN;
      cursor.at++;
      if (digit < base) return value * base + digit;
      value = value * base + digit - base;
    }
  }
}
