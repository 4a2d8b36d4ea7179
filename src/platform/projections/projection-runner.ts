import { EventEmitter } from 'node:events';
import type { CoordinationStore } from '../coordination/coordination.port.js';
import { LeaseKeeper } from '../coordination/lease-keeper.js';
import type { EventStore, Position, RecordedEvent } from '../event-store/event-store.port.js';
import { PreconditionFailedError, type ReadStore, type ViewWrite } from '../read-store/read-store.port.js';
import type { Logger } from '../logging/logger.js';
import { batches, type BatchDemand } from './batches.js';
import { LogFanout } from './log-fanout.js';
import { isReactor, type Projection, type Worker, type WorkerHost } from './projection.js';
import { ProjectionRegistry, parsePhysicalCollection, physicalCollection, type Checkpoint, type ProjectionPointer } from './registry.js';
import { SharedCommits } from './shared-commits.js';
import { ViewsBehindError } from './views.js';
import { BatchViewTransaction, KeptDocuments, wantedBy } from './view-transaction.js';
import { nextTurn } from '../next-turn.js';

export interface RunnerOptions {
  /** Identity of this process for leases. */
  owner: string;
  logger: Logger;
  /** With a coordination store, exactly one process applies each projection at a time. */
  coordination?: CoordinationStore | null;
  /** The process's lease keeper (one renewal write for all its leases); made from `coordination` when absent. */
  leases?: LeaseKeeper;
  batchSize?: number;
  /** Events per batch (one view commit) of a rebuild; `batchSize` when absent. */
  rebuildBatchSize?: number;
  leaseTtlMs?: number;
  /** How often a live projection looks for a swap made by another process (operator rebuild). */
  pointerCheckMs?: number;
  /** Old generations stay readable this long after a swap, for queries already under way. */
  dropDelayMs?: number;
  /**
   * A live batch that changes no view (no event of it handled, or handlers that wrote nothing);
   * its checkpoint is written at most this often instead of once per batch (default 1000 ms).
   */
  idleCheckpointMs?: number;
  /**
   * While events keep arriving, a live projection starts a batch at most this often (default
   * 5 ms), so its commit is shared by every event of the interval. See `batches`.
   */
  liveGatherMs?: number;
  /**
   * Names of projections that left the catalogue: `dropStaleGenerations` drops every collection,
   * the pointer and the checkpoints such a projection left in the views (a database written by
   * an earlier version), since no processor of this version reads or writes them.
   */
  retired?: readonly string[];
}

export interface ProjectionStatus {
  name: string;
  kind: 'projector' | 'reactor' | 'worker';
  version: number;
  activeVersion: number | null;
  generation: number | null;
  position: Position | null;
  head: Position | null;
  lag: number;
  state: 'running' | 'rebuilding' | 'stopped' | 'failed' | 'standby';
}

/**
 * Why a processor keeps the process from being live: it applies the log but has not reached the
 * head the process started with, it rebuilds a new generation, it has not started yet (the
 * runner starts processors one at a time, so one rebuilding holds back those after it), or it
 * stopped or failed.
 */
export type BehindReason = 'catching up' | 'rebuilding' | 'not started yet' | 'stopped' | 'failed';

export interface Behind {
  name: string;
  why: BehindReason;
}

function whyBehind(state: ProjectionStatus['state'] | undefined): BehindReason {
  if (state === undefined) return 'not started yet';
  return state === 'running' || state === 'standby' ? 'catching up' : state;
}

export interface RebuildProgress {
  name: string;
  applied: number;
  position: Position | null;
  head: Position | null;
}

/** How often an on-start rebuild logs its progress. */
const REBUILD_PROGRESS_EVERY_MS = 5000;

class Stopped extends Error {}

/** A live generation this process follows, as the runner's watch looks at it (see `watchAll`). */
interface Watched {
  projection: Projection;
  generation: number;
  leaseName: string | undefined;
  watchPointer: boolean;
  close: () => Promise<void>;
  flushIdle: () => Promise<void>;
}

/**
 * Owns subscriptions, batching, checkpoints and rebuilds; projections are just handler maps.
 * Each batch's view changes and its checkpoint commit atomically, so a crash neither loses nor
 * repeats an effect.
 */
export class ProjectionRunner {
  private readonly registry: ProjectionRegistry;
  private readonly byName: Map<string, Projection>;
  private readonly applied = new Map<string, { generation: number; position: Position | null }>();
  /**
   * The generation this process swapped in by its own rebuild, per projection, until its live
   * loop follows it (`markApplied` removes the entry): what the loop applies to the generation
   * before is no longer what readers see, so it answers no writer's wait (`appliedPosition`,
   * `applies`).
   */
  private readonly swappedIn = new Map<string, number>();
  private readonly states = new Map<string, ProjectionStatus['state']>();
  /** Each rebuild this process runs now: its new generation's position and the log's head at its last batch. */
  private readonly rebuilds = new Map<string, { position: Position | null; head: Position | null }>();
  private readonly progress = new EventEmitter();
  /** What ends each wait of the runner's (a live read, a sleep, a pending drop) when it stops: see `onStop`. */
  private readonly closers = new Set<() => Promise<void>>();
  /** Closers registered after `stop()` began, run at once; `stop()` awaits them too. */
  private readonly lateClosings: Promise<void>[] = [];
  private readonly loops: Promise<void>[] = [];
  private stopping = false;
  /** The log's head when this process started: a processor is live once it has applied it. */
  private startHead: Position | null | undefined;
  /** Processors whose live loop has been started (`startLive`), by name. */
  private readonly live = new Set<string>();
  private readonly batchSize: number;
  private readonly rebuildBatchSize: number;
  /** When each live generation last committed its checkpoint, keyed by physical name. */
  private readonly checkpointedAt = new Map<string, number>();
  private readonly leases: LeaseKeeper | null;
  /** Workers this runner hosts (projection.ts: input other than the log). */
  private readonly workers = new Map<string, Worker>();
  /** Positions writers of this process wait to read (read-your-writes), with the views they wait on. */
  private readonly wants = new Set<{ position: Position; names: ReadonlySet<string> }>();
  /** Projections whose live generation this process applies right now (it holds their lease). */
  private readonly following = new Set<string>();
  /** The 'applied' signal of this turn of the event loop, when one is scheduled (see `markApplied`). */
  private appliedSignal: NodeJS.Immediate | null = null;
  /** Live batches' commits of one turn of the event loop, made as one transaction. */
  private readonly liveCommits: SharedCommits;
  /** What the watch looks at (`watchAll`), by projection name; its one timer runs while any is followed. */
  private readonly watched = new Map<string, Watched>();
  private watchTimer: NodeJS.Timeout | null = null;
  private watching: Promise<void> | null = null;
  /** Physical collection names by projection and generation (`physicalNames`). */
  private readonly physicalByGeneration = new WeakMap<Projection, Map<number, ReadonlyMap<string, string>>>();
  /** Projections whose live batch waits in `liveCommits` for its commit. */
  private readonly committing = new Set<string>();
  /** The one read of the log that feeds every live processor of this runner. */
  private readonly log: LogFanout;

  constructor(
    private readonly events: EventStore,
    private readonly views: ReadStore,
    projections: Projection[],
    private readonly options: RunnerOptions,
  ) {
    this.registry = new ProjectionRegistry(views);
    this.liveCommits = new SharedCommits(views);
    this.byName = new Map(projections.map((p) => [p.name, p]));
    this.batchSize = options.batchSize ?? 500;
    this.rebuildBatchSize = options.rebuildBatchSize ?? this.batchSize;
    this.progress.setMaxListeners(0);
    this.log = new LogFanout(events, { pageSize: this.batchSize });
    this.leases = options.leases ?? (options.coordination ? new LeaseKeeper(options.coordination, options.owner, { ttlMs: options.leaseTtlMs, logger: options.logger }) : null);
  }

  get projections(): Projection[] {
    return [...this.byName.values()];
  }

  async init(): Promise<void> {
    await this.registry.init();
  }

  /** Starts following the log for every processor; returns once each has its views in place. */
  async start(): Promise<void> {
    await this.init();
    this.startHead = await this.events.headPosition();
    for (const projection of this.byName.values()) if (!this.live.has(projection.name)) await this.startLive(projection);
  }

  /**
   * Adds one more processor and starts it: reactors that a context builds once its own
   * dependencies exist (the automatic-incident reactor needs the incident id allocator).
   */
  async run(processor: Projection): Promise<void> {
    if (this.byName.has(processor.name)) throw new Error(`A processor named "${processor.name}" is already registered`);
    this.byName.set(processor.name, processor);
    if (this.stopping) return;
    await this.init();
    await this.startLive(processor);
  }

  /**
   * Hosts a worker (see `Worker`): its collections and checkpoint where processors keep theirs,
   * its lease, its start and stop with the runner's. Returns once it has started.
   */
  async host(worker: Worker): Promise<void> {
    const { name } = worker;
    if (this.byName.has(name) || this.workers.has(name)) throw new Error(`A processor named "${name}" is already registered`);
    this.workers.set(name, worker);
    if (this.stopping) return;
    await this.init();
    for (const spec of worker.collections) await this.views.ensureCollection({ ...spec, name: physicalCollection(name, 1, spec.name) });
    const lease = `projection:${name}`;
    const host = this.workerHost(worker, lease);
    this.states.set(name, 'standby');
    // The lease holder carries earlier state over and writes the pointer; the others wait for it.
    while (!(await this.registry.pointer(name))) {
      if (this.stopping) return;
      if (!(await this.holdLease(lease))) {
        await this.sleep(500);
        continue;
      }
      const adopted = (await worker.adopt?.(host)) ?? null;
      await this.views.commit([
        this.registry.pointerWrite({ name, version: 1, generation: 1 }),
        ...(adopted === null ? [] : [this.registry.checkpointWrite(name, 1, adopted)]),
      ]);
    }
    if (this.stopping) return;
    this.states.set(name, 'running');
    await worker.start(host);
  }

  private workerHost(worker: Worker, lease: string): WorkerHost {
    const { name } = worker;
    return {
      collection: (collection) => {
        if (!worker.collections.some((c) => c.name === collection)) throw new Error(`Worker ${name} uses undeclared collection "${collection}"`);
        return physicalCollection(name, 1, collection);
      },
      checkpoint: async () => (await this.registry.checkpoint(name, 1)).position,
      moveCheckpoint: async (from, to) => {
        try {
          await this.views.commit([this.registry.checkpointWrite(name, 1, to)], { expect: [this.registry.checkpointUnchanged(name, 1, from)] });
        } catch (error) {
          if (error instanceof PreconditionFailedError) return false;
          throw error;
        }
        this.applied.set(name, { generation: 1, position: to });
        return true;
      },
      holds: () => this.holdLease(lease),
      onApplied: (listener) => this.onApplied(listener),
    };
  }

  private async startLive(projection: Projection): Promise<void> {
    // Once per processor: `run` may start one before `start` (a context built while the
    // process already listens), and two loops of one processor would never both stop.
    this.live.add(projection.name);
    const ready = new Promise<void>((resolve) => this.progress.once(`ready:${projection.name}`, resolve));
    const loop = this.runLive(projection);
    this.loops.push(loop);
    await Promise.race([ready, loop]);
  }

  /** Finishes the batch under way, closes subscriptions and releases leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.workers.values()].map(async (worker) => {
        await worker.stop().catch((error) => this.options.logger.warn({ err: error, worker: worker.name }, 'worker stop failed'));
        this.states.set(worker.name, 'stopped');
        await this.leases?.release(`projection:${worker.name}`).catch(() => undefined);
      }),
    );
    await Promise.all([...this.closers].map((close) => close()));
    await Promise.allSettled(this.loops);
    await Promise.allSettled(this.lateClosings);
  }

  /**
   * Registers what ends a wait when the runner stops; returns its unregister. Once `stop()` has
   * begun, `close` runs at once: a loop that was past its `stopping` check when stop() came (a
   * stop during start, while a processor went from its lease to its live read) otherwise opened
   * a read nobody would close, and stop() waited for that loop for ever.
   */
  private onStop(close: () => Promise<void>): () => void {
    if (this.stopping) {
      this.lateClosings.push(close().catch(() => undefined));
      return () => undefined;
    }
    this.closers.add(close);
    return () => this.closers.delete(close);
  }

  private projection(name: string): Projection {
    const projection = this.byName.get(name);
    if (!projection) throw new Error(`Unknown projection "${name}". Known: ${[...this.byName.keys()].join(', ')}`);
    return projection;
  }

  private async runLive(projection: Projection): Promise<void> {
    const { name } = projection;
    while (!this.stopping) {
      try {
        if (!(await this.holdLease(`projection:${name}`))) {
          this.states.set(name, 'standby');
          this.progress.emit(`ready:${name}`);
          await this.sleep(this.options.leaseTtlMs ?? 10_000);
          continue;
        }
        let pointer = await this.registry.pointer(name);
        if (!pointer) {
          pointer = { name, version: projection.version, generation: 1 };
          await this.ensureCollections(projection, 1);
          await this.views.commit([this.registry.pointerWrite(pointer), ...(await this.firstRunWrites(projection))]);
        } else if (pointer.version !== projection.version && isReactor(projection)) {
          // A reactor's state is not rebuilt from history: its new code goes on from the checkpoint.
          pointer = { ...pointer, version: projection.version };
          await this.views.commit([this.registry.pointerWrite(pointer)]);
        } else if (pointer.version !== projection.version) {
          this.options.logger.info({ projection: name, from: pointer.version, to: projection.version }, 'projection version changed: rebuilding');
          await this.rebuild(name, this.rebuildProgressLog(), { resume: true });
          continue;
        }
        await this.ensureCollections(projection, pointer.generation);
        this.states.set(name, 'running');
        this.progress.emit(`ready:${name}`);
        await this.follow(projection, pointer.generation, { watchPointer: true, leaseName: `projection:${name}` });
      } catch (error) {
        if (error instanceof Stopped || this.stopping) break;
        if (error instanceof PreconditionFailedError) {
          // Another process moved the checkpoint: this one lost its lease (a long pause) and must
          // not overwrite that work. Back to the lease, then on from the new checkpoint.
          this.options.logger.warn({ projection: name, checkpoint: error.actual }, 'projection applied elsewhere; batch dropped');
          continue;
        }
        if (error instanceof ViewsBehindError) {
          // A handler that reads views at its event's position waited for them, bounded
          // (`ReadYourWrites.waitFor`), and they are not there yet: an on-start rebuild, or views
          // started after this processor. Not a failure: the batch is handled again at once,
          // and its handler waits again.
          this.options.logger.info({ projection: name, position: error.position, waited_ms: error.waitedMs, views: this.progressOf(error.projections) }, 'processor waits for views to reach its event');
          continue;
        }
        this.states.set(name, 'failed');
        this.progress.emit(`ready:${name}`);
        this.options.logger.error({ err: error, projection: name }, 'projection failed; retrying');
        await this.sleep(1000);
      }
    }
    this.states.set(name, 'stopped');
    await this.leases?.release(`projection:${name}`).catch(() => undefined);
  }

  /** How far each of `names` has got here, for a line saying what a processor waits for. */
  private progressOf(names: readonly string[]): Array<{ name: string; state: string; applied: Position | null; rebuild_remaining?: number }> {
    const rebuilds = new Map(this.rebuildsRunning().map(({ name, remaining }) => [name, remaining]));
    return names.map((name) => ({
      name,
      state: this.byName.has(name) ? whyBehind(this.states.get(name)) : 'applied by another process',
      applied: this.appliedPosition(name),
      ...(rebuilds.has(name) ? { rebuild_remaining: rebuilds.get(name) } : {}),
    }));
  }

  /** A reactor's first checkpoint: adopted state, the log's head (`startFrom: 'end'`), or nothing. */
  private async firstRunWrites(projection: Projection): Promise<ViewWrite[]> {
    if (!isReactor(projection)) return [];
    const adopted = await projection.adopt?.(this.views);
    if (adopted) {
      const docs: ViewWrite[] = adopted.docs.map(({ collection, doc }) => ({ op: 'put', collection: physicalCollection(projection.name, 1, collection), doc }));
      return adopted.position === null ? docs : [...docs, this.registry.checkpointWrite(projection.name, 1, adopted.position)];
    }
    const head = projection.startFrom === 'end' ? await this.events.headPosition() : null;
    return head === null ? [] : [this.registry.checkpointWrite(projection.name, 1, head)];
  }

  private async holdLease(lease: string): Promise<boolean> {
    return this.leases ? this.leases.hold(lease) : true;
  }

  /**
   * Creates the generation's collections and indexes. `unique`: only the unique indexes (a
   * rebuild's, see `rebuild`); returns the collections whose other indexes are left for later.
   */
  private async ensureCollections(projection: Projection, generation: number, indexes: 'all' | 'unique' = 'all'): Promise<Set<string>> {
    const deferred = new Set<string>();
    for (const spec of projection.collections) {
      const kept = indexes === 'all' ? spec.indexes : spec.indexes.filter((index) => index.unique);
      if (kept.length < spec.indexes.length) deferred.add(spec.name);
      await this.views.ensureCollection({ ...spec, indexes: kept, name: physicalCollection(projection.name, generation, spec.name) });
    }
    return deferred;
  }

  /**
   * Applies the log live to one generation from its checkpoint: until stopped, the pointer moves
   * away (another process swapped in a rebuild), or the lease is lost. A rebuild reads pages
   * instead (`replay`).
   */
  private async follow(
    projection: Projection,
    generation: number,
    options: { watchPointer?: boolean; leaseName?: string },
  ): Promise<void> {
    const { name } = projection;
    const checkpoint = await this.registry.checkpoint(name, generation);
    /** The checkpoint as stored: each commit expects it unchanged, which fences a writer that lost its lease. */
    let stored = checkpoint.position;
    this.markApplied(name, generation, checkpoint.position);
    this.following.add(name);

    /**
     * The projection is woken only by events it has a handler for: the runner's one read of the
     * log passes the others over as it reads them, and they count as applied once every handled
     * event before them is (their checkpoint is written when the projection is quiet, as an idle
     * batch's was).
     */
    /** Applied by an idle batch whose checkpoint was skipped; written once the projection is quiet. */
    let unflushed: Position | null = null;
    let handedOver: Position | null = null;
    let passedOver: Position | null = null;
    const { handlers } = projection;
    const source = this.log.open({
      after: checkpoint.position,
      takes: (type) => Object.prototype.hasOwnProperty.call(handlers, type),
      report: {
        handed: (position) => {
          handedOver = position;
        },
        passed: (position) => {
          if (handedOver !== null) {
            passedOver = position;
            return;
          }
          unflushed = position;
          this.markApplied(name, generation, position);
        },
      },
    });
    // Known while this process follows: a refused batch, a lost lease or a swap ends the loop, and the next follow starts afresh.
    const kept = projection.keepsDocuments ? new KeptDocuments() : null;
    const close = () => source.close();
    const unregister = this.onStop(close);
    /** Batch commits and the quiet-time flush run one at a time: each expects the checkpoint the other left. */
    let commits: Promise<unknown> = Promise.resolve();
    const serially = <T>(work: () => Promise<T>): Promise<T> => {
      const run = commits.then(work);
      commits = run.catch(() => undefined);
      return run;
    };
    const flushIdle = () =>
      serially(async () => {
        const flushing = unflushed;
        if (flushing === null) return;
        await this.liveCommits.commit([this.registry.checkpointWrite(name, generation, flushing)], {
          expect: [this.registry.checkpointUnchanged(name, generation, stored)],
        });
        stored = flushing;
        // Events passed over while it committed stay to be flushed.
        if (unflushed === flushing) unflushed = null;
        this.checkpointedAt.set(`${name}#${generation}`, Date.now());
      });
    const unwatch = this.watch({ projection, generation, leaseName: options.leaseName, watchPointer: options.watchPointer ?? false, close, flushIdle });
    try {
      const gatherMs = this.options.liveGatherMs ?? 5;
      for await (const batch of batches(source, { max: this.batchSize, gatherMs, demand: this.demandOf(name) })) {
        let { position, committed } = await serially(() => this.applyBatch(projection, generation, batch, true, stored, undefined, kept));
        if (committed) stored = position;
        if (handedOver === position) {
          // Nothing handled is waiting: what was passed over meanwhile is applied too.
          handedOver = null;
          if (passedOver !== null && passedOver > position) {
            position = passedOver;
            committed = false;
          }
          passedOver = null;
        }
        unflushed = committed ? null : position;
        this.markApplied(name, generation, position);
        // SQLite work is synchronous: without a turn of the event loop between batches, catching
        // up on a large import would hold every request of the process until the last batch.
        await nextTurn();
      }
    } finally {
      this.following.delete(name);
      unwatch();
      unregister();
      await source.close();
      // Stopping (or losing the lease) leaves the stored position where this process got, a
      // passed-over tail included, so `projections status` shows no lag that is not there. The
      // write is fenced like a batch's: another holder's progress is never overwritten.
      await flushIdle().catch((error) => this.logFlushFailure(name, error));
    }
    if (this.stopping) throw new Stopped();
  }

  private logFlushFailure(projection: string, error: unknown): void {
    if (error instanceof PreconditionFailedError) return; // moved elsewhere meanwhile: theirs stands
    this.options.logger.warn({ err: error, projection }, 'projection checkpoint not written at stop; the next start re-reads the events passed over');
  }

  /**
   * Every second or so: follow a swap made elsewhere, give up a lost lease, and write the
   * checkpoint of idle batches once the projection is quiet, so the stored position (what
   * `projections status` and other processes read) does not stay behind after the last event.
   * One timer for every live generation this process follows (a dozen): their quiet-time
   * checkpoints go out in the same turn (one shared commit) and their pointers are read at once.
   * Returns the unwatch.
   */
  private watch(watched: Watched): () => void {
    const key = watched.projection.name;
    this.watched.set(key, watched);
    if (!this.watchTimer) {
      const every = Math.min(this.options.pointerCheckMs ?? 1000, (this.options.leaseTtlMs ?? 10_000) / 3);
      this.watchTimer = setInterval(() => {
        // A look still under way (a slow store) is not overtaken by the next.
        this.watching ??= this.watchAll().finally(() => {
          this.watching = null;
        });
      }, every);
    }
    return () => {
      if (this.watched.get(key) !== watched) return;
      this.watched.delete(key);
      if (this.watched.size === 0 && this.watchTimer) {
        clearInterval(this.watchTimer);
        this.watchTimer = null;
      }
    };
  }

  private async watchAll(): Promise<void> {
    const all = [...this.watched.values()];
    let pointers: Map<string, ProjectionPointer> | null = null;
    try {
      pointers = await this.registry.pointers(all.filter((w) => w.watchPointer).map((w) => w.projection.name));
    } catch (error) {
      this.options.logger.warn({ err: error }, 'projection watch check failed');
    }
    // Each on its own (a slow flush holds up only its projection), started in the same turn.
    await Promise.all(
      all.map(async (w) => {
        try {
          await w.flushIdle().catch(async (error) => {
            if (!(error instanceof PreconditionFailedError)) throw error;
            await w.close(); // applied elsewhere meanwhile: this process lost its lease
          });
          const moved = w.watchPointer && pointers !== null && pointers.get(w.projection.name)?.generation !== w.generation;
          const leaseLost = w.leaseName !== undefined && !(await this.holdLease(w.leaseName));
          if (moved) this.options.logger.info({ projection: w.projection.name, from_generation: w.generation }, 'projection rebuilt elsewhere: following the new generation');
          if (moved || leaseLost) await w.close();
        } catch (error) {
          this.options.logger.warn({ err: error, projection: w.projection.name }, 'projection watch check failed');
        }
      }),
    );
  }

  private async applyBatch(
    projection: Projection,
    generation: number,
    batch: RecordedEvent[],
    live: boolean,
    stored: Position | null,
    beforeFind?: (collection: string) => Promise<void>,
    kept: KeptDocuments | null = null,
  ): Promise<{ position: Position; committed: boolean }> {
    const physical = this.physicalNames(projection, generation);
    const transaction = new BatchViewTransaction(
      this.views,
      (collection) => {
        const name = physical.get(collection);
        if (name === undefined) throw new Error(`Projection ${projection.name} writes undeclared collection "${collection}"`);
        return name;
      },
      beforeFind,
      kept,
    );
    if (projection.prefetch) await transaction.prefetch(wantedBy(projection, batch, (collection, id) => transaction.knows(collection, id)));
    for (const event of batch) {
      const handler = projection.handlers[event.type];
      if (handler) await handler(event, transaction);
    }
    const position = batch[batch.length - 1].position;
    const writes = transaction.writes();
    if (live && writes.length === 0 && !this.idleCheckpointDue(projection.name, generation)) return { position, committed: false };
    // A rebuild's checkpoint names the version it builds: a stopped rebuild resumes only its own (`unfinishedRebuild`).
    const commit = [...writes, this.registry.checkpointWrite(projection.name, generation, position, live ? undefined : projection.version)];
    const fenced = { expect: [this.registry.checkpointUnchanged(projection.name, generation, stored)] };
    if (!live) await this.views.commit(commit, fenced);
    else {
      const completes = this.completesWait(projection.name, position);
      this.committing.add(projection.name);
      try {
        await this.liveCommits.commit(commit, fenced, completes);
      } finally {
        this.committing.delete(projection.name);
      }
    }
    transaction.committed();
    this.checkpointedAt.set(`${projection.name}#${generation}`, Date.now());
    return { position, committed: true };
  }

  /**
   * Each declared collection's physical name in a generation, made once: a batch resolves a name
   * on every get and put (a probed check's rollups about twenty), and a new string each time
   * was also a new hash for every map keyed by it.
   */
  private physicalNames(projection: Projection, generation: number): ReadonlyMap<string, string> {
    let generations = this.physicalByGeneration.get(projection);
    if (!generations) this.physicalByGeneration.set(projection, (generations = new Map()));
    let names = generations.get(generation);
    if (!names) {
      names = new Map(projection.collections.map((c) => [c.name, physicalCollection(projection.name, generation, c.name)]));
      generations.set(generation, names);
    }
    return names;
  }

  /**
   * Skipping the checkpoint of a live batch that wrote nothing (no event of it handled, or
   * handlers that changed no document) is safe: its checkpoint moves with the next batch that
   * commits, or in the quiet-time flush, and replaying it after a crash changes no view again
   * (a reactor's effects outside the read store are idempotent, as for a batch that failed
   * part-way). It saves a read-store commit per projection per append: the reactors that take
   * every check (SLO burn, automatic incidents) change nothing on most of them.
   */
  private idleCheckpointDue(name: string, generation: number): boolean {
    const last = this.checkpointedAt.get(`${name}#${generation}`) ?? 0;
    return Date.now() - last >= (this.options.idleCheckpointMs ?? 1000);
  }

  /**
   * A writer of this process waits until the named views applied `position` (read-your-writes):
   * their live batches stop gathering once they hold it, so the wait is the apply and commit,
   * not the gathering interval. Call the returned function when the wait ends.
   */
  want(position: Position, names: readonly string[]): () => void {
    const wanted = { position, names: new Set(names) };
    this.wants.add(wanted);
    this.progress.emit('want');
    return () => {
      this.wants.delete(wanted);
    };
  }

  /**
   * Whether this batch of `name`, up to `position`, is the last piece a waiting writer of this
   * process needs: every other view it waits on has applied its position, has its commit
   * pending beside this one, or is applied by another process. Its commit is then made at once
   * (SharedCommits, `awaited`); a writer waiting on several views still gets their batches in
   * one transaction.
   */
  private completesWait(name: string, position: Position): boolean {
    for (const wanted of this.wants) {
      if (wanted.position > position || !wanted.names.has(name)) continue;
      let complete = true;
      for (const other of wanted.names) {
        if (other === name || this.committing.has(other) || !this.following.has(other)) continue;
        const applied = this.applied.get(other)?.position ?? null;
        if (applied === null || applied < wanted.position) complete = false;
      }
      if (complete) return true;
    }
    return false;
  }

  /** Whether a writer of this process waits for `name` to apply `position` (or less). */
  private awaited(name: string, position: Position): boolean {
    if (this.wants.size === 0) return false;
    for (const wanted of this.wants) if (wanted.position <= position && wanted.names.has(name)) return true;
    return false;
  }

  private demandOf(name: string): BatchDemand<RecordedEvent> {
    return {
      met: (batch) => this.awaited(name, batch[batch.length - 1].position),
      onChange: (listener) => {
        this.progress.on('want', listener);
        return () => this.progress.off('want', listener);
      },
    };
  }

  /**
   * Records how far a projection got and tells the listeners (writers waiting for their write,
   * workers) once per turn of the event loop: every projection passes over each event it takes
   * no handler for, and a signal per projection per event woke each waiting writer about ten
   * times per append, each wake a check of its own.
   */
  private markApplied(name: string, generation: number, position: Position | null): void {
    this.applied.set(name, { generation, position });
    const swapped = this.swappedIn.get(name);
    if (swapped !== undefined && generation >= swapped) this.swappedIn.delete(name);
    // A writer waiting for this position hears it once the current task's promises have run,
    // not at the next turn of the loop (read-your-writes: the turn held its answer back).
    if (position !== null && this.awaited(name, position)) {
      queueMicrotask(() => this.progress.emit('applied'));
      return;
    }
    this.appliedSignal ??= setImmediate(() => {
      this.appliedSignal = null;
      this.progress.emit('applied');
    });
  }

  /**
   * A log line at most every REBUILD_PROGRESS_EVERY_MS during an on-start rebuild: minutes on a
   * large log would otherwise pass silent between "rebuilding" and "swapped in".
   */
  private rebuildProgressLog(): (progress: RebuildProgress) => void {
    const started = Date.now();
    let loggedAt = started;
    return ({ name, applied, position, head }) => {
      const now = Date.now();
      if (now - loggedAt < REBUILD_PROGRESS_EVERY_MS) return;
      loggedAt = now;
      const perSecond = Math.round(applied / Math.max(0.001, (now - started) / 1000));
      this.options.logger.info({ projection: name, applied, position, head, per_second: perSecond }, 'projection rebuilding');
    };
  }

  /**
   * Builds a fresh generation from the whole log while the current one keeps serving, then swaps
   * the pointer in one write and drops the old generation after a grace period. `resume` (the
   * on-start rebuild): a generation a stopped or killed rebuild of this same version left
   * unswapped is continued from its checkpoint instead (`unfinishedRebuild`); `applied` then
   * counts the events this call applied.
   */
  async rebuild(name: string, onProgress?: (progress: RebuildProgress) => void, options: { resume?: boolean } = {}): Promise<{ generation: number; applied: number }> {
    const projection = this.projection(name);
    if (isReactor(projection)) throw new Error(`"${name}" is a reactor: its effects are not replayed, so it is never rebuilt`);
    await this.init();
    if (!(await this.holdLease(`projection-rebuild:${name}`))) {
      throw new Error(`A rebuild of "${name}" is already running elsewhere`);
    }
    // A live runner that rebuilds in its own process goes back to what it was doing (its live
    // loop follows the swap by watching the pointer): left 'rebuilding', it read as behind for
    // ever (liveness, status) and its writers' read-your-writes waits never ended.
    const stateBefore = this.states.get(name);
    this.states.set(name, 'rebuilding');
    const previous = await this.registry.pointer(name);
    try {
      const highest = await this.highestGeneration(name);
      const unfinished = options.resume ? await this.unfinishedRebuild(projection, previous, highest) : null;
      const generation = unfinished?.generation ?? highest + 1;
      if (unfinished) this.options.logger.info({ projection: name, generation, position: unfinished.position, head: await this.events.headPosition() }, 'projection rebuild resumed from its checkpoint');
      else await this.dropGeneration(projection, generation);
      // Lookup indexes are built once the generation is filled, or before a handler's first find
      // in their collection: kept up to date row by row they cost about half of the view writes
      // (one sorted build costs a tenth of that). Unique ones stay from the start: they refuse rows.
      const unindexed = await this.ensureCollections(projection, generation, 'unique');
      const index = async (collection: string) => {
        if (!unindexed.delete(collection)) return;
        const spec = projection.collections.find((c) => c.name === collection)!;
        await this.views.ensureCollection({ ...spec, name: physicalCollection(name, generation, collection) });
      };
      let applied = 0;
      const progressed = async (position: Position | null) => {
        const head = await this.events.headPosition();
        this.rebuilds.set(name, { position, head });
        onProgress?.({ name, applied, position, head });
      };
      await progressed(unfinished?.position ?? null);
      await this.replay(projection, generation, index, async (count, position) => {
        applied += count;
        await progressed(position);
      });
      for (const collection of [...unindexed]) await index(collection);
      await this.views.commit([this.registry.pointerWrite({ name, version: projection.version, generation })]);
      // A live loop already on the new generation (it followed the pointer meanwhile) is not behind it.
      if ((this.applied.get(name)?.generation ?? 0) < generation) this.swappedIn.set(name, generation);
      this.options.logger.info({ projection: name, generation, applied }, 'projection rebuilt and swapped in');
      if (previous) this.scheduleDrop(projection, previous.generation);
      return { generation, applied };
    } finally {
      this.rebuilds.delete(name);
      if (this.states.get(name) === 'rebuilding') {
        if (stateBefore === undefined) this.states.delete(name);
        else this.states.set(name, stateBefore);
      }
      await this.leases?.release(`projection-rebuild:${name}`).catch(() => undefined);
    }
  }

  /**
   * A rebuild's pass over the log: a page at a time (`readAll`), each page one batch whose view
   * writes commit with its checkpoint, fenced like a live batch, until the page that reaches the
   * head as it stands then. No subscription and no gathering: those serve a live projection
   * waiting for the next append, and cost a promise and an async step per event. A rebuild
   * stopped part-way leaves a checkpoint its generation's views agree with.
   */
  private async replay(
    projection: Projection,
    generation: number,
    beforeFind: (collection: string) => Promise<void>,
    onBatch: (count: number, position: Position) => void,
  ): Promise<void> {
    let stored = (await this.registry.checkpoint(projection.name, generation)).position;
    let target = await this.events.headPosition();
    const read = (after: Position | null) => {
      const page = this.events.readAll({ after, maxCount: this.rebuildBatchSize });
      // Handled at once: it may fail while the page before it applies (the await below still
      // throws it), or be left unread when the rebuild stops or a batch fails.
      page.catch(() => undefined);
      return page;
    };
    // The next page is asked for before this one applies: a store that reads off the event loop
    // (a server such as EventStoreDB) reads it while this one's views commit.
    let next = target !== null && (stored === null || stored < target) ? read(stored) : null;
    while (next !== null) {
      if (this.stopping) throw new Stopped();
      const page = await next;
      next = null;
      // Only events readAll leaves out (another store's system events) lie between here and the head.
      if (page.length === 0) break;
      const last = page[page.length - 1].position;
      if (last < target!) next = read(last);
      const { position } = await this.applyBatch(projection, generation, page, false, stored, beforeFind);
      stored = position;
      onBatch(page.length, position);
      // SQLite work is synchronous: a turn of the event loop between batches keeps the process answering.
      await nextTurn();
      if (next === null) {
        target = await this.events.headPosition();
        if (target !== null && position < target) next = read(position);
      }
    }
    if (this.stopping) throw new Stopped();
  }

  /**
   * The generation a stopped or killed rebuild left unswapped, when it can go on: the newest
   * generation past the pointer's, its checkpoint written by this projection version. Its rows
   * and checkpoint committed together, batch by batch, so continuing after the checkpoint
   * applies no event twice and skips none. Built by another version (or never checkpointed),
   * it is not continued: the rebuild starts over in a newer generation and that one is dropped
   * with the stale generations.
   */
  private async unfinishedRebuild(projection: Projection, pointer: ProjectionPointer | null, highest: number): Promise<Checkpoint | null> {
    if (highest <= (pointer?.generation ?? 0)) return null;
    const checkpoint = await this.registry.checkpoint(projection.name, highest);
    return checkpoint.position !== null && checkpoint.version === projection.version ? checkpoint : null;
  }

  private async highestGeneration(name: string): Promise<number> {
    const generations = (await this.views.listCollections())
      .map(parsePhysicalCollection)
      .filter((parsed) => parsed?.projection === name)
      .map((parsed) => parsed!.generation);
    const pointer = await this.registry.pointer(name);
    return Math.max(0, pointer?.generation ?? 0, ...generations);
  }

  private scheduleDrop(projection: Projection, generation: number): void {
    const timer = setTimeout(() => {
      unregister();
      this.dropGeneration(projection, generation).catch((error) =>
        this.options.logger.warn({ err: error, projection: projection.name, generation }, 'dropping old generation failed'),
      );
    }, this.options.dropDelayMs ?? 2000);
    const unregister = this.onStop(async () => {
      clearTimeout(timer);
      await this.dropGeneration(projection, generation).catch(() => undefined);
    });
  }

  /**
   * Drops generations a crash or a killed process left behind: swapped-out ones whose grace
   * period (dropDelayMs after the swap) has ended, and unfinished rebuilds nobody is running
   * (their rebuild lease is free). The timer of `scheduleDrop` does not survive a restart; this
   * does (retention calls it every hour). Returns the physical collections dropped.
   */
  async dropStaleGenerations(now = Date.now()): Promise<string[]> {
    await this.init();
    const dropped: string[] = [];
    const collections = (await this.views.listCollections()).map((name) => ({ name, parsed: parsePhysicalCollection(name) }));
    for (const projection of this.byName.values()) {
      const pointer = await this.registry.pointer(projection.name);
      if (!pointer) continue;
      const generations = new Set(collections.filter((c) => c.parsed?.projection === projection.name).map((c) => c.parsed!.generation));
      for (const generation of generations) {
        if (generation === pointer.generation) continue;
        if (generation < pointer.generation) {
          const swappedAt = pointer.swappedAt ? Date.parse(pointer.swappedAt) : 0;
          if (now - swappedAt < (this.options.dropDelayMs ?? 2000)) continue;
        } else {
          if (this.states.get(projection.name) === 'rebuilding') continue;
          const lease = `projection-rebuild:${projection.name}`;
          if (this.options.coordination && !(await this.options.coordination.acquireLease(lease, this.options.owner, 60_000))) continue;
        }
        await this.dropGeneration(projection, generation);
        if (generation > pointer.generation) await this.options.coordination?.releaseLease(`projection-rebuild:${projection.name}`, this.options.owner).catch(() => undefined);
        dropped.push(...projection.collections.map((spec) => physicalCollection(projection.name, generation, spec.name)));
      }
    }
    for (const name of this.options.retired ?? []) {
      if (this.byName.has(name)) continue;
      const left = collections.filter((c) => c.parsed?.projection === name);
      for (const { name: physical } of left) await this.views.dropCollection(physical);
      const generations = new Set(left.map((c) => c.parsed!.generation));
      const pointer = await this.registry.pointer(name);
      if (pointer) generations.add(pointer.generation);
      if (pointer || generations.size > 0) {
        await this.views.commit([...[...generations].map((generation) => this.registry.checkpointDelete(name, generation)), this.registry.pointerDelete(name)]);
      }
      dropped.push(...left.map((c) => c.name));
    }
    return dropped;
  }

  /**
   * The checkpoint goes first: a crash part-way leaves collections without one, which no rebuild
   * continues (`unfinishedRebuild`), never a checkpoint over rows that are gone.
   */
  private async dropGeneration(projection: Projection, generation: number): Promise<void> {
    await this.views.commit([this.registry.checkpointDelete(projection.name, generation)]);
    for (const spec of projection.collections) {
      await this.views.dropCollection(physicalCollection(projection.name, generation, spec.name));
    }
  }

  /**
   * The rebuilds this process runs now, each with the events between its new generation's
   * position and the log's head as of its last batch (the live generation's lag says nothing of
   * a rebuild's progress).
   */
  rebuildsRunning(): { name: string; remaining: number }[] {
    return [...this.rebuilds].map(([name, { position, head }]) => ({ name, remaining: Math.max(0, (head ?? 0) - (position ?? 0)) }));
  }

  async status(): Promise<ProjectionStatus[]> {
    await this.init();
    const head = await this.events.headPosition();
    const result: ProjectionStatus[] = [];
    for (const projection of this.byName.values()) {
      const pointer = await this.registry.pointer(projection.name);
      const position = pointer ? (await this.registry.checkpoint(projection.name, pointer.generation)).position : null;
      result.push({
        name: projection.name,
        kind: projection.kind ?? 'projector',
        version: projection.version,
        activeVersion: pointer?.version ?? null,
        generation: pointer?.generation ?? null,
        position,
        head,
        lag: head === null ? 0 : Math.max(0, head - (position ?? 0)),
        state: this.states.get(projection.name) ?? 'stopped',
      });
    }
    for (const { name } of this.workers.values()) {
      const position = (await this.registry.checkpoint(name, 1)).position;
      const state = this.states.get(name) ?? 'stopped';
      result.push({ name, kind: 'worker', version: 1, activeVersion: 1, generation: 1, position, head, lag: head === null ? 0 : Math.max(0, head - (position ?? 0)), state });
    }
    return result;
  }

  /**
   * Whether this process's processors are live: each one either applies the log and has caught
   * up with it as it stood when the process started, or stands by while a live process holds its
   * lease. Readiness waits for this, so a write answered after ready is visible to the next read.
   */
  liveness(): { live: boolean; behind: Behind[] } {
    const behind: Behind[] = [];
    for (const name of this.byName.keys()) {
      const state = this.states.get(name);
      if (state === 'standby') continue;
      const applied = this.applied.get(name)?.position ?? null;
      const caughtUp = this.startHead === undefined || this.startHead === null || (applied !== null && applied >= this.startHead);
      if (state !== 'running' || !caughtUp) behind.push({ name, why: whyBehind(state) });
    }
    return { live: behind.length === 0, behind };
  }

  /**
   * Whether this process applies the projection's live generation now: then its applied
   * position is the projection's, and nobody else moves the stored checkpoint (a process that
   * lost the lease stops following within a lease check).
   */
  applies(name: string): boolean {
    return this.following.has(name) && !this.behindOwnSwap(name);
  }

  /** Position this process has applied for a projection (in its current generation). */
  appliedPosition(name: string): Position | null {
    if (this.behindOwnSwap(name)) return null;
    return this.applied.get(name)?.position ?? null;
  }

  /**
   * Whether the live loop still applies a generation older than the one this process's rebuild
   * swapped in (the entry goes once it applies that generation: `markApplied`).
   */
  private behindOwnSwap(name: string): boolean {
    return this.swappedIn.has(name);
  }

  onApplied(listener: () => void): () => void {
    this.progress.on('applied', listener);
    return () => this.progress.off('applied', listener);
  }

  /** Waits `ms`, or less: until the runner stops. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        unregister();
        resolve();
      }, ms);
      const unregister = this.onStop(async () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
