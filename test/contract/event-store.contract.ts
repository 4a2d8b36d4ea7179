import { randomUUID } from 'node:crypto';
import {
  type EventStore,
  type EventSubscription,
  type Position,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../../src/platform/event-store/event-store.port.js';
import { UpcasterRegistry, withUpcasting } from '../../src/platform/event-store/upcasting.js';
import { chainedFieldsOf, chainOf } from '../../src/platform/event-store/chain.js';

export interface EventStoreContractOptions {
  /** False for shared servers, where other runs' events exist before ours. */
  startsEmpty?: boolean;
  /** The store stamps every append with its hash chain (src/platform/event-store/chained-event-store.ts). */
  chained?: boolean;
}

const ISO_MILLIS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Drains a subscription until `count` events of our streams arrived, then hands them back. */
async function take(subscription: EventSubscription, ours: (e: RecordedEvent) => boolean, count: number, onEach?: (seen: RecordedEvent[]) => Promise<void>): Promise<RecordedEvent[]> {
  const seen: RecordedEvent[] = [];
  for await (const event of subscription) {
    if (!ours(event)) continue;
    seen.push(event);
    if (onEach) await onEach(seen);
    if (seen.length === count) break;
  }
  return seen;
}

async function readAllPaged(store: EventStore, after: Position | null, pageSize: number): Promise<RecordedEvent[][]> {
  const pages: RecordedEvent[][] = [];
  for (;;) {
    const page = await store.readAll({ after, maxCount: pageSize });
    if (page.length === 0) return pages;
    pages.push(page);
    after = page[page.length - 1].position;
  }
}

export function eventStoreContract(
  name: string,
  makeStore: () => Promise<EventStore>,
  cleanup: () => Promise<void> = async () => {},
  options: EventStoreContractOptions = {},
): void {
  describe(`EventStore contract: ${name}`, () => {
    let store: EventStore;
    const run = randomUUID().slice(0, 8);
    let counter = 0;
    const stream = (label: string): string => `contract_${run}-${label}${++counter}`;

    beforeEach(async () => {
      store = await makeStore();
    });

    afterEach(async () => {
      await store.close();
      await cleanup();
    });

    it('returns appended events with their data, metadata and revisions', async () => {
      const id = stream('roundtrip');
      const result = await store.append(
        id,
        [
          { type: 'EndpointAdded', data: { url: 'https://example.com', interval: 60 }, metadata: { actor: 'token:t1', request_id: 'req-1' } },
          { type: 'EndpointPaused', schemaVersion: 2, data: { reason: 'maintenance' }, metadata: { occurred_at: '2024-01-02T03:04:05.006Z' } },
        ],
        { expectedRevision: 'no_stream' },
      );

      const events = await store.readStream(id);
      expect(events.map((e) => [e.type, e.revision, e.schemaVersion, e.data])).toEqual([
        ['EndpointAdded', 0, 1, { url: 'https://example.com', interval: 60 }],
        ['EndpointPaused', 1, 2, { reason: 'maintenance' }],
      ]);
      expect(events[0].metadata).toEqual({
        actor: 'token:t1',
        request_id: 'req-1',
        correlation_id: null,
        causation_id: null,
        occurred_at: expect.stringMatching(ISO_MILLIS),
        ...(options.chained ? { hash: expect.stringMatching(/^[0-9a-f]{64}$/) } : {}),
      });
      expect(events[1].metadata.occurred_at).toBe('2024-01-02T03:04:05.006Z');
      expect(events[1].metadata.actor).toBeNull();
      expect(events.every((e) => e.streamId === id && ISO_MILLIS.test(e.recordedAt))).toBe(true);
      expect(new Set(events.map((e) => e.id)).size).toBe(2);
      expect(events[1].position).toBeGreaterThan(events[0].position);
      expect(result).toEqual({ nextExpectedRevision: 1, position: events[1].position });
    });

    it('keeps the hash-chain fields of metadata as given: hash on every event, prev_hash where present, live as read', async () => {
      const id = stream('chain');
      const hash = (n: number) => String(n).repeat(64);
      // Appended while a subscriber is caught up, so it is handed the events as the append made them.
      const starter = stream('chain-start');
      const subscription = store.subscribeToAll({ after: await store.headPosition() });
      await store.append(starter, [{ type: 'Noted', data: {} }], { expectedRevision: 'no_stream' });
      const seen = await take(subscription, (e) => e.streamId === id || e.streamId === starter, 5, async (events) => {
        if (events.length > 1) return;
        await store.append(
          id,
          [
            { type: 'Noted', data: { n: 0 }, metadata: { prev_hash: hash(1), hash: hash(2), actor: 'admin', idempotency_key: 'team:1:k' } },
            { type: 'Noted', data: { n: 1 }, metadata: { hash: hash(3) } },
            // Not 64 lowercase hex digits: still read back as given.
            { type: 'Noted', data: { n: 2 }, metadata: { hash: 'F'.repeat(64) } },
            // The 16-digit prefix a chained event stores (docs/audit.md).
            { type: 'Noted', data: { n: 3 }, metadata: { hash: '0123456789abcdef' } },
          ],
          { expectedRevision: 'no_stream' },
        );
      });
      await subscription.close();
      const live = seen.slice(1);
      const events = await store.readStream(id);
      // A subscriber gets each event's metadata as a reader of the stream does.
      expect(live.map((e) => e.metadata)).toEqual(events.map((e) => e.metadata));
      expect(events[0].metadata).toMatchObject({ actor: 'admin', idempotency_key: 'team:1:k', idempotency_step: 0 });
      if (options.chained) {
        // The chained store computes the hashes itself; what a caller passes is ignored. Revision
        // 0 stores its whole hash, the others its 16-digit prefix.
        expect(events.map((e) => e.metadata.hash)).toEqual([expect.stringMatching(/^[0-9a-f]{64}$/), ...Array(3).fill(expect.stringMatching(/^[0-9a-f]{16}$/))]);
        expect(events.map((e) => e.metadata.hash)).not.toContain(hash(2));
        expect(events.map((e) => e.metadata.prev_hash)).toEqual([undefined, undefined, undefined, undefined]);
      } else {
        expect(events.map((e) => [e.metadata.prev_hash, e.metadata.hash])).toEqual([
          [hash(1), hash(2)],
          [undefined, hash(3)],
          [undefined, 'F'.repeat(64)],
          [undefined, '0123456789abcdef'],
        ]);
      }
    });

    // The chained stores' form of the hash (docs/audit.md); a plain store keeps what it is given (above).
    if (options.chained) it('stores whole hashes at revision 0 and every 64th revision and 16-digit prefixes between, each of its recomputed hash', async () => {
      const id = stream('anchors');
      await store.append(id, Array.from({ length: 100 }, (_, n) => ({ type: 'Noted', data: { n } })), { expectedRevision: 'no_stream' });
      for (let n = 100; n < 140; n++) await store.append(id, [{ type: 'Noted', data: { n } }], { expectedRevision: n - 1 });
      const events = await store.readStream(id);
      expect(events).toHaveLength(140);
      events.forEach((event, r) => {
        const full = chainOf(events.slice(0, r + 1).map(chainedFieldsOf));
        expect([r, event.metadata.hash]).toEqual([r, r % 64 === 0 ? full : full.slice(0, 16)]);
      });
    });

    it('keeps the Idempotency-Key metadata of a keyed request\'s events, and adds none to the others', async () => {
      const id = stream('keyed');
      await store.append(id, [{ type: 'Noted', data: {}, metadata: { actor: 'admin', idempotency_key: 'team:1:k', idempotency_step: 2 } }, { type: 'Noted', data: {} }], {
        expectedRevision: 'no_stream',
      });
      const [keyed, plain] = await store.readStream(id);
      expect(keyed.metadata).toMatchObject({ idempotency_key: 'team:1:k', idempotency_step: 2 });
      expect('idempotency_key' in plain.metadata).toBe(false);
    });

    it('reads a stream that does not exist as empty', async () => {
      await expect(store.readStream(stream('missing'))).resolves.toEqual([]);
    });

    it('reads what was appended after an earlier read found nothing past the stream\'s end', async () => {
      const [s, missing] = [stream('follow'), stream('follow-missing')];
      await store.append(s, [{ type: 'A', data: { n: 0 } }], { expectedRevision: 'no_stream' });
      expect(await store.readStream(s, { fromRevision: 1 })).toEqual([]);
      expect(await store.readStream(missing, { fromRevision: 0 })).toEqual([]);

      await store.append(s, [{ type: 'A', data: { n: 1 } }], { expectedRevision: 0 });
      await store.append(missing, [{ type: 'A', data: { n: 9 } }], { expectedRevision: 'no_stream' });

      expect((await store.readStream(s, { fromRevision: 1 })).map((e) => e.data)).toEqual([{ n: 1 }]);
      expect((await store.readStream(missing, { fromRevision: 0 })).map((e) => e.data)).toEqual([{ n: 9 }]);
    });

    it('refuses no_stream on an existing stream and reports the actual revision', async () => {
      const id = stream('exists');
      await store.append(id, [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' });

      const error = await store.append(id, [{ type: 'B', data: {} }], { expectedRevision: 'no_stream' }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(error).toMatchObject({ streamId: id, expected: 'no_stream', actual: 0 });
      expect((await store.readStream(id)).map((e) => e.type)).toEqual(['A']);
    });

    it('refuses a stale exact revision and leaves the stream unchanged', async () => {
      const id = stream('exact');
      await store.append(id, [{ type: 'A', data: {} }, { type: 'B', data: {} }], { expectedRevision: 'no_stream' });

      const error = await store.append(id, [{ type: 'C', data: {} }], { expectedRevision: 0 }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(error).toMatchObject({ expected: 0, actual: 1 });
      const next = await store.append(id, [{ type: 'C', data: {} }], { expectedRevision: 1 });
      expect(next.nextExpectedRevision).toBe(2);
      expect((await store.readStream(id)).map((e) => e.type)).toEqual(['A', 'B', 'C']);
    });

    it('refuses an exact revision on a stream that does not exist', async () => {
      const error = await store.append(stream('absent'), [{ type: 'A', data: {} }], { expectedRevision: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WrongExpectedRevisionError);
      expect(error).toMatchObject({ actual: -1 });
    });

    it('appends with any whether or not the stream exists', async () => {
      const id = stream('any');
      await store.append(id, [{ type: 'A', data: {} }], { expectedRevision: 'any' });
      const result = await store.append(id, [{ type: 'B', data: {} }], { expectedRevision: 'any' });
      expect(result.nextExpectedRevision).toBe(1);
      expect((await store.readStream(id)).map((e) => e.revision)).toEqual([0, 1]);
    });

    it('reads backwards, from a revision and up to maxCount', async () => {
      const id = stream('directions');
      await store.append(id, [0, 1, 2, 3, 4].map((n) => ({ type: 'N', data: { n } })), { expectedRevision: 'no_stream' });
      const revisions = async (o: Parameters<EventStore['readStream']>[1]) => (await store.readStream(id, o)).map((e) => e.revision);

      expect(await revisions({ direction: 'backwards' })).toEqual([4, 3, 2, 1, 0]);
      expect(await revisions({ direction: 'backwards', fromRevision: 2, maxCount: 2 })).toEqual([2, 1]);
      expect(await revisions({ fromRevision: 3 })).toEqual([3, 4]);
      expect(await revisions({ maxCount: 2 })).toEqual([0, 1]);
      expect(await revisions({ direction: 'backwards', maxCount: 1 })).toEqual([4]);
    });

    it('pages the global log in append order, strictly after the given position', async () => {
      const start = await store.headPosition();
      const [a, b] = [stream('all-a'), stream('all-b')];
      await store.append(a, [{ type: 'A1', data: {} }], { expectedRevision: 'no_stream' });
      await store.append(b, [{ type: 'B1', data: {} }, { type: 'B2', data: {} }], { expectedRevision: 'no_stream' });
      await store.append(a, [{ type: 'A2', data: {} }], { expectedRevision: 0 });

      const pages = await readAllPaged(store, start, 2);
      const ours = pages.flat().filter((e) => e.streamId === a || e.streamId === b);

      expect(ours.map((e) => e.type)).toEqual(['A1', 'B1', 'B2', 'A2']);
      expect(pages.every((p) => p.length <= 2)).toBe(true);
      const positions = pages.flat().map((e) => e.position);
      expect(positions).toEqual([...positions].sort((x, y) => x - y));
      expect(new Set(positions).size).toBe(positions.length);
      const afterFirst = await store.readAll({ after: ours[0].position, maxCount: 3 });
      expect(afterFirst[0].position).toBeGreaterThan(ours[0].position);
      expect(afterFirst.map((e) => e.id)).not.toContain(ours[0].id);
    });

    it('pages the global log of the selected streams only, or of every stream but those, in full pages', async () => {
      const start = await store.headPosition();
      const [a, b, c] = [stream('selected-a'), stream('selected-b'), stream('selected-c')];
      for (let n = 0; n < 4; n++) {
        // Each append its own metadata: a selected event must carry its own commit's, not a neighbour's.
        for (const id of [a, b, c]) await store.append(id, [{ type: 'Numbered', data: { n }, metadata: { actor: `system:${n}`, request_id: `${id}-${n}` } }], { expectedRevision: n === 0 ? 'no_stream' : n - 1 });
      }
      const ours = (e: RecordedEvent) => e.streamId === a || e.streamId === b || e.streamId === c;
      const everything = (await readAllPaged(store, start, 100)).flat().filter(ours);
      const pagesOf = async (streams: { only: Set<string> } | { except: Set<string> }, maxCount: number) => {
        const pages: RecordedEvent[][] = [];
        for (let after = start; ; ) {
          const page = await store.readAll({ after, maxCount, streams });
          pages.push(page);
          if (page.length < maxCount) return pages;
          after = page[page.length - 1].position;
        }
      };

      for (const maxCount of [1, 3, 5]) {
        const only = await pagesOf({ only: new Set([a, c]) }, maxCount);
        // Full pages up to the log's end, as an unselected read: a short page is the end.
        expect(only.slice(0, -1).every((page) => page.length === maxCount)).toBe(true);
        expect(only.flat()).toEqual(everything.filter((e) => e.streamId === a || e.streamId === c));
        // A shared server may hold other runs' events: ours are compared.
        const except = (await pagesOf({ except: new Set([b]) }, maxCount)).flat();
        expect(except.some((e) => e.streamId === b)).toBe(false);
        expect(except.filter(ours)).toEqual(everything.filter((e) => e.streamId === a || e.streamId === c));
      }
      expect(await store.readAll({ after: start, maxCount: 10, streams: { only: new Set([stream('selected-none')]) } })).toEqual([]);
      expect(await store.readAll({ after: start, maxCount: 10, streams: { only: new Set() } })).toEqual([]);
      expect((await store.readAll({ after: start, maxCount: 100, streams: { except: new Set() } })).filter(ours)).toEqual(everything.filter(ours));
    });

    it('gives each event of a global page the metadata of its own append, wherever the page starts', async () => {
      const start = await store.headPosition();
      const [a, b] = [stream('meta-a'), stream('meta-b')];
      const three = (tag: string) => [0, 1, 2].map((n) => ({ type: 'Tagged', data: { tag, n }, metadata: { actor: `system:${tag}`, correlation_id: `c-${tag}` } }));
      await store.append(a, three('first'), { expectedRevision: 'no_stream' });
      await store.append(b, [{ type: 'Own', data: {}, metadata: { actor: 'token:own', request_id: 'r-own' } }], { expectedRevision: 'no_stream' });
      await store.append(a, three('second'), { expectedRevision: 2 });
      const expected = [...(await store.readStream(a)).slice(0, 3), ...(await store.readStream(b)), ...(await store.readStream(a)).slice(3)];

      for (const pageSize of [1, 2, 4, 7]) {
        const ours = (await readAllPaged(store, start, pageSize)).flat().filter((e) => e.streamId === a || e.streamId === b);
        expect(ours.map((e) => ({ id: e.id, metadata: e.metadata, recordedAt: e.recordedAt, data: e.data }))).toEqual(
          expected.map((e) => ({ id: e.id, metadata: e.metadata, recordedAt: e.recordedAt, data: e.data })),
        );
      }
      expect(expected.map((e) => e.metadata.actor)).toEqual(['system:first', 'system:first', 'system:first', 'token:own', 'system:second', 'system:second', 'system:second']);
    });

    it('reports the newest position as head', async () => {
      const id = stream('head');
      await store.append(id, [{ type: 'A', data: {} }], { expectedRevision: 'no_stream' });
      const { position } = await store.append(id, [{ type: 'B', data: {} }], { expectedRevision: 0 });
      await expect(store.headPosition()).resolves.toBe(position);
    });

    if (options.startsEmpty) {
      it('reports no head position on an empty store', async () => {
        await expect(store.headPosition()).resolves.toBeNull();
        await expect(store.readAll({ maxCount: 10 })).resolves.toEqual([]);
      });
    }

    it('answers ping while reachable', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    it('subscribes: catches up on existing events, then delivers new appends', async () => {
      const start = await store.headPosition();
      const id = stream('sub');
      await store.append(id, [{ type: 'Old1', data: {} }, { type: 'Old2', data: {} }], { expectedRevision: 'no_stream' });
      const subscription = store.subscribeToAll({ after: start });

      const seen = await take(subscription, (e) => e.streamId === id, 3, async (events) => {
        if (events.length === 2) await store.append(id, [{ type: 'New', data: { live: true } }], { expectedRevision: 1 });
      });
      await subscription.close();

      expect(seen.map((e) => e.type)).toEqual(['Old1', 'Old2', 'New']);
      expect(seen[2].data).toEqual({ live: true });
    });

    it('subscribes strictly after the given position', async () => {
      const id = stream('sub-after');
      const first = await store.append(id, [{ type: 'Skipped', data: {} }], { expectedRevision: 'no_stream' });
      await store.append(id, [{ type: 'Delivered', data: {} }], { expectedRevision: 0 });
      const subscription = store.subscribeToAll({ after: first.position });

      const seen = await take(subscription, (e) => e.streamId === id, 1);
      await subscription.close();

      expect(seen.map((e) => e.type)).toEqual(['Delivered']);
    });

    it('ends the iteration when the subscription is closed while waiting', async () => {
      const subscription = store.subscribeToAll({ after: await store.headPosition() });
      const received: RecordedEvent[] = [];
      const consuming = (async () => {
        for await (const event of subscription) received.push(event);
        return 'ended';
      })();

      await subscription.close();

      await expect(consuming).resolves.toBe('ended');
    });

    it('removeEvents drops the named types through a revision, keeps the revisions, and the stream stays appendable', async () => {
      const id = stream('retention');
      const other = stream('retention-other');
      const start = await store.headPosition();
      await store.append(id, [0, 1, 2].map((n) => ({ type: 'Raw', data: { n } })), { expectedRevision: 'no_stream' });
      await store.append(other, [{ type: 'Raw', data: { n: 'other' } }], { expectedRevision: 'no_stream' });
      await store.append(id, [3, 4].map((n) => ({ type: 'Raw', data: { n } })), { expectedRevision: 2 });

      const { removed } = await store.removeEvents(id, { throughRevision: 2, types: ['Raw'] });
      expect(removed).toBe(3);
      expect((await store.readStream(id)).map((e) => [e.revision, e.data])).toEqual([
        [3, { n: 3 }],
        [4, { n: 4 }],
      ]);
      expect((await store.readStream(id, { direction: 'backwards' })).map((e) => e.revision)).toEqual([4, 3]);
      expect((await store.readStream(other)).map((e) => e.data)).toEqual([{ n: 'other' }]);
      await expect(store.append(id, [{ type: 'Raw', data: { n: 5 } }], { expectedRevision: 2 })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      expect((await store.append(id, [{ type: 'Raw', data: { n: 5 } }], { expectedRevision: 4 })).nextExpectedRevision).toBe(5);
      // Removing again changes nothing; a missing stream is not an error.
      expect((await store.removeEvents(id, { throughRevision: 2, types: ['Raw'] })).removed).toBe(0);
      expect((await store.removeEvents(stream('missing'), { throughRevision: 10, types: ['Raw'] })).removed).toBe(0);
      if (options.startsEmpty) {
        // Rebuilds read $all: the removed events are gone there too.
        const all = (await store.readAll({ after: start, maxCount: 100 })).filter((e) => e.streamId === id).map((e) => e.revision);
        expect(all).toEqual([3, 4, 5]);
      }
    });

    it('removeEvents keeps events of other types (a prefix-only adapter stops at the first of them)', async () => {
      const id = stream('retention-mixed');
      await store.append(id, [{ type: 'Raw', data: { n: 0 } }, { type: 'Signal', data: {} }, { type: 'Raw', data: { n: 2 } }, { type: 'Raw', data: { n: 3 } }], {
        expectedRevision: 'no_stream',
      });
      await store.removeEvents(id, { throughRevision: 2, types: ['Raw'] });
      const left = (await store.readStream(id)).map((e) => e.revision);
      expect(left).toContain(1);
      expect(left).toContain(3);
      expect(left).not.toContain(0);
    });

    it('reads old schema versions as the latest through withUpcasting, without rewriting them', async () => {
      const id = stream('upcast');
      const start = await store.headPosition();
      await store.append(id, [{ type: 'CheckRecorded', schemaVersion: 1, data: { ms: 120 } }], { expectedRevision: 'no_stream' });
      const registry = new UpcasterRegistry()
        .register('CheckRecorded', 1, (data) => ({ durationMs: (data as { ms: number }).ms }))
        .register('CheckRecorded', 2, (data) => ({ ...(data as object), region: 'unknown' }));
      const upcasting = withUpcasting(store, registry);
      await upcasting.append(id, [{ type: 'CheckRecorded', data: { durationMs: 80, region: 'eu' } }], { expectedRevision: 0 });

      const expected = [
        [3, { durationMs: 120, region: 'unknown' }],
        [3, { durationMs: 80, region: 'eu' }],
      ];
      const shape = (events: RecordedEvent[]) => events.filter((e) => e.streamId === id).map((e) => [e.schemaVersion, e.data]);
      expect(shape(await upcasting.readStream(id))).toEqual(expected);
      expect(shape(await upcasting.readAll({ after: start, maxCount: 100 }))).toEqual(expected);
      const subscription = upcasting.subscribeToAll({ after: start });
      expect(shape(await take(subscription, (e) => e.streamId === id, 2))).toEqual(expected);
      await subscription.close();
      expect((await store.readStream(id)).map((e) => [e.schemaVersion, e.data])).toEqual([
        [1, { ms: 120 }],
        [3, { durationMs: 80, region: 'eu' }],
      ]);
    });
  });
}
