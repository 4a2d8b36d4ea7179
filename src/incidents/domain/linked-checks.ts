/**
 * The checks linked to an incident, as the aggregate state holds them. A week-long outage links
 * tens of thousands, one event each, and the state is folded forward one event at a time (a
 * stream cache per process): copying the list or scanning it per link would make every link cost
 * more than the last. So linking is O(1) and "already linked?" is O(1), while each state still
 * behaves as an immutable value.
 *
 * How: states folded from one another share an append-only log (`items`) and an id -> position
 * index; a state is a prefix of the log (`size`). Extending the newest prefix appends in place;
 * extending an older prefix with the event that already follows it (the same event folded twice,
 * e.g. once after an append and once when read back) reuses that position; anything else (two
 * writers raced from one state) copies the prefix, which is rare.
 */
import type { LinkedCheck } from './events.js';
import { compareTimes } from './time.js';

interface Log {
  items: LinkedCheck[];
  positions: Map<number, number>;
}

export class LinkedChecks {
  private constructor(
    private readonly log: Log,
    readonly size: number,
  ) {}

  static empty(): LinkedChecks {
    return new LinkedChecks({ items: [], positions: new Map() }, 0);
  }

  static of(checks: readonly LinkedCheck[]): LinkedChecks {
    return checks.reduce((linked, check) => linked.with(check), LinkedChecks.empty());
  }

  has(checkId: number): boolean {
    const position = this.log.positions.get(checkId);
    return position !== undefined && position < this.size;
  }

  /** This set plus `check`; the same set when the check is already linked. */
  with(check: LinkedCheck): LinkedChecks {
    if (this.has(check.id)) return this;
    const { items, positions } = this.log;
    if (items.length === this.size) {
      items.push(check);
      positions.set(check.id, this.size);
      return new LinkedChecks(this.log, this.size + 1);
    }
    if (items[this.size].id === check.id) return new LinkedChecks(this.log, this.size + 1);
    return LinkedChecks.of([...items.slice(0, this.size), check]);
  }

  /** This set plus those of `checks` not linked yet, in their order. */
  withAll(checks: readonly LinkedCheck[]): LinkedChecks {
    return checks.reduce((linked: LinkedChecks, check) => linked.with(check), this);
  }

  /** In the order they were linked. */
  toArray(): LinkedCheck[] {
    return this.log.items.slice(0, this.size);
  }

  /**
   * The newest `count` by `checked_at` (ties: id), oldest first. One pass that keeps `count`
   * candidates; checks are linked roughly in time order, so few of them move the window.
   */
  newest(count: number): LinkedCheck[] {
    const kept: LinkedCheck[] = [];
    if (count <= 0) return kept;
    for (let i = 0; i < this.size; i++) {
      const check = this.log.items[i];
      if (kept.length === count && byTime(check, kept[0]) <= 0) continue;
      let at = kept.length;
      while (at > 0 && byTime(kept[at - 1], check) > 0) at--;
      kept.splice(at, 0, check);
      if (kept.length > count) kept.shift();
    }
    return kept;
  }

  /** Serialises as the plain list (events, documents, logs). */
  toJSON(): LinkedCheck[] {
    return this.toArray();
  }
}

/** Detail order (api-decisions: Pagination): `checked_at` ascending, ties by id. */
export function byTime(a: LinkedCheck, b: LinkedCheck): number {
  return compareTimes(a.checked_at, b.checked_at) || a.id - b.id;
}
