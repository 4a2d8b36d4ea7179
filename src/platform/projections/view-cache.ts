import type { CollectionStamps } from '../read-store/read-store.port.js';
import type { ViewReader } from './views.js';

export interface ViewCacheOptions {
  /**
   * `changed` (default): valid until any write to the collection, for results of queries.
   * `rewritten`: valid until a document is replaced or deleted, for documents read by id.
   */
  validUntil?: keyof CollectionStamps;
  /** Entries kept; beyond it the least recently stored is dropped. */
  capacity?: number;
}

interface Entry<V> {
  collection: string;
  stamp: number;
  value: V;
}

/**
 * Values read from one view collection, served again while its stamp (read before the value, see
 * `ReadStore.stamps`) is unchanged, so a write committed by any process is seen by the next get.
 * Values are shared between callers: treat them as read-only. Without stamps (MongoDB), every
 * get loads. Nothing is kept for a load that returns null.
 */
export class ViewCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly validUntil: keyof CollectionStamps;
  private readonly capacity: number;

  constructor(
    private readonly reader: ViewReader,
    private readonly projection: string,
    private readonly collection: string,
    options: ViewCacheOptions = {},
  ) {
    this.validUntil = options.validUntil ?? 'changed';
    this.capacity = options.capacity ?? 10_000;
  }

  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const stamps = await this.reader.stamps(this.projection, this.collection);
    if (!stamps) return load();
    const stamp = stamps[this.validUntil];
    const entry = this.entries.get(key);
    if (entry && entry.stamp === stamp && entry.collection === stamps.collection) return entry.value;
    const value = await load();
    if (value !== null) this.remember(key, { collection: stamps.collection, stamp, value });
    return value;
  }

  /**
   * Values for the keys `findKeys` returns (read after the stamp), in that order: valid entries
   * from the cache, the others from `loadMany` (keys it does not return are left out).
   */
  async getMany(findKeys: () => Promise<string[]>, loadMany: (keys: string[]) => Promise<Array<[string, V]>>): Promise<V[]> {
    const stamps = await this.reader.stamps(this.projection, this.collection);
    const keys = await findKeys();
    if (!stamps) return this.ordered(keys, new Map(await loadMany(keys)));
    const stamp = stamps[this.validUntil];
    const found = new Map<string, V>();
    const missing: string[] = [];
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry && entry.stamp === stamp && entry.collection === stamps.collection) found.set(key, entry.value);
      else missing.push(key);
    }
    if (missing.length > 0) {
      for (const [key, value] of await loadMany(missing)) {
        found.set(key, value);
        this.remember(key, { collection: stamps.collection, stamp, value });
      }
    }
    return this.ordered(keys, found);
  }

  private ordered(keys: string[], values: Map<string, V>): V[] {
    const result: V[] = [];
    for (const key of keys) {
      const value = values.get(key);
      if (value !== undefined) result.push(value);
    }
    return result;
  }

  private remember(key: string, entry: Entry<V>): void {
    this.entries.delete(key);
    if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, entry);
  }
}
