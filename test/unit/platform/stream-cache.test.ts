import type { EventStore, RecordedEvent } from '../../../src/platform/event-store/event-store.port.js';
import { StreamCache } from '../../../src/platform/es/stream-cache.js';

/** A store of one stream whose reads are counted; `throwing` makes reads throw synchronously. */
function storeOf(events: Array<Pick<RecordedEvent, 'revision' | 'data'>>, options: { throwing?: boolean } = {}) {
  const reads: number[] = [];
  const store = {
    readStream: (_stream: string, read?: { fromRevision?: number }) => {
      if (options.throwing) throw new Error('store closed');
      reads.push(read?.fromRevision ?? 0);
      return Promise.resolve(events.filter((event) => event.revision >= (read?.fromRevision ?? 0)) as RecordedEvent[]);
    },
  } as unknown as EventStore;
  return { store, reads, events };
}

const sum = (total: number, event: RecordedEvent) => total + (event.data as number);

describe('StreamCache.load', () => {
  it('folds on from the cached revision: what other writers appended, and nothing read twice', async () => {
    const { store, reads, events } = storeOf([{ revision: 0, data: 1 }, { revision: 1, data: 2 }]);
    const cache = new StreamCache<number>(store, () => 0, sum);
    expect(await cache.load('s')).toEqual({ state: 3, revision: 1 });
    const unchanged = await cache.load('s');
    expect(unchanged).toEqual({ state: 3, revision: 1 });
    events.push({ revision: 2, data: 4 });
    expect(await cache.load('s')).toEqual({ state: 7, revision: 2 });
    expect(reads).toEqual([0, 2, 2]);
  });

  it('starts from what the seed gives for a stream it does not hold', async () => {
    const { store, reads } = storeOf([{ revision: 5, data: 10 }]);
    const cache = new StreamCache<number>(store, () => 0, sum, 100, async () => ({ state: 100, revision: 4 }));
    expect(await cache.load('s')).toEqual({ state: 110, revision: 5 });
    expect(reads).toEqual([5]);
  });

  it('refuses with a rejected promise, never a throw, when the store or the initial state throws', async () => {
    const throwing = new StreamCache<number>(storeOf([], { throwing: true }).store, () => 0, sum);
    let load: Promise<unknown> | undefined;
    expect(() => (load = throwing.load('s'))).not.toThrow();
    await expect(load).rejects.toThrow('store closed');
    const badInitial = new StreamCache<number>(storeOf([]).store, () => {
      throw new Error('no initial state');
    }, sum);
    expect(() => (load = badInitial.load('s'))).not.toThrow();
    await expect(load).rejects.toThrow('no initial state');
  });
});
