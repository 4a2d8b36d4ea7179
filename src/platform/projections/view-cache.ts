import type { CollectionStamps } from '../read-store/read-store.port.js';
import type { ViewReader } from './views.js';
import { trimOldest } from '../lru.js';

export interface ViewCacheOptions {
  /**
   * `changed` (default): valid until any write to the collection, for results of queries.
   * `rewritten`: valid until a document is replaced or deleted, for documents read by id.
   */
  validUntil?: keyof CollectionStamps;
  /** Entries kept; beyond it the least recently stored are dropped (a sixteenth at once: `trimOldest`). */
  capacity?: number;
}

type Stamped = CollectionStamps & { collection: string };

/** Entries tagged with the physical collection and stamp they were read under. */
class StampedEntries<V> {
  private readonly entries = new Map<string, { collection: string; stamp: number; value: V }>();

  constructor(private readonly capacity: number) {}

  valid(key: string, collection: string, stamp: number): V | undefined {
    const entry = this.entries.get(key);
    return entry && entry.stamp === stamp && entry.collection === collection ? entry.value : undefined;
  }

  remember(key: string, collection: string, stamp: number, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { collection, stamp, value });
    trimOldest(this.entries, this.capacity);
  }
}

/**
 * Values read from one view collection, served again while its stamp (read before the value, see
 * `ReadStore.stamps`) is unchanged, so a write committed by any process is seen by the next get.
 * Values are shared between callers: treat them as read-only. Without stamps (MongoDB), every
 * get loads. Nothing is kept for a load that returns null.
 */
export class ViewCache<V> {
  private readonly entries: StampedEntries<V>;
  private readonly validUntil: keyof CollectionStamps;

  constructor(
    private readonly reader: ViewReader,
    private readonly projection: string,
    private readonly collection: string,
    options: ViewCacheOptions = {},
  ) {
    this.validUntil = options.validUntil ?? 'changed';
    this.entries = new StampedEntries(options.capacity ?? 10_000);
  }

  /** `scope`: one object per request lets its gets share one look at other processes' commits. */
  async get(key: string, load: () => Promise<V | null>, scope?: object): Promise<V | null> {
    const stamps = await this.reader.stamps(this.projection, this.collection, scope);
    if (!stamps) return load();
    const stamp = stamps[this.validUntil];
    const cached = this.entries.valid(key, stamps.collection, stamp);
    if (cached !== undefined) return cached;
    const value = await load();
    if (value !== null) this.entries.remember(key, stamps.collection, stamp, value);
    return value;
  }
}

/**
 * Lists read from one view collection: the ids each query returned, kept while the collection is
 * unchanged (`changed`), and a value per document, kept until documents are rewritten
 * (`rewritten`), so inserts only cost the list query again. One stamp read per list, before
 * anything else is read. Values are shared: treat them as read-only.
 */
export class ViewListCache<V> {
  private readonly lists: StampedEntries<string[]>;
  private readonly values: StampedEntries<V>;

  constructor(
    private readonly reader: ViewReader,
    private readonly projection: string,
    private readonly collection: string,
    options: { lists: number; values: number },
  ) {
    this.lists = new StampedEntries(options.lists);
    this.values = new StampedEntries(options.values);
  }

  /**
   * The values of the documents `findIds` returns for the query named `queryKey`, in its order:
   * cached ones as they are, the others from `loadMany` (ids it does not return are left out).
   * `scope`: see `ViewCache.get`.
   */
  async list(
    queryKey: string,
    findIds: () => Promise<string[]>,
    loadMany: (ids: string[]) => Promise<Array<[string, V]>>,
    scope?: object,
  ): Promise<V[]> {
    const stamps = await this.reader.stamps(this.projection, this.collection, scope);
    const ids = stamps ? await this.ids(stamps, queryKey, findIds) : await findIds();
    if (!stamps) return ordered(ids, new Map(await loadMany(ids)));
    const found = new Map<string, V>();
    const missing: string[] = [];
    for (const id of ids) {
      const value = this.values.valid(id, stamps.collection, stamps.rewritten);
      if (value === undefined) missing.push(id);
      else found.set(id, value);
    }
    if (missing.length > 0) {
      for (const [id, value] of await loadMany(missing)) {
        found.set(id, value);
        this.values.remember(id, stamps.collection, stamps.rewritten, value);
      }
    }
    return ordered(ids, found);
  }

  private async ids(stamps: Stamped, queryKey: string, findIds: () => Promise<string[]>): Promise<string[]> {
    const cached = this.lists.valid(queryKey, stamps.collection, stamps.changed);
    if (cached) return cached;
    const ids = await findIds();
    this.lists.remember(queryKey, stamps.collection, stamps.changed, ids);
    return ids;
  }
}

function ordered<V>(keys: string[], values: Map<string, V>): V[] {
  const result: V[] = [];
  for (const key of keys) {
    const value = values.get(key);
    if (value !== undefined) result.push(value);
  }
  return result;
}

/** One view collection a derived value is read from: projection and logical collection name. */
export interface ViewSource {
  projection: string;
  collection: string;
  /**
   * For collections written all the time (one write per check, say): a value read before a
   * write to this source is still served for up to this many milliseconds after it was loaded,
   * so a busy collection costs at most one load per key per period instead of one per write.
   * Omitted: any write to the source invalidates at once.
   */
  lagMs?: number;
}

interface DerivedEntry<V> {
  value: V;
  validUntil: number;
  /** Physical collection and `changed` stamp of each source, in `sources` order, read before loading. */
  stamps: string[];
  loadedAt: number;
}

/**
 * Values derived from several view collections (a page composed of projects, incidents, alert
 * states...): served again while every source's `changed` stamp (read before the value) is the
 * same and the time the loader said the value stays exact has not come, so a write acknowledged by
 * any process, or a clock crossing a boundary the value depends on, is seen by the next get
 * (within `lagMs` for sources that declare one). Requests that miss together under the same
 * stamps share one load. Without stamps (MongoDB), every get loads. Values are shared: treat
 * them as read-only.
 */
export class DerivedViewCache<V> {
  private readonly entries = new Map<string, DerivedEntry<V>>();
  private readonly loading = new Map<string, Promise<{ value: V; validUntil: number } | null>>();
  private readonly capacity: number;
  /**
   * The stamps read under the last scope: gets passing the same scope (one request's, see
   * `ReadStore.stamps`) compare against one read of them.
   */
  private lastLook: { scope: object; stamps: Promise<string[] | null> } | null = null;

  constructor(
    private readonly reader: ViewReader,
    private readonly sources: ViewSource[],
    options: { capacity?: number } = {},
  ) {
    this.capacity = options.capacity ?? 1_000;
  }

  /**
   * `load` returns the value and the epoch ms until which it is exact (Infinity: while the
   * views are unchanged). `scope`: see `ViewCache.get`.
   */
  async get(key: string, load: () => Promise<{ value: V; validUntil: number } | null>, scope?: object, now = Date.now()): Promise<V | null> {
    return (await this.getServed(key, load, scope, now))?.value ?? null;
  }

  /**
   * As `get`, with the instant until which the value may be served (`until`): its `validUntil`,
   * or sooner when it is served within a source's lag (that source has changed since it was
   * loaded). A value derived from it must not outlive that instant: cached under newer stamps
   * it would otherwise be served until the next write, not the lag's end.
   */
  async getServed(key: string, load: () => Promise<{ value: V; validUntil: number } | null>, scope?: object, now = Date.now()): Promise<{ value: V; until: number } | null> {
    const stamps = await this.stamps(scope);
    if (stamps === null) {
      const loaded = await load();
      return loaded && { value: loaded.value, until: loaded.validUntil };
    }
    const cached = this.entries.get(key);
    if (cached && now < cached.validUntil) {
      const until = this.servedUntil(cached, stamps, now);
      if (until !== null) return { value: cached.value, until };
    }
    const flight = `${key}\u0000${stamps.join('|')}`;
    let pending = this.loading.get(flight);
    if (!pending) {
      pending = load().finally(() => this.loading.delete(flight));
      this.loading.set(flight, pending);
    }
    const loaded = await pending;
    if (loaded === null) return null;
    this.entries.delete(key);
    this.entries.set(key, { ...loaded, stamps, loadedAt: now });
    trimOldest(this.entries, this.capacity);
    return { value: loaded.value, until: loaded.validUntil };
  }

  /**
   * Until when the entry may be served: every source unchanged (its `validUntil`), or changed
   * only where its lag still covers the entry (the earliest lag's end); null when it may not.
   */
  private servedUntil(entry: DerivedEntry<V>, stamps: string[], now: number): number | null {
    let until = entry.validUntil;
    for (let i = 0; i < stamps.length; i++) {
      if (stamps[i] === entry.stamps[i]) continue;
      const lagMs = this.sources[i].lagMs;
      if (lagMs === undefined || now - entry.loadedAt >= lagMs) return null;
      until = Math.min(until, entry.loadedAt + lagMs);
    }
    return until;
  }

  /** Each source's physical name and stamp; null when the store has no stamps. */
  private stamps(scope?: object): Promise<string[] | null> {
    if (scope !== undefined && this.lastLook?.scope === scope) return this.lastLook.stamps;
    const stamps = this.reader.changedStamps(this.sources, scope);
    if (scope !== undefined) this.lastLook = { scope, stamps };
    return stamps;
  }
}
