import { StreamCache } from '../../../src/platform/es/stream-cache.js';
import type { EventStore } from '../../../src/platform/event-store/event-store.port.js';
import { trimOldest } from '../../../src/platform/lru.js';

describe('trimOldest', () => {
  it('leaves a map within its bound alone', () => {
    const map = new Map([['a', 1], ['b', 2]]);
    trimOldest(map, 2);
    expect([...map.keys()]).toEqual(['a', 'b']);
  });

  it('drops the oldest entries, a sixteenth of the bound beyond the excess, and keeps the newest', () => {
    const map = new Map<number, number>();
    for (let i = 0; i < 33; i++) map.set(i, i);
    trimOldest(map, 32);
    // One over 32: that one and 32 / 16 = 2 more go.
    expect(map.size).toBe(30);
    expect([...map.keys()]).toEqual(Array.from({ length: 30 }, (_, i) => i + 3));
  });

  it('drops only the excess under a bound below 16', () => {
    const map = new Map<number, number>();
    for (let i = 0; i < 5; i++) map.set(i, i);
    trimOldest(map, 3);
    expect([...map.keys()]).toEqual([2, 3, 4]);
  });
});

describe('StreamCache bound', () => {
  const noStore = {} as EventStore;

  it('forgets the least recently remembered streams first, never more than it holds', () => {
    const cache = new StreamCache<number>(noStore, () => 0, (n) => n + 1, 32);
    for (let i = 0; i < 32; i++) cache.remember(`s-${i}`, { state: i, revision: 0 });
    // Used again: now the newest.
    cache.remember('s-0', { state: 0, revision: 1 });
    cache.remember('s-32', { state: 32, revision: 0 });
    expect(cache.peek('s-0')).toEqual({ state: 0, revision: 1 });
    expect(cache.peek('s-32')).toEqual({ state: 32, revision: 0 });
    // s-1, s-2, s-3 were the oldest: the excess and a sixteenth of the bound.
    for (const gone of ['s-1', 's-2', 's-3']) expect(cache.peek(gone)).toBeUndefined();
    expect(cache.peek('s-4')).toEqual({ state: 4, revision: 0 });
  });
});
