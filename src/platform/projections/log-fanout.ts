import type { EventStore, Position, RecordedEvent } from '../event-store/event-store.port.js';
import type { DrainableIterator } from './batches.js';
import { nextTurn } from '../next-turn.js';

/** What a tap tells its processor about each event it reads, in log order. */
export interface TapReport {
  /** The event is queued for the processor (it has a handler for its type). */
  handed(position: Position): void;
  /** The event is of a type the processor takes no handler for: passed over, never queued. */
  passed(position: Position): void;
}

export interface TapOptions {
  /** Exclusive: the tap yields events after this position (null: from the beginning). */
  after: Position | null;
  /** Whether the processor takes events of this type. */
  takes(type: string): boolean;
  report: TapReport;
}

/** One processor's events: those of its types, in log order; `close()` ends the iteration. */
export interface LogTap extends AsyncIterable<RecordedEvent> {
  close(): Promise<void>;
}

export interface LogFanoutOptions {
  /** Events per page a tap reads while it catches up on its own. */
  pageSize: number;
  /** A live tap holding more events than this, unconsumed, leaves the shared read and catches up on its own. */
  maxQueued?: number;
}

/** `a` is at or past `b` in the log (null: before the first event). */
function atOrPast(a: Position | null, b: Position | null): boolean {
  return b === null || (a !== null && a >= b);
}

/**
 * One read of the log for every processor of a process (the runner's). A single subscription
 * (`EventStore.subscribeToAll`, so any adapter) reads each new event once; the reader hands it
 * to each tap that takes its type and reports it passed over to the others, synchronously: a
 * processor is never woken, nor given a promise, for an event it has no handler for. Without
 * it each processor (a dozen) had a subscription of its own and every appended event went
 * through each one's generators, about ten async steps per append.
 *
 * A tap behind the shared read (a processor starting from its checkpoint, one far behind, one
 * whose queue overflowed because it applies slower than the log grows) catches up on its own,
 * a page at a time (`readAll`), and joins the shared read once its page reaches where that read
 * has got to; events the shared read hands it that it has already read are skipped. So a
 * processor catching up holds back nobody live, and each tap keeps its own position.
 *
 * The shared subscription starts at the position of the first tap that reaches the head and is
 * closed when no tap is joined. Its failure fails every joined tap (their processors start
 * again from their checkpoints); a catch-up read's failure fails its tap only.
 */
export class LogFanout {
  private reader: SharedRead | null = null;
  private readonly maxQueued: number;

  constructor(
    private readonly events: EventStore,
    private readonly options: LogFanoutOptions,
  ) {
    this.maxQueued = options.maxQueued ?? Math.max(2 * options.pageSize, 1000);
  }

  open(options: TapOptions): LogTap {
    return new Tap(this, options, this.maxQueued);
  }

  /** Events per catch-up page. */
  get pageSize(): number {
    return this.options.pageSize;
  }

  /** @internal Where the shared read has got to (null: none runs, or it has read nothing yet from the beginning). */
  get dispatched(): Position | null {
    return this.reader?.dispatched ?? null;
  }

  /** @internal Catch-up page for a tap. */
  readPage(after: Position | null): Promise<RecordedEvent[]> {
    return this.events.readAll({ after, maxCount: this.options.pageSize });
  }

  /**
   * @internal Joins the tap to the shared read when nothing lies between its position and
   * where the read has got to (starting the read at the tap's position when none runs).
   */
  join(tap: Tap): boolean {
    if (this.reader === null) {
      this.reader = new SharedRead(this.events, tap.cursor, (read) => {
        if (this.reader === read) this.reader = null;
      });
    }
    if (!atOrPast(tap.cursor, this.reader.dispatched)) return false;
    this.reader.taps.add(tap);
    return true;
  }

  /** @internal The tap no longer reads through the shared read. */
  leave(tap: Tap): void {
    const read = this.reader;
    if (read === null || !read.taps.delete(tap) || read.taps.size > 0) return;
    this.reader = null;
    read.close();
  }
}

/** The shared subscription and the taps it feeds. */
class SharedRead {
  /** Position of the last event handed to the taps (where the subscription started, before any). */
  dispatched: Position | null;
  readonly taps = new Set<Tap>();
  private readonly subscription;
  private closed = false;

  constructor(
    events: EventStore,
    after: Position | null,
    private readonly onEnd: (read: SharedRead) => void,
  ) {
    this.dispatched = after;
    this.subscription = events.subscribeToAll({ after });
    void this.run();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.subscription.close().catch(() => undefined);
  }

  private async run(): Promise<void> {
    try {
      for await (const event of this.subscription) {
        if (this.closed) break;
        this.dispatched = event.position;
        for (const tap of this.taps) tap.offer(event);
      }
    } catch (error) {
      this.closed = true;
      this.onEnd(this);
      const taps = [...this.taps];
      this.taps.clear();
      for (const tap of taps) tap.fail(error);
      return;
    }
    this.closed = true;
    this.onEnd(this);
    // Ended without close() (a store closing under it): the taps read on by themselves.
    const taps = [...this.taps];
    this.taps.clear();
    for (const tap of taps) tap.detached();
  }
}

/** One processor's queue of events: filled by the shared read while joined, by its own pages while catching up. */
class Tap implements LogTap {
  /** Position of the last event this tap read (queued or passed over). */
  cursor: Position | null;
  private readonly queue: RecordedEvent[] = [];
  private head = 0;
  private joined = false;
  private closed = false;
  private error: unknown = null;
  /** Calls of next() not answered yet, oldest first (the iterator protocol lets a caller make several). */
  private readonly waiting: Array<{ resolve: (result: IteratorResult<RecordedEvent>) => void; reject: (error: unknown) => void }> = [];
  private reading = false;

  constructor(
    private readonly fanout: LogFanout,
    private readonly options: TapOptions,
    private readonly maxQueued: number,
  ) {
    this.cursor = options.after;
  }

  [Symbol.asyncIterator](): DrainableIterator<RecordedEvent> {
    return {
      next: () => this.next(),
      drain: (max) => this.drain(max),
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.head = 0;
    if (this.joined) {
      this.joined = false;
      this.fanout.leave(this);
    }
    for (const waiter of this.waiting.splice(0)) waiter.resolve({ value: undefined, done: true });
  }

  /** The shared read's next event (called while joined, in log order). */
  offer(event: RecordedEvent): void {
    if (!this.take(event)) return;
    if (this.queue.length - this.head > this.maxQueued) {
      // Applied slower than the log grows: read on from here by itself, so the queue stays bounded.
      this.joined = false;
      this.fanout.leave(this);
    }
  }

  /** The shared read failed: the processor sees the error (and starts again from its checkpoint). */
  fail(error: unknown): void {
    this.joined = false;
    this.error = error;
    // Queued events are handed out first (the queue is empty whenever a call waits).
    for (const waiter of this.waiting.splice(0)) waiter.reject(error);
  }

  /** The shared read ended under this tap: it reads on by itself. */
  detached(): void {
    this.joined = false;
    if (this.waiting.length > 0) this.catchUp();
  }

  private next(): Promise<IteratorResult<RecordedEvent>> {
    if (this.head < this.queue.length) {
      const value = this.queue[this.head++];
      this.compact();
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    if (this.error !== null) return Promise.reject(this.error);
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.joined) this.catchUp();
    });
  }

  /** Drops the taken events from the front of the queue: at once when it is empty, else once they are many. */
  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /** The queued events, up to `max`, taken at once (see `batches`). */
  private drain(max: number): RecordedEvent[] {
    const available = this.queue.length - this.head;
    if (available === 0) return [];
    const end = this.head + Math.min(max, available);
    const out = this.queue.slice(this.head, end);
    this.head = end;
    this.compact();
    return out;
  }

  /** Queues or passes over one event; false when this tap had read it already. */
  private take(event: RecordedEvent): boolean {
    if (this.cursor !== null && event.position <= this.cursor) return false;
    this.cursor = event.position;
    if (!this.options.takes(event.type)) {
      this.options.report.passed(event.position);
      return true;
    }
    this.options.report.handed(event.position);
    this.queue.push(event);
    const waiter = this.waiting.shift();
    if (waiter) {
      waiter.resolve({ value: this.queue[this.head++], done: false });
      this.compact();
    }
    return true;
  }

  /** Reads pages from the cursor until one yields an event for the processor or the tap joins the shared read. */
  private catchUp(): void {
    if (this.reading) return;
    this.reading = true;
    this.readPages()
      .catch((error: unknown) => {
        if (!this.closed) this.fail(error);
      })
      .finally(() => {
        this.reading = false;
        // A consumer that drained the queue in one step may have asked again before this read
        // ended (its next() found `reading` still set): read on for it.
        if (this.mustReadOn()) this.catchUp();
      });
  }

  /** Someone waits for an event and only this tap's own pages can bring it. */
  private mustReadOn(): boolean {
    return this.waiting.length > 0 && !this.joined && !this.closed && this.error === null;
  }

  private async readPages(): Promise<void> {
    let pages = 0;
    while (this.mustReadOn()) {
      // A long stretch of events this processor passes over: a turn of the event loop between pages.
      if (pages++ > 0) await nextTurn();
      if (this.closed) return;
      const before = this.fanout.dispatched;
      const page = await this.fanout.readPage(this.cursor);
      if (this.closed) return;
      for (const event of page) this.take(event);
      if (page.length >= this.fanout.pageSize) continue;
      // A short page reached the head as the store saw it. The shared read had handed out
      // `before` when the page was asked for, so a position up to it that the page lacks was
      // removed meanwhile (retention): passed over, or the tap could never join.
      if (before !== null && !atOrPast(this.cursor, before)) {
        this.cursor = before;
        this.options.report.passed(before);
      }
      if (this.fanout.join(this)) {
        this.joined = true;
        return;
      }
    }
  }
}
