/**
 * The chained store's append path (src/platform/event-store/chained-event-store.ts): not an async
 * function, so what the chain cannot stamp must still come back as a refused promise, and a
 * refused append must not leave a head the next append links to.
 */
import { chainedEventStore } from '../../../src/platform/event-store/chained-event-store.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { WrongExpectedRevisionError } from '../../../src/platform/event-store/event-store.port.js';
import { verifyHistory } from '../../../src/audit/application/verify.js';

describe('the chained append', () => {
  it('refuses data the chain cannot hash with a rejected promise, not a throw, and writes nothing', async () => {
    const store = chainedEventStore(new SqliteEventStore(':memory:'));
    await store.append('s', [{ type: 'Noted', data: { n: 0 } }], { expectedRevision: 'no_stream' });
    let pending: Promise<unknown> | undefined;
    expect(() => {
      pending = store.append('s', [{ type: 'Noted', data: { n: 1n } }], { expectedRevision: 0 });
    }).not.toThrow();
    await expect(pending).rejects.toThrow(TypeError);
    await store.append('s', [{ type: 'Noted', data: { n: 1 } }], { expectedRevision: 0 });
    expect((await store.readStream('s')).map((e) => e.data)).toEqual([{ n: 0 }, { n: 1 }]);
    expect(await verifyHistory(store)).toMatchObject({ intact: true, events_checked: 2 });
    await store.close();
  });

  it('links the next append to the stored event after another writer got in between', async () => {
    const adapter = new SqliteEventStore(':memory:');
    const store = chainedEventStore(adapter);
    const other = chainedEventStore(adapter);
    await store.append('s', [{ type: 'Noted', data: { n: 0 } }], { expectedRevision: 'no_stream' });
    await other.append('s', [{ type: 'Noted', data: { n: 1 } }], { expectedRevision: 0 });
    await expect(store.append('s', [{ type: 'Noted', data: { n: 9 } }], { expectedRevision: 0 })).rejects.toThrow(WrongExpectedRevisionError);
    await store.append('s', [{ type: 'Noted', data: { n: 2 } }], { expectedRevision: 1 });
    expect(await verifyHistory(store)).toMatchObject({ intact: true, events_checked: 3 });
    await store.close();
  });

  it('chains single-event appends that move between streams and types (the canonical tail kept per stream)', async () => {
    const store = chainedEventStore(new SqliteEventStore(':memory:'));
    const revisions = new Map<string, number>();
    for (let n = 0; n < 60; n++) {
      const stream = `s-${n % 3}`;
      const expectedRevision = revisions.get(stream) ?? 'no_stream';
      const result = await store.append(stream, [{ type: n % 2 === 0 ? 'Opened' : 'Noted', data: { n } }], { expectedRevision });
      revisions.set(stream, result.nextExpectedRevision);
    }
    expect(await verifyHistory(store)).toMatchObject({ intact: true, events_checked: 60 });
    await store.close();
  });
});
