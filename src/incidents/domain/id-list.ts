/**
 * The items of an incident state (comments, checkpoints, linked checks), each with an id. A hot
 * incident gathers thousands of comments and a week-long outage tens of thousands of checks, one
 * event each, and the state is folded forward one event at a time (a stream cache per process,
 * several commands folding the same new events at once): copying or scanning the whole list per
 * event made every command cost more than the last. So adding an item and looking one up by id
 * are O(1), while each state still behaves as an immutable value.
 *
 * How: states folded from one another share an append-only log (`items`) and an id -> position
 * index; a state is a prefix of the log (`size`). Extending the newest prefix appends in place;
 * extending an older prefix with the item that already follows it (the same event folded twice,
 * e.g. once after an append and once when read back) reuses that position; anything else (two
 * writers raced from one state) copies the prefix, which is rare. Replacing or removing an item
 * (a comment edited or deleted) copies the list: O(n), and only for those events.
 */
import type { LinkedCheck } from './events.js';
import { compareTimes } from './time.js';

interface Log<T> {
  items: T[];
  positions: Map<number, number>;
}

export class IdList<T extends { id: number }> {
  private constructor(
    private readonly log: Log<T>,
    readonly size: number,
  ) {}

  static empty<T extends { id: number }>(): IdList<T> {
    return new IdList<T>({ items: [], positions: new Map() }, 0);
  }

  static of<T extends { id: number }>(items: readonly T[]): IdList<T> {
    return IdList.empty<T>().withAll(items);
  }

  has(id: number): boolean {
    return this.positionOf(id) !== undefined;
  }

  get(id: number): T | undefined {
    const position = this.positionOf(id);
    return position === undefined ? undefined : this.log.items[position];
  }

  /** This list plus `item` at the end; the same list when an item with its id is already there. */
  with(item: T): IdList<T> {
    if (this.has(item.id)) return this;
    const { items, positions } = this.log;
    if (items.length === this.size) {
      items.push(item);
      positions.set(item.id, this.size);
      return new IdList(this.log, this.size + 1);
    }
    if (items[this.size].id === item.id) return new IdList(this.log, this.size + 1);
    return IdList.of([...items.slice(0, this.size), item]);
  }

  /** This list plus those of `items` it does not hold yet, in their order. */
  withAll(items: readonly T[]): IdList<T> {
    return items.reduce((list: IdList<T>, item) => list.with(item), this);
  }

  /** This list with the item of the same id replaced by `item` (in its place); the same list when there is none. */
  replaced(item: T): IdList<T> {
    if (!this.has(item.id)) return this;
    return IdList.of(this.toArray().map((current) => (current.id === item.id ? item : current)));
  }

  without(id: number): IdList<T> {
    if (!this.has(id)) return this;
    return IdList.of(this.toArray().filter((item) => item.id !== id));
  }

  /** In the order they were added. */
  toArray(): T[] {
    return this.log.items.slice(0, this.size);
  }

  /** Serialises as the plain list (events, documents, logs). */
  toJSON(): T[] {
    return this.toArray();
  }

  private positionOf(id: number): number | undefined {
    const position = this.log.positions.get(id);
    return position !== undefined && position < this.size ? position : undefined;
  }
}

/**
 * The newest `count` checks by `checked_at` (ties: id), oldest first. One pass that keeps `count`
 * candidates; checks are linked roughly in time order, so few of them move the window.
 */
export function newestChecks(checks: IdList<LinkedCheck>, count: number): LinkedCheck[] {
  const kept: LinkedCheck[] = [];
  if (count <= 0) return kept;
  for (const check of checks.toArray()) {
    if (kept.length === count && byTime(check, kept[0]) <= 0) continue;
    let at = kept.length;
    while (at > 0 && byTime(kept[at - 1], check) > 0) at--;
    kept.splice(at, 0, check);
    if (kept.length > count) kept.shift();
  }
  return kept;
}

/** Detail order (api-decisions: Pagination): `checked_at` ascending, ties by id. */
export function byTime(a: LinkedCheck, b: LinkedCheck): number {
  return compareTimes(a.checked_at, b.checked_at) || a.id - b.id;
}
