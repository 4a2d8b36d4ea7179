import { VerificationStopped, verifyHistory } from '../../../src/audit/application/verify.js';
import { chainedEventStore } from '../../../src/platform/event-store/chained-event-store.js';
import type { EventStore } from '../../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { mostStepsBetweenTurns, turnsDuring } from '../../support/event-loop-turns.js';

/**
 * The audit verification pass lets the event loop run between two streams and two pages: over
 * SQLite each read is synchronous under its `await`, and the daily pass walks the whole log.
 */
async function append(store: EventStore, stream: string, count: number): Promise<void> {
  for (let n = 0; n < count; n += 500) {
    const events = Array.from({ length: Math.min(500, count - n) }, (_, i) => ({ type: 'Noted', data: { team_id: 1, n: n + i } }));
    await store.append(stream, events, { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
  }
}

describe('audit verification: the event loop runs during a pass', () => {
  it('runs other tasks between every two streams, and the report is the same', async () => {
    const store = chainedEventStore(new SqliteEventStore(':memory:'));
    try {
      for (let s = 0; s < 30; s++) await append(store, `noted-${s}`, 3);
      let checked = 0;
      const { result, seen } = await turnsDuring(() => verifyHistory(store, {}, { onProgress: (p) => (checked = p.streams_checked) }), () => checked);
      expect(result).toMatchObject({ intact: true, streams_checked: 30, events_checked: 90, broken: [] });
      expect(seen.length).toBeGreaterThan(0);
      expect(mostStepsBetweenTurns(seen, result.streams_checked)).toBeLessThanOrEqual(1);
    } finally {
      await store.close();
    }
  });

  it('runs other tasks between two pages of one stream and of the whole log', async () => {
    const store = chainedEventStore(new SqliteEventStore(':memory:'));
    try {
      await append(store, 'noted-long', 2500);
      let checked = 0;
      const { result: one, seen: whileReadingTheStream } = await turnsDuring(() => verifyHistory(store, { stream: 'noted-long' }, { onProgress: (p) => (checked = p.streams_checked) }), () => checked);
      expect(one).toMatchObject({ intact: true, events_checked: 2500 });
      // 3 pages of 1,000: a turn after each of the first two, before the stream was checked.
      expect(whileReadingTheStream.filter((value) => value === 0).length).toBeGreaterThanOrEqual(2);
      let listed = false;
      const { result: all, seen: whileListing } = await turnsDuring(
        () => verifyHistory(store, {}, { onProgress: (p) => (listed ||= p.streams !== null), shouldStop: () => false }),
        () => (listed ? 1 : 0),
      );
      expect(all).toMatchObject({ intact: true, streams_checked: 1, events_checked: 2500 });
      expect(whileListing.filter((value) => value === 0).length).toBeGreaterThanOrEqual(2);
    } finally {
      await store.close();
    }
  });

  it('runs other tasks between slices of one long stream as it hashes it, once every page is read', async () => {
    const store = chainedEventStore(new SqliteEventStore(':memory:'));
    try {
      await append(store, 'noted-long', 2500);
      // Set once the stream's last page was read: the turns after it are the hashing's.
      let read = false;
      const readStream = store.readStream.bind(store);
      store.readStream = async (stream, options) => {
        const page = await readStream(stream, options);
        if (stream === 'noted-long' && page.length < (options?.maxCount ?? Infinity)) read = true;
        return page;
      };
      const { result, seen } = await turnsDuring(() => verifyHistory(store, { stream: 'noted-long' }), () => (read ? 1 : 0));
      expect(result).toMatchObject({ intact: true, streams_checked: 1, events_checked: 2500, broken: [] });
      // Slices of 1,000: a turn after each of the first two.
      expect(seen.filter((value) => value === 1).length).toBeGreaterThanOrEqual(2);
    } finally {
      await store.close();
    }
  });

  it('still stops between streams when asked', async () => {
    const store = chainedEventStore(new SqliteEventStore(':memory:'));
    try {
      for (let s = 0; s < 3; s++) await append(store, `noted-${s}`, 2);
      let streams = 0;
      await expect(verifyHistory(store, {}, { onProgress: (p) => (streams = p.streams_checked), shouldStop: () => streams >= 1 })).rejects.toBeInstanceOf(VerificationStopped);
    } finally {
      await store.close();
    }
  });
});
