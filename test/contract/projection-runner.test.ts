import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteCoordinationStore } from '../../src/platform/coordination/sqlite/sqlite-coordination-store.js';
import { DelegatingEventStore } from '../../src/platform/event-store/delegating-event-store.js';
import type { EventSubscription, Position, ReadAllOptions, RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { silentLogger } from '../../src/platform/logging/logger.js';
import { defineProjection, type Projection } from '../../src/platform/projections/projection.js';
import { ProjectionRunner } from '../../src/platform/projections/projection-runner.js';
import { ProjectionRegistry } from '../../src/platform/projections/registry.js';
import { ReadYourWrites, ViewReader } from '../../src/platform/projections/views.js';
import { SqliteReadStore } from '../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { eventually, settled } from '../support/eventually.js';

/** version 1 stores the amount; version 2 stores it doubled, so a rebuild is visible. */
const totals = (version: number): Projection =>
  defineProjection({
    name: 'totals',
    version,
    collections: [{ name: 'totals', indexes: [] }],
    handlers: {
      Added: async (event, views) => {
        const doc = (await views.get('totals', event.streamId)) ?? { id: event.streamId, total: 0 };
        views.put('totals', { ...doc, total: Number(doc.total) + (event.data as { n: number }).n * version });
      },
    },
  });

/** A reactor that records each event it saw (its state commits with its checkpoint). */
const seen = (version: number, startFrom: 'beginning' | 'end'): Projection =>
  defineProjection({
    kind: 'reactor',
    startFrom,
    name: 'seen',
    version,
    collections: [{ name: 'seen', indexes: [] }],
    handlers: {
      Added: (event, views) => views.put('seen', { id: event.id, stream: event.streamId, version }),
    },
  });

/** Counts the events read through the port: those every subscription yields and every page returns. */
class CountingReads extends DelegatingEventStore {
  read = 0;

  override async readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    const page = await this.inner.readAll(options);
    this.read += page.length;
    return page;
  }

  override subscribeToAll(options: { after?: Position | null }): EventSubscription {
    const inner = this.inner.subscribeToAll(options);
    const counted = () => this.read++;
    return {
      close: () => inner.close(),
      async *[Symbol.asyncIterator]() {
        for await (const event of inner) {
          counted();
          yield event;
        }
      },
    };
  }
}

/** Counts each event of `type` per stream; `gate` holds every handler call until it resolves. */
const gatedCounts = (name: string, type: string, gate: () => Promise<void>): Projection =>
  defineProjection({
    name,
    version: 1,
    collections: [{ name, indexes: [] }],
    handlers: {
      [type]: async (event, views) => {
        await gate();
        const doc = (await views.get(name, event.streamId)) ?? { id: event.streamId, count: 0 };
        views.put(name, { ...doc, count: Number(doc.count) + 1 });
      },
    },
  });

describe('projection runner', () => {
  let dir: ReturnType<typeof makeTempDir>;
  let events: SqliteEventStore;
  let views: SqliteReadStore;
  const runners: ProjectionRunner[] = [];
  const runner = (projection: Projection) => {
    const created = new ProjectionRunner(events, views, [projection], { owner: `r${runners.length}`, logger: silentLogger, pointerCheckMs: 50, dropDelayMs: 0 });
    runners.push(created);
    return created;
  };
  const totalOf = async (stream: string) => (await new ViewReader(views, 0).get('totals', 'totals', stream))?.total;

  beforeEach(() => {
    dir = makeTempDir('runner-');
    events = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    views = new SqliteReadStore(join(dir.path, 'views.sqlite'));
  });
  /** Extra runners and stores a test opens, closed in order after it even when it fails. */
  const closeAfter: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closeAfter.splice(0)) await close();
    await Promise.all(runners.splice(0).map((r) => r.stop()));
    await views.close();
    await events.close();
    dir.remove();
  });

  it('runs a processor added by run() before start() once, and stops it', async () => {
    // A process that listens before its runner starts builds its contexts first: their
    // reactors are added by run() before start() starts the rest.
    let handled = 0;
    const counting = defineProjection({ kind: 'reactor', startFrom: 'beginning', name: 'counting', version: 1, collections: [], handlers: { Added: () => void handled++ } });
    const live = runner(totals(1));
    await live.run(counting);
    await live.start();
    const append = await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    await eventually('both processors applied the event', () => (live.appliedPosition('counting') ?? 0) >= append.position && (live.appliedPosition('totals') ?? 0) >= append.position);
    await live.stop();
    expect(handled).toBe(1);
  });

  it('ends a processor that reaches its live read after stop() was called (a stop during start)', async () => {
    // A process that listens before its runner starts can be told to stop while a processor is
    // between its lease and its live read: that read, opened after stop() closed the others,
    // must end too, or stop() (and the process's exit) waits for ever.
    let reached!: () => void;
    const atCollections = new Promise<void>((resolve) => (reached = resolve));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const ensureCollection = views.ensureCollection.bind(views);
    views.ensureCollection = async (spec) => {
      if (spec.name.startsWith('p__totals__')) {
        reached();
        await held;
      }
      return ensureCollection(spec);
    };
    const live = runner(totals(1));
    const starting = live.start();
    await atCollections;
    const stopped = live.stop().then(() => 'stopped');
    release();
    await starting;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise((resolve) => (timer = setTimeout(resolve, 10_000, 'still stopping')));
    try {
      expect(await Promise.race([stopped, deadline])).toBe('stopped');
    } finally {
      clearTimeout(timer);
    }
  });

  it('applies new events live and lets a writer wait until its append is visible', async () => {
    const live = runner(totals(1));
    await live.start();
    const append = await events.append('a', [{ type: 'Added', data: { n: 5 } }], { expectedRevision: 'no_stream' });
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live);
    expect(await freshness.waitFor(append.position, ['totals'])).toBe(true);
    expect(await totalOf('a')).toBe(5);
  });

  it("shows a writer its own write without waiting out the live gathering interval", async () => {
    // A gathering interval longer than the wait's bound: only the writer's wait can cut it short.
    const live = new ProjectionRunner(events, views, [totals(1)], { owner: 'gather', logger: silentLogger, liveGatherMs: 600_000 });
    runners.push(live);
    await live.start();
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live, [totals(1)], { timeoutMs: 5_000, pollMs: 20 });
    // The first event after a quiet spell starts a batch at once; the next one falls in its interval.
    const reserved = await events.append('ids', [{ type: 'Reserved', data: {} }], { expectedRevision: 'any' });
    await eventually('the first batch applied', () => (live.appliedPosition('totals') ?? 0) >= reserved.position);
    const write = await events.append('a', [{ type: 'Added', data: { n: 7 } }], { expectedRevision: 'no_stream' });
    await freshness.require({ append: write, appended: [{ type: 'Added' }] });
    expect(await totalOf('a')).toBe(7);
  });

  it("answers a waiting writer with its write committed, without waiting for later turns of the event loop", async () => {
    const live = runner(totals(1));
    await live.start();
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live, [totals(1)], { timeoutMs: 5_000, pollMs: 20 });
    const turnsOfWaits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const write = await events.append(`w${i}`, [{ type: 'Added', data: { n: i + 1 } }], { expectedRevision: 'no_stream' });
      let turns = 0;
      let counting = true;
      const count = () => {
        if (!counting) return;
        turns++;
        setImmediate(count);
      };
      setImmediate(count);
      await freshness.require({ append: write, appended: [{ type: 'Added' }] });
      counting = false;
      turnsOfWaits.push(turns);
      // The guarantee: once the wait is over, another connection reads the write.
      const other = new SqliteReadStore(join(dir.path, 'views.sqlite'));
      expect((await new ViewReader(other, 0).get('totals', 'totals', `w${i}`))?.total).toBe(i + 1);
      await other.close();
    }
    // The batch is cut at the next turn (events of the same turn join it); its commit and the
    // 'applied' signal then each waited for one more turn (three in all), and now follow at once.
    expect(Math.min(...turnsOfWaits)).toBeLessThanOrEqual(1);
  });

  it('does not wake a projection for batches holding none of its event types, and still counts them applied', async () => {
    const other = defineProjection({ name: 'others', version: 1, collections: [{ name: 'others', indexes: [] }], handlers: { Other: (event, views) => views.put('others', { id: event.id }) } });
    // Every idle batch would commit its checkpoint (idleCheckpointMs 0); no quiet-time flush within the test.
    const live = new ProjectionRunner(events, views, [totals(1), other], { owner: 'types', logger: silentLogger, idleCheckpointMs: 0, pointerCheckMs: 600_000 });
    runners.push(live);
    await live.start();
    const commit = views.commit.bind(views);
    const woken: string[] = [];
    views.commit = (writes, options) => {
      for (const write of writes) if (write.op === 'put' && String(write.doc.id).startsWith('checkpoint:')) woken.push(String(write.doc.name));
      return commit(writes, options);
    };
    let last = 0;
    for (let i = 0; i < 20; i++) last = (await events.append(`s${i % 3}`, [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'any' })).position;
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live, [totals(1), other]);
    // Both views count as having applied the head: a write naming the other view does not wait.
    expect(await freshness.waitFor(last, ['totals', 'others'], 5_000)).toBe(true);
    expect(woken.filter((name) => name === 'totals').length).toBeGreaterThan(0);
    expect(woken.filter((name) => name === 'others')).toEqual([]);
    expect(live.liveness().live).toBe(true);
    // An event it takes wakes it, after everything it passed over.
    const mine = await events.append('o', [{ type: 'Other', data: {} }], { expectedRevision: 'no_stream' });
    expect(await freshness.waitFor(mine.position, ['others'], 5_000)).toBe(true);
    expect(woken.filter((name) => name === 'others').length).toBe(1);
  });

  it('reads each appended event once for all its processors, not once per processor', async () => {
    const counting = new CountingReads(events);
    const projections = [totals(1), ...['b', 'c', 'd', 'e', 'f'].map((n) => gatedCounts(`only_${n}`, `Only_${n}`, async () => undefined))];
    const names = projections.map((p) => p.name);
    const live = new ProjectionRunner(counting, views, projections, { owner: 'once', logger: silentLogger, pointerCheckMs: 600_000 });
    runners.push(live);
    await live.start();
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live, projections);
    const warm = await events.append('warm', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    expect(await freshness.waitFor(warm.position, names, 5_000)).toBe(true);
    counting.read = 0;
    let last = 0;
    for (let i = 0; i < 30; i++) last = (await events.append(`s${i}`, [{ type: i % 10 === 0 ? 'Added' : 'Ignored', data: { n: 1 } }], { expectedRevision: 'no_stream' })).position;
    expect(await freshness.waitFor(last, names, 5_000)).toBe(true);
    expect(counting.read).toBe(30);
    expect(await totalOf('s20')).toBe(1);
  });

  it('keeps its other processors live while one applies far slower than the log grows, then catches that one up once', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    closeAfter.push(async () => release());
    let holding = false;
    const slow = gatedCounts('slow', 'Slow', () => (holding ? held : Promise.resolve()));
    const live = new ProjectionRunner(events, views, [totals(1), slow], { owner: 'slow', logger: silentLogger, pointerCheckMs: 600_000, batchSize: 50 });
    runners.push(live);
    await live.start();
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live, [totals(1), slow]);
    holding = true;
    // Its first batch waits on the gate; many more of its events are appended meanwhile (more
    // than the runner queues for one processor), and an event for the other projection.
    await events.append('slow', [{ type: 'Slow', data: {} }], { expectedRevision: 'no_stream' });
    let revision = 0;
    for (let i = 0; i < 30; i++) revision = (await events.append('slow', Array.from({ length: 50 }, () => ({ type: 'Slow', data: {} })), { expectedRevision: revision })).nextExpectedRevision;
    const added = await events.append('a', [{ type: 'Added', data: { n: 4 } }], { expectedRevision: 'no_stream' });
    expect(await freshness.waitFor(added.position, ['totals'], 5_000)).toBe(true);
    expect(await totalOf('a')).toBe(4);
    expect(live.appliedPosition('slow') ?? 0).toBeLessThan(added.position);
    release();
    expect(await freshness.waitFor(added.position, ['slow'], 30_000)).toBe(true);
    expect((await new ViewReader(views, 0).get('slow', 'slow', 'slow'))?.count).toBe(1501);
  });

  it('commits no checkpoint for live batches whose handlers wrote nothing, until one writes or its checkpoint is due', async () => {
    // Takes every Added and writes only for the large ones, as the SLO burn reactor changes nothing on most checks.
    const large = defineProjection({
      name: 'large',
      version: 1,
      collections: [{ name: 'large', indexes: [] }],
      handlers: { Added: (event, views) => ((event.data as { n: number }).n > 1 ? views.put('large', { id: event.id }) : undefined) },
    });
    const live = new ProjectionRunner(events, views, [large], { owner: 'nowrites', logger: silentLogger, idleCheckpointMs: 60_000, pointerCheckMs: 600_000 });
    runners.push(live);
    await live.start();
    const commit = views.commit.bind(views);
    const checkpoints: number[] = [];
    views.commit = (writes, options) => {
      for (const write of writes) if (write.op === 'put' && String(write.doc.id).startsWith('checkpoint:')) checkpoints.push(Number(write.doc.position));
      return commit(writes, options);
    };
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live, [large]);
    for (let i = 0; i < 10; i++) {
      const small = await events.append(`s${i}`, [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
      expect(await freshness.waitFor(small.position, ['large'], 5_000)).toBe(true);
    }
    // At most the first: this runner has written no checkpoint yet, so the first one is due.
    const before = checkpoints.length;
    expect(before).toBeLessThanOrEqual(1);
    // The next batch that writes carries the checkpoint over everything before it.
    const big = await events.append('big', [{ type: 'Added', data: { n: 2 } }], { expectedRevision: 'no_stream' });
    expect(await freshness.waitFor(big.position, ['large'], 5_000)).toBe(true);
    await eventually('the batch committed', async () => checkpoints.length === before + 1);
    expect(checkpoints.slice(before)).toEqual([big.position]);
    expect(await new ViewReader(views, 0).find('large', 'large', {})).toHaveLength(1);
  });

  /** Counts every Added it applies, in a view of its own. */
  const counts = defineProjection({
    name: 'counts',
    version: 1,
    collections: [{ name: 'counts', indexes: [] }],
    handlers: {
      Added: async (event, views) => {
        const doc = (await views.get('counts', event.streamId)) ?? { id: event.streamId, count: 0 };
        views.put('counts', { ...doc, count: Number(doc.count) + 1 });
      },
    },
  });
  const countOf = async (stream: string) => (await new ViewReader(views, 0).get('counts', 'counts', stream))?.count;

  it('commits the batches one append wakes in several projections as one read-store transaction', async () => {
    const live = new ProjectionRunner(events, views, [totals(1), counts], { owner: 'shared', logger: silentLogger, pointerCheckMs: 600_000 });
    runners.push(live);
    await live.start();
    const commit = views.commit.bind(views);
    const commits: string[][] = [];
    views.commit = (writes, options) => {
      commits.push(writes.flatMap((w) => (w.op === 'put' && String(w.doc.id).startsWith('checkpoint:') ? [String(w.doc.name)] : [])).sort());
      return commit(writes, options);
    };
    const append = await events.append('a', [{ type: 'Added', data: { n: 2 } }], { expectedRevision: 'no_stream' });
    expect(await new ReadYourWrites(new ViewReader(views, 0), live).waitFor(append.position, ['totals', 'counts'], 5_000)).toBe(true);
    expect([await totalOf('a'), await countOf('a')]).toEqual([2, 1]);
    expect(commits).toEqual([['counts', 'totals']]);
  });

  it("refuses a fenced projection's batch and still commits another's batch of the same append", async () => {
    const live = new ProjectionRunner(events, views, [totals(1), counts], { owner: 'fenced', logger: silentLogger, pointerCheckMs: 600_000 });
    runners.push(live);
    await live.start();
    const first = await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live);
    expect(await freshness.waitFor(first.position, ['totals', 'counts'], 5_000)).toBe(true);
    // Another process took `counts` over (this one paused past its lease) and applied through
    // the next event: this process's batch of it must be refused whole.
    const generation = (await new ProjectionRegistry(views).pointer('counts'))!.generation;
    await views.commit([new ProjectionRegistry(views).checkpointWrite('counts', generation, first.position + 1)]);
    const second = await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: first.nextExpectedRevision });
    await eventually('totals applied the second event', async () => (await totalOf('a')) === 2);
    // The refused batch is dropped; back on its lease, `counts` goes on from the other holder's checkpoint.
    const third = await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: second.nextExpectedRevision });
    await eventually('both applied the third event', async () => (await totalOf('a')) === 3 && (await countOf('a')) === 2);
  });

  it('rebuilds on start when the projection version changed, from the whole log', async () => {
    await events.append('a', [{ type: 'Added', data: { n: 2 } }, { type: 'Added', data: { n: 3 } }], { expectedRevision: 'any' });
    const first = runner(totals(1));
    await first.start();
    await new ReadYourWrites(new ViewReader(views, 0), first).waitFor((await events.headPosition())!, ['totals']);
    expect(await totalOf('a')).toBe(5);
    await first.stop();

    const upgraded = runner(totals(2));
    await upgraded.start();
    await new ReadYourWrites(new ViewReader(views, 0), upgraded).waitFor((await events.headPosition())!, ['totals']);
    expect(await totalOf('a')).toBe(10);
    expect((await upgraded.status())[0]).toMatchObject({ version: 2, activeVersion: 2, generation: 2, lag: 0 });
  });

  describe('an on-start rebuild stopped part-way', () => {
    /** `totals(version)` counting its handler calls; the call numbered `holdAt` waits for `release`. */
    const counted = (version: number, holdAt = 0) => {
      let calls = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let reached!: () => void;
      const held = new Promise<void>((resolve) => (reached = resolve));
      const projection = totals(version);
      const add = projection.handlers.Added;
      projection.handlers.Added = async (event, views) => {
        if (++calls === holdAt) {
          reached();
          await gate;
        }
        return add(event, views);
      };
      return { projection, calls: () => calls, held, release };
    };
    const batchedRunner = (projection: Projection) => {
      const created = new ProjectionRunner(events, views, [projection], { owner: `r${runners.length}`, logger: silentLogger, dropDelayMs: 0, rebuildBatchSize: 5 });
      runners.push(created);
      return created;
    };
    const caughtUp = async (live: ProjectionRunner) => new ReadYourWrites(new ViewReader(views, 0), live).waitFor((await events.headPosition())!, ['totals']);

    /** 20 events of 1 applied at version 1, then a version-2 start stopped after its second batch of 5. */
    async function stoppedAfterTenOfTwenty(): Promise<void> {
      for (let i = 0; i < 20; i++) await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'any' });
      const first = batchedRunner(totals(1));
      await first.start();
      await caughtUp(first);
      await first.stop();

      const stopped = counted(2, 8);
      const upgrading = batchedRunner(stopped.projection);
      const starting = upgrading.start();
      await stopped.held;
      const stopping = upgrading.stop();
      stopped.release();
      await stopping;
      await starting;
      // The batch under way when the stop came committed with its checkpoint; nothing swapped.
      const registry = new ProjectionRegistry(views);
      expect(await registry.pointer('totals')).toMatchObject({ version: 1, generation: 1 });
      const tenth = (await events.readAll({ after: null, maxCount: 10 })).at(-1)!.position;
      expect(await registry.checkpoint('totals', 2)).toMatchObject({ position: tenth, version: 2 });
    }

    it('goes on from its checkpoint at the next start of the same version: no event applied twice or skipped', async () => {
      await stoppedAfterTenOfTwenty();
      const resumed = counted(2);
      const next = batchedRunner(resumed.projection);
      await next.start();
      await caughtUp(next);
      expect(resumed.calls()).toBe(10);
      expect(await totalOf('a')).toBe(40);
      expect((await next.status())[0]).toMatchObject({ version: 2, activeVersion: 2, generation: 2, lag: 0, state: 'running' });
    });

    it('starts over in a newer generation when the next start runs another version', async () => {
      await stoppedAfterTenOfTwenty();
      const other = counted(3);
      const next = batchedRunner(other.projection);
      await next.start();
      await caughtUp(next);
      expect(other.calls()).toBe(20);
      expect(await totalOf('a')).toBe(60);
      expect((await next.status())[0]).toMatchObject({ version: 3, activeVersion: 3, generation: 3, lag: 0 });
    });
  });

  it('rebuilds a view whose handler queries it by an indexed field mid-rebuild, and swaps it in with its indexes', async () => {
    /** Numbers each stream's events 1, 2, ... by finding the stream's latest entry through the index. */
    const numbered = defineProjection({
      name: 'numbered',
      version: 1,
      collections: [{ name: 'entries', indexes: [{ fields: ['stream', 'n'] }] }],
      handlers: {
        Added: async (event, views) => {
          const [latest] = await views.find('entries', { filter: { stream: event.streamId }, sort: [['n', 'desc']], limit: 1 });
          views.put('entries', { id: event.id, stream: event.streamId, n: Number(latest?.n ?? 0) + 1 });
        },
      },
    });
    for (let i = 0; i < 12; i++) await events.append(`s-${i % 3}`, [{ type: 'Added', data: { n: i } }], { expectedRevision: 'any' });
    const rebuilder = new ProjectionRunner(events, views, [numbered], { owner: 'rebuilder', logger: silentLogger, dropDelayMs: 0, rebuildBatchSize: 5 });
    runners.push(rebuilder);
    const { generation, applied } = await rebuilder.rebuild('numbered');

    expect(applied).toBe(12);
    const entries = await new ViewReader(views, 0).find('numbered', 'entries', { sort: [['stream', 'asc'], ['n', 'asc']] });
    expect(entries.map((e) => `${e.stream}:${e.n}`)).toEqual(['s-0', 's-1', 's-2'].flatMap((s) => [1, 2, 3, 4].map((n) => `${s}:${n}`)));
    const file = new Database(join(dir.path, 'views.sqlite'), { readonly: true });
    const indexes = file.prepare(`SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?`).pluck().all(`c_p__numbered__g${generation}__entries`);
    file.close();
    expect(indexes).toContain(`ix_p__numbered__g${generation}__entries__stream__n`);
  });

  it('keeps serving the old generation during an operator rebuild, and the live runner follows the swap', async () => {
    await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'any' });
    const live = runner(totals(1));
    await live.start();
    const reader = new ViewReader(views, 0);
    await new ReadYourWrites(reader, live).waitFor((await events.headPosition())!, ['totals']);

    const operator = runner(totals(1));
    const progress: number[] = [];
    const rebuilt = operator.rebuild('totals', (p) => progress.push(p.applied));
    expect(await totalOf('a')).toBe(1);
    const { generation } = await rebuilt;
    expect(generation).toBe(2);
    expect(progress.length).toBeGreaterThan(0);

    const after = await events.append('a', [{ type: 'Added', data: { n: 4 } }], { expectedRevision: 'any' });
    expect(await settled(() => totalOf('a'), (total) => total === 5, { intervalMs: 25 })).toBe(5);
    expect(await reader.position('totals')).toBe(after.position);
  });

  it('stays live after a rebuild it ran itself: it reports running, follows the swap and answers a writer', async () => {
    await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'any' });
    const live = runner(totals(1));
    await live.start();
    const reader = new ViewReader(views, 0);
    const writes = new ReadYourWrites(reader, live);
    await writes.waitFor((await events.headPosition())!, ['totals']);

    expect((await live.rebuild('totals')).generation).toBe(2);
    expect((await live.status())[0].state).toBe('running');
    expect(live.liveness()).toEqual({ live: true, behind: [] });

    const after = await events.append('a', [{ type: 'Added', data: { n: 4 } }], { expectedRevision: 'any' });
    expect(await writes.waitFor(after.position, ['totals'])).toBe(true);
    expect(await totalOf('a')).toBe(5);
  });

  // No coordination store: both runners apply, as two processes do when one resumes after its
  // lease expired. Each has its own connections, as another process would. With documents kept
  // in memory, a batch built on a document the other process has since replaced is refused by
  // the fence, and the runner must not build the next one on it either.
  it.each([
    ['a projection', false],
    ['a projection that keeps its documents', true],
  ])('applies each event once when two processes both believe they own %s (a lease lost in a pause)', async (_what, keepsDocuments) => {
    const projection = { ...totals(1), keepsDocuments };
    const otherEvents = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const otherViews = new SqliteReadStore(join(dir.path, 'views.sqlite'));
    const first = runner(projection);
    const second = new ProjectionRunner(otherEvents, otherViews, [projection], { owner: 'paused', logger: silentLogger });
    closeAfter.push(() => second.stop(), () => otherViews.close(), () => otherEvents.close());
    await first.start();
    await second.start();

    const streams = ['a', 'b', 'c'];
    for (let round = 0; round < 40; round++) {
      await Promise.all(streams.map((stream) => events.append(stream, [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'any' })));
      if (round % 8 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const head = (await events.headPosition())!;
    await settled(async () => (await first.status())[0].position, (position) => position === head, { intervalMs: 20 });

    expect(await Promise.all(streams.map(totalOf))).toEqual([40, 40, 40]);
  });

  it('reads a document it keeps from the store at most twice while it follows (absent, then stored), not once per batch', async () => {
    const keeping = { ...totals(1), keepsDocuments: true };
    const live = runner(keeping);
    await live.start();
    const reads: string[] = [];
    const get = views.get.bind(views);
    const getMany = views.getMany.bind(views);
    views.get = (collection, id) => {
      if (collection.endsWith('__totals')) reads.push(id);
      return get(collection, id);
    };
    views.getMany = (collection, ids) => {
      if (collection.endsWith('__totals')) reads.push(...ids);
      return getMany(collection, ids);
    };
    const freshness = new ReadYourWrites(new ViewReader(views, 0), live, [keeping]);
    for (let i = 0; i < 10; i++) {
      const { position } = await events.append('a', [{ type: 'Added', data: { n: 2 } }], { expectedRevision: 'any' });
      expect(await freshness.waitFor(position, ['totals'], 5_000)).toBe(true);
    }
    // Ten batches: the first reads the document (none stored yet) and writes it, the second
    // reads what the first wrote, the other eight find it kept.
    expect(reads).toEqual(['a', 'a']);
    expect(await totalOf('a')).toBe(20);
  });

  it("shows a writer whose runner stands by its write once the lease holder's runner applied it", async () => {
    // Two processes on one data dir: the first holds the projection's lease, the second stands by.
    const coordination = new SqliteCoordinationStore(join(dir.path, 'coordination.sqlite'));
    const otherEvents = new SqliteEventStore(join(dir.path, 'events.sqlite'));
    const otherViews = new SqliteReadStore(join(dir.path, 'views.sqlite'));
    const holder = new ProjectionRunner(events, views, [totals(1)], { owner: 'holder', logger: silentLogger, coordination });
    const standby = new ProjectionRunner(otherEvents, otherViews, [totals(1)], { owner: 'standby', logger: silentLogger, coordination, leaseTtlMs: 60_000 });
    closeAfter.push(() => standby.stop(), () => holder.stop(), () => otherViews.close(), () => otherEvents.close(), () => coordination.close());
    await holder.start();
    await standby.start();
    expect((await standby.status())[0].state).toBe('standby');

    const write = await otherEvents.append('a', [{ type: 'Added', data: { n: 3 } }], { expectedRevision: 'no_stream' });
    const freshness = new ReadYourWrites(new ViewReader(otherViews, 0), standby, [totals(1)], { timeoutMs: 5_000, pollMs: 20 });

    await freshness.require({ append: write, appended: [{ type: 'Added' }] });
    expect(await totalOf('a')).toBe(3);
  });

  it('stores the checkpoint of events it ignores once the log is quiet, so status shows no stale lag', async () => {
    const live = new ProjectionRunner(events, views, [totals(1)], { owner: 'quiet', logger: silentLogger, pointerCheckMs: 20, idleCheckpointMs: 60_000 });
    runners.push(live);
    await live.start();
    const added = await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
    await new ReadYourWrites(new ViewReader(views, 0), live).waitFor(added.position, ['totals']);
    let last = 0;
    for (let i = 0; i < 20; i++) last = (await events.append(`ignored-${i}`, [{ type: 'Ignored', data: {} }], { expectedRevision: 'no_stream' })).position;
    const status = await settled(async () => (await live.status())[0], (current) => current.position === last, { intervalMs: 20 });
    expect(status).toMatchObject({ position: last, head: last, lag: 0 });
  });

  describe('reactors', () => {
    const seenStreams = async () => (await new ViewReader(views, 0).find('seen', 'seen', {})).map((doc) => doc.stream).sort();

    it('start at the head of the log when told to, and see only what is appended after', async () => {
      await events.append('before', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
      const live = runner(seen(1, 'end'));
      await live.start();
      const append = await events.append('after', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
      expect(await new ReadYourWrites(new ViewReader(views, 0), live).waitFor(append.position, ['seen'])).toBe(true);
      expect(await seenStreams()).toEqual(['after']);
    });

    it('go on from their checkpoint after a version change instead of replaying history, and refuse a rebuild', async () => {
      const first = runner(seen(1, 'beginning'));
      await first.start();
      const append = await events.append('a', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
      await new ReadYourWrites(new ViewReader(views, 0), first).waitFor(append.position, ['seen']);
      await first.stop();

      const second = runner(seen(2, 'beginning'));
      await second.start();
      const next = await events.append('b', [{ type: 'Added', data: { n: 1 } }], { expectedRevision: 'no_stream' });
      await new ReadYourWrites(new ViewReader(views, 0), second).waitFor(next.position, ['seen']);
      const docs = await new ViewReader(views, 0).find('seen', 'seen', {});
      expect(docs.map((doc) => [doc.stream, doc.version]).sort()).toEqual([['a', 1], ['b', 2]]);
      await expect(second.rebuild('seen')).rejects.toThrow(/reactor/);
    });
  });
});
