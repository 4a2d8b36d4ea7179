const NOT_READY = Symbol('not-ready');

/**
 * Groups an async iterable into batches of what is already available, at most `max` each:
 * during catch-up batches fill up; when live, a lone event is not held back waiting for company.
 */
export async function* batches<T>(source: AsyncIterable<T>, max: number): AsyncGenerator<T[]> {
  const iterator = source[Symbol.asyncIterator]();
  let pending: Promise<IteratorResult<T>> | null = null;
  const nextResult = () => {
    const result = pending ?? iterator.next();
    pending = null;
    return result;
  };
  for (;;) {
    const first = await nextResult();
    if (first.done) return;
    const batch = [first.value];
    while (batch.length < max) {
      pending = iterator.next();
      const next = await Promise.race([pending, new Promise<typeof NOT_READY>((r) => setImmediate(() => r(NOT_READY)))]);
      if (next === NOT_READY) break;
      pending = null;
      if (next.done) {
        yield batch;
        return;
      }
      batch.push(next.value);
    }
    yield batch;
  }
}
