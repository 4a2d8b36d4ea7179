/**
 * The newest values of a sequence, at most a given number of them: how the endpoint-alerts state
 * holds its windows (the baseline's up to MAX_BASELINE_SAMPLES latencies, the 100-wide
 * availability and latency windows, the recent job ids).
 *
 * Immutable to its readers, and appended to without copying (issue 31). A state is folded anew
 * on every counted check, and copying each window into a new array then cost an endpoint that
 * had run for days 1,000 samples a check (5-8 us, and 8 KB to collect). Here windows grown from
 * one another share one backing array, each reading only its own range of it:
 * - appending to the window whose range ends where the backing does writes past every range
 *   that exists, so no window sees it;
 * - appending to any other (an older state folded again) copies its values into a new backing;
 * - the values that fell out of every window are dropped by copying the window into a new
 *   backing once they are a quarter of its most (a copy of `max` values every `max / 4` appends:
 *   the cost of an append does not grow with the endpoint's age, nor memory by more than 25 %).
 * A backing that is frozen is never written: a document's array (read store documents are
 * frozen) is wrapped as it is, and `toArray` hands a backing over by freezing it.
 */
export class RecentValues<T> implements Iterable<T> {
  private static readonly EMPTY = new RecentValues<never>(Object.freeze([]) as never[], 0, 0);

  private constructor(
    private readonly backing: T[],
    private readonly start: number,
    readonly length: number,
  ) {}

  /** No values (one shared instance: it is never written). */
  static empty<T>(): RecentValues<T> {
    return RecentValues.EMPTY;
  }

  /** The values of `values`, oldest first: a frozen array is read in place, any other copied. */
  static of<T>(values: readonly T[]): RecentValues<T> {
    if (values.length === 0) return RecentValues.empty();
    return new RecentValues(Object.isFrozen(values) ? (values as T[]) : values.slice(), 0, values.length);
  }

  /** The value at `index` (oldest first; negative from the newest), as Array's `at`. */
  at(index: number): T | undefined {
    const i = index < 0 ? index + this.length : index;
    return i >= 0 && i < this.length ? this.backing[this.start + i] : undefined;
  }

  includes(value: T): boolean {
    for (let i = this.start, end = this.start + this.length; i < end; i++) if (this.backing[i] === value) return true;
    return false;
  }

  /** The newest `max` of these values followed by `value`. */
  with(value: T, max: number): RecentValues<T> {
    const end = this.start + this.length;
    const kept = Math.min(this.length + 1, max);
    const start = end + 1 - kept;
    if (end === this.backing.length && start <= max >> 2 && !Object.isFrozen(this.backing)) {
      this.backing.push(value);
      return new RecentValues(this.backing, start, kept);
    }
    const values = new Array<T>(kept);
    for (let i = 0; i < kept - 1; i++) values[i] = this.backing[start + i];
    values[kept - 1] = value;
    return new RecentValues(values, 0, kept);
  }

  /** The values, oldest first, as a frozen array (the backing itself when it holds just them: it is then never written again). */
  toArray(): readonly T[] {
    if (this.start === 0 && this.length === this.backing.length) return Object.freeze(this.backing);
    return Object.freeze(this.backing.slice(this.start, this.start + this.length));
  }

  /** As an array when serialised (a state is never stored with these in it: `toArray` first). */
  toJSON(): readonly T[] {
    return this.toArray();
  }

  *[Symbol.iterator](): Iterator<T> {
    for (let i = this.start, end = this.start + this.length; i < end; i++) yield this.backing[i];
  }
}
