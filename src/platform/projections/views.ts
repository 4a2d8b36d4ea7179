import { StoreUnavailableError, type Position } from '../event-store/event-store.port.js';
import { findIds, type AggregateQuery, type AggregateRow, type CollectionStamps, type Doc, type Filter, type FindQuery, type ReadStore } from '../read-store/read-store.port.js';
import { isReactor, type Projection } from './projection.js';
import type { ProjectionRunner } from './projection-runner.js';
import { ProjectionRegistry, physicalCollection } from './registry.js';

/** The physical name of `collection` in a generation, remembered with it. */
function nameIn(generation: { generation: number; names: Map<string, string> }, projection: string, collection: string): string {
  let name = generation.names.get(collection);
  if (name === undefined) {
    name = physicalCollection(projection, generation.generation, collection);
    generation.names.set(collection, name);
  }
  return name;
}

/**
 * The generation serving a view is older than this code can read (`Projection.readableFrom`):
 * an upgrade's rebuild has not swapped in yet. A kind of store unavailability: HTTP answers 503
 * `unavailable` with Retry-After, never an answer read from rows of another shape.
 */
export class ViewRebuildingError extends StoreUnavailableError {
  constructor(
    readonly projection: string,
    readonly servingVersion: number,
    readonly readableFrom: number,
  ) {
    super(`view ${projection} is being rebuilt: its serving generation is version ${servingVersion}, this version reads ${readableFrom} and later`);
    this.name = 'ViewRebuildingError';
  }
}

/** Each projection's `readableFrom`, for the reader (projections without one are left out). */
export function readableVersions(projections: readonly Projection[]): ReadableVersions {
  return new Map(projections.flatMap((p) => (p.readableFrom === undefined ? [] : [[p.name, new Map(Object.entries(p.readableFrom))] as const])));
}

/** Per projection, per collection: the oldest stored version this code reads. */
export type ReadableVersions = ReadonlyMap<string, ReadonlyMap<string, number>>;

/**
 * Query-side access to projection views by logical name. The active generation is looked up
 * through the registry (cached briefly), so an operator's rebuild swaps under running readers.
 * A generation older than its projection's `readableFrom` is refused (`ViewRebuildingError`).
 */
export class ViewReader {
  private readonly registry: ProjectionRegistry;
  private readonly generations = new Map<string, { generation: number; version: number | null; until: number; names: Map<string, string> }>();

  constructor(
    private readonly store: ReadStore,
    private readonly cacheMs = 250,
    /** The oldest stored version of each collection this code reads (see `readableVersions`). */
    readonly readableFrom: ReadableVersions = new Map(),
  ) {
    this.registry = new ProjectionRegistry(store);
  }

  /**
   * A reader of the same views through another connection to them (e.g. the store's off-thread
   * one), refusing the same unreadable generations: one place builds a reader's upgrade guard.
   */
  over(store: ReadStore): ViewReader {
    return new ViewReader(store, this.cacheMs, this.readableFrom);
  }

  async collection(projection: string, collection: string): Promise<string> {
    return this.knownCollection(projection, collection, Date.now()) ?? this.lookUpCollection(projection, collection);
  }

  /** The physical name while the generation looked up last is fresh; undefined once it must be looked up again. */
  private knownCollection(projection: string, collection: string, now: number): string | undefined {
    const cached = this.generations.get(projection);
    if (!cached || cached.until <= now) return undefined;
    this.refuseUnreadable(projection, collection, cached.version);
    return nameIn(cached, projection, collection);
  }

  /** Looks the active generation up again (kept for `cacheMs`), then names the collection in it. */
  private async lookUpCollection(projection: string, collection: string): Promise<string> {
    const previous = this.generations.get(projection);
    const pointer = await this.registry.pointer(projection);
    const generation = pointer?.generation ?? 1;
    const names = previous?.generation === generation ? previous.names : new Map<string, string>();
    const looked = { generation, version: pointer?.version ?? null, until: Date.now() + this.cacheMs, names };
    this.generations.set(projection, looked);
    this.refuseUnreadable(projection, collection, looked.version);
    return nameIn(looked, projection, collection);
  }

  /** Throws when the serving generation's rows of `collection` are older than this code reads. */
  private refuseUnreadable(projection: string, collection: string, version: number | null): void {
    if (version === null) return;
    const oldest = this.readableFrom.get(projection)?.get(collection);
    if (oldest !== undefined && version < oldest) throw new ViewRebuildingError(projection, version, oldest);
  }

  async get(projection: string, collection: string, id: string | number): Promise<Doc | null> {
    return this.store.get(await this.collection(projection, collection), String(id));
  }

  async getMany(projection: string, collection: string, ids: Array<string | number>): Promise<Doc[]> {
    if (ids.length === 0) return [];
    return this.store.getMany(await this.collection(projection, collection), ids.map(String));
  }

  async find(projection: string, collection: string, query: FindQuery): Promise<Doc[]> {
    return this.store.find(await this.collection(projection, collection), query);
  }

  /** The ids `find` would return, in its order (read without the documents where the store can). */
  async findIds(projection: string, collection: string, query: FindQuery): Promise<string[]> {
    return findIds(this.store, await this.collection(projection, collection), query);
  }

  async count(projection: string, collection: string, filter?: Filter): Promise<number> {
    return this.store.count(await this.collection(projection, collection), filter);
  }

  async aggregate(projection: string, collection: string, query: AggregateQuery): Promise<AggregateRow[]> {
    return this.store.aggregate(await this.collection(projection, collection), query);
  }

  /**
   * Stamps of the active generation's collection, tagged with its physical name so that a swap
   * counts as a change; null when the store cannot tell (then do not cache). `scope`: see
   * `ReadStore.stamps`.
   */
  async stamps(projection: string, collection: string, scope?: object): Promise<(CollectionStamps & { collection: string }) | null> {
    if (!this.store.stamps) return null;
    const physical = await this.collection(projection, collection);
    return { collection: physical, ...(await this.store.stamps(physical, scope)) };
  }

  /**
   * For a value derived from several collections: each one's `changed` stamp tagged with its
   * physical name (`<physical>@<changed>`), in `sources` order, in one call that awaits only
   * what it must (a generation to look up again, the store); null when the store cannot tell.
   * `scope`: see `ReadStore.stamps`.
   */
  async changedStamps(sources: ReadonlyArray<{ projection: string; collection: string }>, scope?: object): Promise<string[] | null> {
    if (!this.store.stamps) return null;
    const now = Date.now();
    const physical: string[] = new Array(sources.length);
    for (let i = 0; i < sources.length; i++) {
      const { projection, collection } = sources[i];
      physical[i] = this.knownCollection(projection, collection, now) ?? (await this.lookUpCollection(projection, collection));
    }
    const tagged: string[] = new Array(sources.length);
    for (let i = 0; i < physical.length; i++) tagged[i] = `${physical[i]}@${(await this.store.stamps(physical[i], scope)).changed}`;
    return tagged;
  }

  /** Position the active generation of `projection` has applied (null: nothing yet). */
  async position(projection: string): Promise<Position | null> {
    const pointer = await this.registry.pointer(projection);
    if (!pointer) return null;
    return (await this.registry.checkpoint(projection, pointer.generation)).position;
  }
}

/**
 * The write was appended (it is durable and will be applied), but the views did not show it
 * within the read-your-writes bound. The HTTP edge answers 202 `views_behind` (documented), never
 * the usual success that would promise a GET sees the change.
 */
export class ViewsBehindError extends Error {
  /** What the write made, when its answer must reach the client anyway (a secret shown once). */
  data?: unknown;

  constructor(readonly position: Position, readonly projections: string[], readonly waitedMs: number) {
    super(`Views ${projections.join(', ')} did not reach position ${position} within ${waitedMs} ms`);
    this.name = 'ViewsBehindError';
  }

  /** Rethrows with the write's own answer attached, for the 202 to carry. */
  static carrying(data: unknown): (error: unknown) => never {
    return (error) => {
      if (error instanceof ViewsBehindError) error.data = data;
      throw error;
    };
  }
}

/**
 * What a write appended, as read-your-writes needs it: where its append ended and the events it
 * held (their types name the views that show them). A `StreamCommandResult` is one as it is.
 */
export interface AppendedWrite {
  /** Null or undefined when nothing was appended: there is nothing to wait for. */
  append: { position: Position } | null | undefined;
  appended: ReadonlyArray<{ type: string }>;
}

export interface WriteWaitOptions {
  /**
   * Views to wait for besides those that handle the write's events: a view that shows the write
   * without handling its events, or one kept by a reactor (reactors are never waited for
   * otherwise). Each call site that passes one says why.
   */
  alsoViews?: readonly string[];
  /** Waits this much longer than the configured bound (a write whose views take longer to apply). */
  extraMs?: number;
}

/**
 * Read-your-writes: a command's response waits, bounded, until every view that shows its write
 * has applied the position its append reached. Which views show a write is derived from the
 * projections this process is configured with: every projector with a handler for one of the
 * appended event types. Reactors are left out (their lag, a webhook receiver's slowness, must
 * never hold an answer). Uses the in-process runner's notifications when there is one, and
 * polls the shared store otherwise (an API-only process).
 */
export class ReadYourWrites {
  /** For each event type, the projectors that handle it, in the projection list's order. */
  private readonly projectorsByType = new Map<string, string[]>();

  constructor(
    private readonly reader: ViewReader,
    private readonly runner: ProjectionRunner | null,
    projections: readonly Projection[] = [],
    private readonly options: { timeoutMs: number; pollMs: number } = { timeoutMs: 5000, pollMs: 20 },
  ) {
    for (const projection of projections) {
      if (isReactor(projection)) continue;
      for (const type of Object.keys(projection.handlers)) {
        const names = this.projectorsByType.get(type) ?? [];
        names.push(projection.name);
        this.projectorsByType.set(type, names);
      }
    }
  }

  /** The views that show events of these types: every projector with a handler for one of them. */
  viewsShowing(types: Iterable<string>): string[] {
    const views = new Set<string>();
    for (const type of types) for (const name of this.projectorsByType.get(type) ?? []) views.add(name);
    return [...views];
  }

  /**
   * Returns once every view that shows the write (and `alsoViews`) applied it; throws
   * ViewsBehindError when they did not within the bound, so a write is never answered as if its
   * result were visible.
   */
  async require(write: AppendedWrite, options: WriteWaitOptions = {}): Promise<void> {
    if (!write.append) return;
    const views = this.viewsOf(write, options);
    await this.requireAt(write.append.position, views, this.options.timeoutMs + (options.extraMs ?? 0));
  }

  /**
   * Returns once every named projection reached `position`; throws ViewsBehindError when they did
   * not within `timeoutMs` (a processor's handler that reads views at its event's position: the
   * runner then takes the batch again, as a wait, not a failure).
   */
  async requireAt(position: Position, projections: string[], timeoutMs: number): Promise<void> {
    if (!(await this.waitFor(position, projections, timeoutMs))) throw new ViewsBehindError(position, projections, timeoutMs);
  }

  /** As `require`, but resolves false instead of throwing when the views did not catch up in time. */
  async waitForWrite(write: AppendedWrite, options: WriteWaitOptions = {}): Promise<boolean> {
    if (!write.append) return true;
    return this.waitFor(write.append.position, this.viewsOf(write, options), this.options.timeoutMs + (options.extraMs ?? 0));
  }

  private viewsOf(write: AppendedWrite, options: WriteWaitOptions): string[] {
    const views = this.viewsShowing(write.appended.map((event) => event.type));
    for (const name of options.alsoViews ?? []) if (!views.includes(name)) views.push(name);
    return views;
  }

  /**
   * Resolves true once every named projection reached `position`, false on timeout. For waits
   * that are not a write's answer (a CLI catching up with the log's head); a write's handler
   * uses `require`, which names the views from what it appended.
   */
  async waitFor(position: Position, projections: readonly string[], timeoutMs = this.options.timeoutMs): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    let sharedAt = Date.now();
    /**
     * A view this process's runner applies live is read from the runner (its applied position is
     * the view's); the shared store is asked for the others, and for those too at most every
     * `pollMs`, in case this process lost the lease to another one. Asking the store at every
     * wake cost two read-store reads per waiting writer per batch.
     */
    const reached = async () => {
      const askStore = Date.now() - sharedAt >= this.options.pollMs;
      if (askStore) sharedAt = Date.now();
      for (const name of projections) {
        const local = this.runner?.appliedPosition(name);
        if (local !== undefined && local !== null && local >= position) continue;
        if (!askStore && this.runner?.applies(name)) return false;
        const shared = await this.reader.position(name);
        if (shared === null || shared < position) return false;
      }
      return true;
    };
    if (await reached()) return true;
    // The runner of this process cuts its gathering short for this position.
    const release = this.runner?.want(position, projections);
    try {
      while (!(await reached())) {
        if (Date.now() >= deadline) return false;
        await this.nextChange(Math.min(this.options.pollMs, deadline - Date.now()));
      }
      return true;
    } finally {
      release?.();
    }
  }

  private nextChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        unsubscribe?.();
        resolve();
      };
      const timer = setTimeout(done, ms);
      const unsubscribe = this.runner?.onApplied(done);
    });
  }
}
