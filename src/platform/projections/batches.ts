const CUT = Symbol('cut');

export interface BatchOptions {
  /** At most this many events per batch. */
  max: number;
  /**
   * Under load, a new batch starts at most this often (ms): events arriving within the interval
   * are gathered into one batch instead of a batch each. The first event after a quiet spell is
   * never held back. 0 turns gathering off.
   */
  gatherMs?: number;
}

/**
 * Groups an async iterable into batches: during catch-up they fill up to `max`; when live, a
 * batch is what is already available, or, while events keep coming, what arrives within
 * `gatherMs` of the previous batch's start. Every per-batch cost (a commit, a checkpoint) is then
 * paid per interval rather than per event.
 */
export async function* batches<T>(source: AsyncIterable<T>, options: BatchOptions): AsyncGenerator<T[]> {
  const { max, gatherMs = 0 } = options;
  const iterator = source[Symbol.asyncIterator]();
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
    const cut = cutAfter(previousStart + gatherMs - startedAt);
    previousStart = startedAt;
    try {
      while (batch.length < max) {
        pending = iterator.next();
        const next = await Promise.race([pending, cut.promise]);
        if (next === CUT) break;
        pending = null;
        if (next.done) {
          yield batch;
          return;
        }
        batch.push(next.value);
      }
    } finally {
      cut.cancel();
    }
    yield batch;
  }
}

/** Resolves after `ms`, or at the next turn of the event loop when `ms` is not positive. */
function cutAfter(ms: number): { promise: Promise<typeof CUT>; cancel: () => void } {
  let cancel = () => {};
  const promise = new Promise<typeof CUT>((resolve) => {
    if (ms > 0) {
      const timer = setTimeout(() => resolve(CUT), ms);
      cancel = () => clearTimeout(timer);
    } else {
      const immediate = setImmediate(() => resolve(CUT));
      cancel = () => clearImmediate(immediate);
    }
  });
  return { promise, cancel };
}
