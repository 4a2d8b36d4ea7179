import { DerivedViewCache } from '../../../src/platform/projections/view-cache.js';
import type { ViewReader } from '../../../src/platform/projections/views.js';

/** A reader whose collections' `changed` stamps the test moves by hand. */
function fakeReader(changed: Record<string, number>): ViewReader {
  return {
    changedStamps: async (sources: Array<{ projection: string; collection: string }>) =>
      sources.map(({ projection, collection }) => `${projection}.${collection}@${changed[collection]}`),
  } as unknown as ViewReader;
}

describe('DerivedViewCache', () => {
  const T = 1_000_000;

  test('served while every source is unchanged and the value exact; a write or the clock reloads', async () => {
    const changed = { pages: 1, busy: 1 };
    const cache = new DerivedViewCache<number>(fakeReader(changed), [{ projection: 'p', collection: 'pages' }, { projection: 'p', collection: 'busy', lagMs: 2000 }]);
    let loads = 0;
    const load = async () => ({ value: ++loads, validUntil: T + 10_000 });
    expect(await cache.get('k', load, undefined, T)).toBe(1);
    expect(await cache.get('k', load, undefined, T + 5)).toBe(1);
    changed.pages = 2;
    expect(await cache.get('k', load, undefined, T + 10)).toBe(2);
    expect(await cache.get('k', load, undefined, T + 10_000)).toBe(3);
  });

  test('a source with a lag: its writes are served stale until the lag since loading has passed', async () => {
    const changed = { pages: 1, busy: 1 };
    const cache = new DerivedViewCache<number>(fakeReader(changed), [{ projection: 'p', collection: 'pages' }, { projection: 'p', collection: 'busy', lagMs: 2000 }]);
    let loads = 0;
    const load = async () => ({ value: ++loads, validUntil: Infinity });
    await cache.get('k', load, undefined, T);
    changed.busy = 2;
    expect(await cache.get('k', load, undefined, T + 1999)).toBe(1);
    expect(await cache.get('k', load, undefined, T + 2000)).toBe(2);
    changed.busy = 3;
    changed.pages = 2;
    expect(await cache.get('k', load, undefined, T + 2001)).toBe(3);
  });

  test('a value derived from one served within its lag expires with that lag, not at the next write', async () => {
    const changed = { pages: 1, busy: 1 };
    const sources = [{ projection: 'p', collection: 'pages' }, { projection: 'p', collection: 'busy', lagMs: 2000 }];
    const models = new DerivedViewCache<number>(fakeReader(changed), sources);
    const pages = new DerivedViewCache<string>(fakeReader(changed), sources);
    let loads = 0;
    const loadModel = async () => ({ value: ++loads, validUntil: T + 60_000 });
    const renderAt = (now: number) =>
      pages.get('page', async () => {
        const model = (await models.getServed('model', loadModel, undefined, now))!;
        return { value: `model ${model.value}`, validUntil: model.until };
      }, undefined, now);
    expect(await models.getServed('model', loadModel, undefined, T)).toEqual({ value: 1, until: T + 60_000 });
    changed.busy = 2;
    // Rendered first after the write, from the model within its lag: kept only until the lag's end.
    expect(await models.getServed('model', loadModel, undefined, T + 500)).toEqual({ value: 1, until: T + 2000 });
    expect(await renderAt(T + 500)).toBe('model 1');
    expect(await renderAt(T + 1999)).toBe('model 1');
    expect(await renderAt(T + 2000)).toBe('model 2');
  });

  test('requests that miss together share one load; a null load is not kept', async () => {
    const cache = new DerivedViewCache<string>(fakeReader({ pages: 1 }), [{ projection: 'p', collection: 'pages' }]);
    let loads = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const load = async () => {
      loads++;
      await gate;
      return { value: 'v', validUntil: Infinity };
    };
    const waiting = [cache.get('k', load, undefined, T), cache.get('k', load, undefined, T), cache.get('k', load, undefined, T)];
    release();
    expect(await Promise.all(waiting)).toEqual(['v', 'v', 'v']);
    expect(loads).toBe(1);
    let nulls = 0;
    const none = async () => (nulls++, null);
    expect(await cache.get('missing', none, undefined, T)).toBeNull();
    expect(await cache.get('missing', none, undefined, T)).toBeNull();
    expect(nulls).toBe(2);
  });
});
