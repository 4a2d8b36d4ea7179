const CUT = Symbol('cut');

/**
 * Someone is waiting for an item the batch may already hold (a writer waiting to read its own
 * write): the batch is cut as soon as it does, whatever is left of the gathering interval.
 */
export interface BatchDemand<T> {
  /** Whether the batch as gathered so far holds an item someone waits for. */
  met(batch: readonly T[]): boolean;
  /** Calls `listener` whenever a new wait begins; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
}

/**
 * An iterator that can also hand over, synchronously, the items it already holds (the runner's
 * taps of the log, `log-fanout.ts`): `batches` takes them at once instead of one promise and
 * one race per item.
 */
export interface DrainableIterator<T> extends AsyncIterator<T> {
  /** Up to `max` items available now, in order; an empty array when none is. */
  drain(max: number): T[];
}

export interface BatchOptions<T = unknown> {
  /** At most this many events per batch. */
  max: number;
  /**
   * Under load, a new batch starts at most this often (ms): events arriving within the interval
   * are gathered into one batch instead of a batch each. The first event after a quiet spell is
   * never held back. 0 turns gathering off.
   */
  gatherMs?: number;
  /** Cuts the gathering short once the batch holds an item someone waits for. */
  demand?: BatchDemand<T>;
}

/**
 * Groups an async iterable into batches: during catch-up they fill up to `max`; when live, a
 * batch is what is already available, or, while events keep coming, what arrives within
 * `gatherMs` of the previous batch's start, unless someone waits for an item it holds (then it
 * is yielded at once). Every per-batch cost (a commit, a checkpoint) is then paid per interval
 * rather than per event, and a waiting writer never pays for the interval.
 */
export async function* batches<T>(source: AsyncIterable<T>, options: BatchOptions<T>): AsyncGenerator<T[]> {
  const { max, gatherMs = 0, demand } = options;
  const iterator = source[Symbol.asyncIterator]();
  const drain = typeof (iterator as Partial<DrainableIterator<T>>).drain === 'function' ? (iterator as DrainableIterator<T>) : null;
  let pending: Promise<IteratorResult<T>> | null = null;
  let previousStart = -Infinity;
  const nextResult = () => {
    const result = pending ?? iterator.next();
    pending = null;
    return result;
  };
  for (;;) {
    const first = await nextResult();
    if (first.done) return;
    const startedAt = performance.now();
    const batch = [first.value];
    const wait = previousStart + gatherMs - startedAt;
    previousStart = startedAt;
    // Held back only while gathering: a batch someone already waits for goes at once.
    const cut = cutAfter(demand?.met(batch) ? 0 : wait, demand ? () => demand.met(batch) : null, demand);
    try {
      while (batch.length < max) {
        // No next() is outstanding here: what the source already holds comes first, in order.
        if (drain !== null) {
          const available = drain.drain(max - batch.length);
          if (available.length > 0) {
            for (const item of available) batch.push(item);
            if (wait > 0 && demand?.met(batch)) cut.now();
            continue;
          }
        }
        pending = iterator.next();
        const next = await Promise.race([pending, cut.promise]);
        if (next === CUT) break;
        pending = null;
        if (next.done) {
          yield batch;
          return;
        }
        batch.push(next.value);
        if (wait > 0 && demand?.met(batch)) cut.now();
      }
    } finally {
      cut.cancel();
    }
    yield batch;
  }
}

/**
 * Resolves after `ms`, or at the next turn of the event loop when `ms` is not positive (or
 * `now()` is called, or a new wait begins that `met` says the batch holds).
 */
function cutAfter(ms: number, met: (() => boolean) | null, demand: BatchDemand<unknown> | undefined): { promise: Promise<typeof CUT>; now: () => void; cancel: () => void } {
  let cancel = () => {};
  let now = () => {};
  const promise = new Promise<typeof CUT>((resolve) => {
    const soon = () => {
      cancel();
      const immediate = setImmediate(() => resolve(CUT));
      cancel = () => clearImmediate(immediate);
      now = () => {};
    };
    if (ms > 0) {
      const timer = setTimeout(() => resolve(CUT), ms);
      const unsubscribe = met && demand ? demand.onChange(() => { if (met()) soon(); }) : () => {};
      cancel = () => {
        clearTimeout(timer);
        unsubscribe();
      };
      now = soon;
    } else {
      soon();
    }
  });
  return { promise, now: () => now(), cancel: () => cancel() };
}
