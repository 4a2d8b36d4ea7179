import type { EventStore, NewEvent } from '../../../src/platform/event-store/event-store.port.js';
import { UpcasterRegistry, withUpcasting } from '../../../src/platform/event-store/upcasting.js';

/** A registry where `Packed` is stored compact at v2 (its data's `keep` only), `Plain` has no stored shape. */
function registry(): UpcasterRegistry {
  return new UpcasterRegistry()
    .register('Packed', 1, (data) => data)
    .registerStoredShape('Packed', {
      version: 2,
      compact: (data) => ({ keep: (data as { keep: number }).keep }),
      expand: (data) => data,
      packed: true,
      streamConstants: ['keep'],
    })
    .register('Plain', 1, (data) => data);
}

describe('UpcasterRegistry.toStored', () => {
  it("compacts a type with a stored shape and takes the shape's packing; the caller's event is left as it was", () => {
    const event: NewEvent = { type: 'Packed', data: { keep: 1, drop: 2 }, metadata: { actor: 'a' } };
    const stored = registry().toStored(event, 's-1');
    expect(stored).toMatchObject({ type: 'Packed', schemaVersion: 2, data: { keep: 1 }, metadata: { actor: 'a' }, packed: true, streamConstants: ['keep'] });
    expect(event).toEqual({ type: 'Packed', data: { keep: 1, drop: 2 }, metadata: { actor: 'a' } });
  });

  it("keeps every field of an event without a stored shape, its own packing and chain mark included", () => {
    const event: NewEvent = { type: 'Plain', data: { a: 1 }, metadata: { actor: 'b' }, packed: true, streamConstants: ['a'], chainHashed: true };
    expect(registry().toStored(event)).toEqual({ ...event, schemaVersion: 2 });
  });

  it('keeps an explicit older schema version as it is, data not compacted', () => {
    const event: NewEvent = { type: 'Packed', schemaVersion: 1, data: { keep: 1, drop: 2 } };
    expect(registry().toStored(event)).toMatchObject({ schemaVersion: 1, data: { keep: 1, drop: 2 } });
  });
});

describe('withUpcasting reads', () => {
  it('refuses with a rejected promise, never a throw, when the store under it throws', async () => {
    const failing = {
      readStream: () => {
        throw new Error('closed');
      },
      readAll: () => {
        throw new Error('closed');
      },
    } as unknown as EventStore;
    const store = withUpcasting(failing, registry());
    let read: Promise<unknown> | undefined;
    expect(() => (read = store.readStream('s-1'))).not.toThrow();
    await expect(read).rejects.toThrow('closed');
    expect(() => (read = store.readAll({ maxCount: 1 } as never))).not.toThrow();
    await expect(read).rejects.toThrow('closed');
  });
});
