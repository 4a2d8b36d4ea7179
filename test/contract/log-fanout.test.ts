import { join } from 'node:path';
import { createEventStore } from '../../src/platform/event-store/create-event-store.js';
import { DelegatingEventStore } from '../../src/platform/event-store/delegating-event-store.js';
import type { EventStore, EventSubscription, Position, ReadAllOptions, RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import { EsdbEventStore } from '../../src/platform/event-store/eventstoredb/esdb-event-store.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { UpcasterRegistry } from '../../src/platform/event-store/upcasting.js';
import { LogFanout, type LogTap } from '../../src/platform/projections/log-fanout.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { eventually } from '../support/eventually.js';

/** Counts what the fan-out reads through the port: events its subscriptions yield and its pages return. */
class CountingStore extends DelegatingEventStore {
  subscribed = 0;
  paged = 0;
  openSubscriptions = 0;
  mostOpen = 0;

  override readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options).then((page) => {
      this.paged += page.length;
      return page;
    });
  }

  override subscribeToAll(options: { after?: Position | null }): EventSubscription {
    const inner = this.inner.subscribeToAll(options);
    this.mostOpen = Math.max(this.mostOpen, ++this.openSubscriptions);
    let open = true;
    const closed = () => {
      if (open) this.openSubscriptions--;
      open = false;
    };
    const count = () => this.subscribed++;
    return {
      close: async () => {
        closed();
        await inner.close();
      },
      async *[Symbol.asyncIterator]() {
        try {
          for await (const event of inner) {
            count();
            yield event;
          }
        } finally {
          closed();
        }
      },
    };
  }
}

interface Adapter {
  name: string;
  skip?: string;
  open(): Promise<{ store: EventStore; close(): Promise<void> }>;
}

const adapters: Adapter[] = [
  {
    name: 'SQLite',
    async open() {
      const dir = makeTempDir('fanout-');
      const store = new SqliteEventStore(join(dir.path, 'events.sqlite'), { pollIntervalMs: 20 });
      return { store, close: async () => (await store.close(), dir.remove()) };
    },
  },
  {
    // What every process uses: hash-chained, with upcasting above it.
    name: 'SQLite as the service opens it',
    async open() {
      const dir = makeTempDir('fanout-');
      const store = createEventStore({ dataDir: dir.path, eventStoreUrl: null, upcasters: new UpcasterRegistry() });
      return { store, close: async () => (await store.close(), dir.remove()) };
    },
  },
  {
    name: 'EventStoreDB',
    skip: process.env.EVENTSTORE_URL ? undefined : 'EVENTSTORE_URL not set',
    async open() {
      const store = new EsdbEventStore(process.env.EVENTSTORE_URL!);
      return { store, close: () => store.close() };
    },
  },
];

/** Reads `count` events from a tap (its iterator kept open). */
async function take(iterator: AsyncIterator<RecordedEvent>, count: number): Promise<RecordedEvent[]> {
  const out: RecordedEvent[] = [];
  while (out.length < count) {
    const next = await iterator.next();
    if (next.done) throw new Error(`tap ended after ${out.length} of ${count} events`);
    out.push(next.value);
  }
  return out;
}

for (const adapter of adapters) {
  const describeIt = adapter.skip ? describe.skip : describe;
  describeIt(`one read of the log for every processor, ${adapter.name}${adapter.skip ? ` (skipped: ${adapter.skip})` : ''}`, () => {
    let store: CountingStore;
    /** The adapter itself: reads the test makes to know what to expect are not counted. */
    let raw: EventStore;
    let close: () => Promise<void>;
    const taps: LogTap[] = [];
    /** Types unique to this run: a server store holds other runs' events. */
    const run = `r${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const type = (name: string) => `${name}_${run}`;
    const append = async (stream: string, types: string[]) =>
      (await store.append(`${run}-${stream}`, types.map((t) => ({ type: type(t), data: { t } })), { expectedRevision: 'any' })).position;

    beforeEach(async () => {
      const opened = await adapter.open();
      raw = opened.store;
      store = new CountingStore(opened.store);
      close = opened.close;
    });
    afterEach(async () => {
      await Promise.all(taps.splice(0).map((tap) => tap.close()));
      await close();
    });

    const open = (fanout: LogFanout, after: Position | null, takes: string[], log: { handed: Position[]; passed: Position[] } = { handed: [], passed: [] }) => {
      const tap = fanout.open({
        after,
        takes: (t) => takes.some((name) => type(name) === t),
        report: { handed: (p) => log.handed.push(p), passed: (p) => log.passed.push(p) },
      });
      taps.push(tap);
      return { tap, iterator: tap[Symbol.asyncIterator](), log };
    };

    it('reads each new event once for all its taps, hands each tap only its types and passes the others over at once', async () => {
      const start = await store.headPosition();
      const fanout = new LogFanout(store, { pageSize: 50 });
      const a = open(fanout, start, ['A']);
      const b = open(fanout, start, ['B']);
      const none = open(fanout, start, ['Never']);
      // Each tap is pulled once, as a processor waiting for its next event is.
      const firstA = a.iterator.next();
      const firstB = b.iterator.next();
      const firstNone = none.iterator.next();
      const warm = await append('warm', ['Other']);
      await eventually('every tap read the first event', () => [a, b, none].every((t) => t.log.passed.includes(warm)));
      store.subscribed = 0;
      store.paged = 0;

      for (let i = 0; i < 10; i++) await append(`s${i % 3}`, i % 2 === 0 ? ['A', 'Other'] : ['B', 'Other', 'Other']);
      const positions = (await raw.readAll({ after: warm, maxCount: 1000 }))
        .filter((e) => e.type.endsWith(run))
        .map((e) => ({ type: (e.data as { t: string }).t, position: e.position }));
      expect(positions).toHaveLength(25);
      const [head] = positions.slice(-1);
      await eventually('every tap read the last event', () => [a, b, none].every((t) => t.log.passed.includes(head.position) || t.log.handed.includes(head.position)));

      // The tap that takes nothing was never woken, yet it passed over everything, in order.
      let woken = false;
      void firstNone.then(() => (woken = true));
      await new Promise((resolve) => setImmediate(resolve));
      expect(woken).toBe(false);
      expect(none.log.handed).toEqual([]);
      // Every event read once, not once per tap.
      expect(store.subscribed + store.paged).toBe(positions.length);

      const gotA = [(await firstA).value as RecordedEvent, ...(await take(a.iterator, 4))];
      const gotB = [(await firstB).value as RecordedEvent, ...(await take(b.iterator, 4))];
      expect(gotA.map((e) => e.type)).toEqual(Array(5).fill(type('A')));
      expect(gotB.map((e) => e.type)).toEqual(Array(5).fill(type('B')));
      const ordered = (events: RecordedEvent[]) => events.every((e, i) => i === 0 || e.position > events[i - 1].position);
      expect(ordered(gotA) && ordered(gotB)).toBe(true);
      expect(a.log.passed.filter((p) => p > warm)).toEqual(positions.filter((p) => p.type !== 'A').map((p) => p.position));
      expect(store.mostOpen).toBe(1);
    });

    it('lets a tap far behind catch up from its own position while a live tap keeps getting new events', async () => {
      const start = await store.headPosition();
      for (let i = 0; i < 12; i++) await append(`old${i}`, Array(25).fill('A'));
      const fanout = new LogFanout(store, { pageSize: 20 });
      const head = await store.headPosition();
      const live = open(fanout, head, ['A']);
      const behind = open(fanout, start, ['A']);
      // The one far behind is asked for one event and then left alone (a slow processor).
      expect((await behind.iterator.next()).value).toMatchObject({ type: type('A') });
      const fresh = await append('new', ['A']);
      const got = await live.iterator.next();
      expect(got.value).toMatchObject({ position: fresh, type: type('A') });
      // It catches up on everything, in order, each event once, then goes on with the live ones.
      const rest = await take(behind.iterator, 12 * 25);
      expect(rest[rest.length - 1].position).toBe(fresh);
      expect(new Set(rest.map((e) => e.position)).size).toBe(rest.length);
      expect(rest.every((e, i) => i === 0 || e.position > rest[i - 1].position)).toBe(true);
      const later = await append('later', ['A']);
      expect((await behind.iterator.next()).value).toMatchObject({ position: later });
      expect((await live.iterator.next()).value).toMatchObject({ position: later });
      expect(store.mostOpen).toBe(1);
    });

    it('lets a tap whose queue overflows read on by itself and join again, missing and repeating nothing', async () => {
      const start = await store.headPosition();
      const fanout = new LogFanout(store, { pageSize: 4, maxQueued: 5 });
      const quick = open(fanout, start, ['A']);
      const slow = open(fanout, start, ['A']);
      const first = [quick.iterator.next(), slow.iterator.next()];
      const positions: Position[] = [];
      for (let i = 0; i < 30; i++) positions.push(await append(`s${i % 4}`, ['A']));
      // The quick tap takes each as it comes; the slow one is not pulled meanwhile.
      const quickGot = [(await first[0]).value as RecordedEvent, ...(await take(quick.iterator, 29))];
      expect(quickGot.map((e) => e.position)).toEqual(positions);
      const slowGot = [(await first[1]).value as RecordedEvent, ...(await take(slow.iterator, 29))];
      expect(slowGot.map((e) => e.position)).toEqual(positions);
      // It read part of them in pages of its own (the taps' first pages found nothing).
      expect(store.paged).toBeGreaterThan(0);
      const next = await append('next', ['A']);
      expect((await slow.iterator.next()).value).toMatchObject({ position: next });
      expect((await quick.iterator.next()).value).toMatchObject({ position: next });
    });

    it('joins a tap whose events up to the shared read were removed meanwhile (retention), and hands it what follows', async () => {
      const start = await store.headPosition();
      const fanout = new LogFanout(store, { pageSize: 10 });
      const live = open(fanout, start, ['X', 'Y']);
      const first = live.iterator.next();
      await append('cut', ['X', 'X', 'X', 'X', 'X']);
      await take(live.iterator, 4);
      await first;
      // Every event after the late tap's position is gone before it reads a page.
      await store.removeEvents(`${run}-cut`, { throughRevision: 4, types: [type('X')] });
      const late = open(fanout, start, ['Y']);
      const lateNext = late.iterator.next();
      // Before anything new is appended it has joined, the removed stretch passed over: its
      // processor counts it applied (no lag that is not there) and it does not read empty pages on.
      const reach = live.log.handed[live.log.handed.length - 1];
      await eventually('the late tap passed over what was removed', () => late.log.passed.includes(reach), 5_000);
      const fresh = await append('fresh', ['Y']);
      expect((await lateNext).value).toMatchObject({ position: fresh, type: type('Y') });
      expect((await live.iterator.next()).value).toMatchObject({ position: fresh });
    });

    it('reads page after page for a tap drained as the runner drains it (its queue emptied in one step)', async () => {
      const start = await store.headPosition();
      for (let i = 0; i < 5; i++) await append(`page${i}`, Array(10).fill('A'));
      const fanout = new LogFanout(store, { pageSize: 10 });
      const behind = open(fanout, start, ['A']);
      const iterator = behind.iterator as AsyncIterator<RecordedEvent> & { drain(max: number): RecordedEvent[] };
      // As `batches` does: one next(), then what the tap holds taken at once, then next() again.
      const got: RecordedEvent[] = [];
      while (got.length < 50) {
        // The deadline's timer is cleared each time: ten left running kept the jest worker alive
        // for 10 s after the suite ("A worker process has failed to exit gracefully").
        let deadline!: NodeJS.Timeout;
        const stalled = new Promise<'stalled'>((resolve) => (deadline = setTimeout(() => resolve('stalled'), 10_000)));
        const next = await Promise.race([iterator.next(), stalled]).finally(() => clearTimeout(deadline));
        if (next === 'stalled') throw new Error(`the tap stalled after ${got.length} of 50 events`);
        if (next.done) throw new Error('the tap ended');
        got.push(next.value, ...iterator.drain(100));
      }
      expect(new Set(got.map((e) => e.position)).size).toBe(50);
    });

    it('answers several next() calls made before any event, in order (the iterator protocol allows them)', async () => {
      const start = await store.headPosition();
      const fanout = new LogFanout(store, { pageSize: 10 });
      const tap = open(fanout, start, ['A']);
      const calls = [tap.iterator.next(), tap.iterator.next(), tap.iterator.next()];
      const last = await append('three', ['A', 'A', 'A']);
      const got = await Promise.all(calls);
      expect(got.map((r) => r.value?.position)).toEqual((await raw.readAll({ after: start, maxCount: 10 })).filter((e) => e.type.endsWith(run)).map((e) => e.position));
      expect(got[2].value?.position).toBe(last);
    });

    it('ends a tap that is closed while it waits, and closes the shared read once no tap is left', async () => {
      const start = await store.headPosition();
      const fanout = new LogFanout(store, { pageSize: 10 });
      const one = open(fanout, start, ['A']);
      const waiting = one.iterator.next();
      await append('x', ['Other']);
      await eventually('the tap joined the shared read', () => store.openSubscriptions === 1 && one.log.passed.length === 1);
      await one.tap.close();
      expect(await waiting).toEqual({ value: undefined, done: true });
      await eventually('the shared read closed', () => store.openSubscriptions === 0);
    });
  });
}
