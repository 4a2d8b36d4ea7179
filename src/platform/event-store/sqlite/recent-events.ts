import type { Position, RecordedEvent } from '../event-store.port.js';
import { deepFreeze } from '../../deep-freeze.js';

/**
 * The newest stretch of the log, parsed once and shared by every live subscription of one store
 * instance. Without it each subscription (nine projections and a reactor per process) ran its
 * own query and parsed every event again on every append.
 *
 * It holds *all* events with a position in (`coveredAfter`, `end`]: a stretch is only ever
 * extended by the events that directly follow it, so a reader inside it never misses one.
 * Events are frozen because subscribers share them.
 */
export class RecentEvents {
  private events: RecordedEvent[] = [];
  private coveredAfter: Position | null = null;
  private end: Position | null = null;

  constructor(private readonly capacity: number) {}

  /** The cached events after `after` (at most `max`), or null when `after` is outside the stretch. */
  after(after: Position, max: number): RecordedEvent[] | null {
    if (this.end === null || this.coveredAfter === null || after < this.coveredAfter || after > this.end) return null;
    const start = this.indexAfter(after);
    return this.events.slice(start, start + max);
  }

  /** Position of the newest cached event; null before anything is known. */
  get newest(): Position | null {
    return this.end;
  }

  /**
   * Records that `events` are every event after `after` up to the last of them (or up to
   * `after` itself when empty). A stretch that does not join the cached one replaces it.
   */
  extend(after: Position, events: RecordedEvent[]): void {
    if (this.end !== after) this.reset(after);
    for (const event of events) this.events.push(deepFreeze(event));
    if (events.length > 0) this.end = events[events.length - 1].position;
    this.trim();
  }

  /** Forgets everything: the next reader goes to the log. */
  clear(): void {
    this.events = [];
    this.coveredAfter = null;
    this.end = null;
  }

  private reset(after: Position): void {
    this.events = [];
    this.coveredAfter = after;
    this.end = after;
  }

  /** Trims in steps of `capacity`, so an append does not copy the whole array each time. */
  private trim(): void {
    if (this.events.length <= 2 * this.capacity) return;
    const excess = this.events.length - this.capacity;
    this.coveredAfter = this.events[excess - 1].position;
    this.events = this.events.slice(excess);
  }

  /** Index of the first cached event with a position above `after` (binary search). */
  private indexAfter(after: Position): number {
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.events[middle].position <= after) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
