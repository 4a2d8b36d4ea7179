import type { Doc, FindQuery, ReadStore, ViewWrite } from '../read-store/read-store.port.js';
import { deepFreeze } from '../deep-freeze.js';
import { trimOldest } from '../lru.js';
import { compareBySort, isAfterKeyset, matchesFilter } from './doc-matching.js';
import type { RecordedEvent } from '../event-store/event-store.port.js';
import type { Projection, ViewTransaction } from './projection.js';

/**
 * The unit of work for one batch: reads see the batch's own writes; each touched document is
 * written once when the batch commits, however many events changed it.
 */
export class BatchViewTransaction implements ViewTransaction {
  /** physical collection -> id -> doc (put) or null (deleted) */
  private readonly pending = new Map<string, Map<string, Doc | null>>();
  /**
   * What the store answered to each query of this batch. The store's side cannot change until
   * the batch commits (only the projection's lease holder writes its collections, one batch at
   * a time), so a query asked again (the notifications reactor looks up a team's channels for
   * every event) is answered from here, then merged with the batch's writes as usual. The
   * documents are frozen: handlers read them, they never change them in place.
   */
  private readonly committedFinds = new Map<string, readonly Doc[]>();
  /**
   * Committed documents read ahead (`prefetch`), by physical collection and id (null: none
   * stored). Each is handed out once, by the first `get` of its id: a later `get` finds the
   * batch's own write, or reads the store again as without read-ahead.
   */
  private readonly prefetched = new Map<string, Map<string, Doc | null>>();

  constructor(
    private readonly store: ReadStore,
    private readonly resolve: (collection: string) => string,
    /** Called with the (logical) collection before each query of it (a rebuild builds the collection's indexes then). */
    private readonly beforeFind?: (collection: string) => Promise<void>,
    /** The projection's committed documents this process knows (`Projection.keepsDocuments`). */
    private readonly kept: KeptDocuments | null = null,
  ) {}

  private pendingOf(physical: string): Map<string, Doc | null> {
    let docs = this.pending.get(physical);
    if (!docs) {
      docs = new Map();
      this.pending.set(physical, docs);
    }
    return docs;
  }

  /**
   * Not an async function: at saturation most gets are answered from the batch or the kept
   * documents, and an async function's frame and promise per get (about twenty a probed check)
   * were the view path's largest allocation site. Errors still come back as a rejected promise.
   */
  get(collection: string, id: string): Promise<Doc | null> {
    try {
      const physical = this.resolve(collection);
      const docs = this.pending.get(physical);
      if (docs?.has(id)) {
        // A document this batch put is frozen: a projection that keeps its documents reads it as it
        // is (read-only, see `Projection.keepsDocuments`); a copy (structuredClone) costs more than
        // the rest of a rollup row's update.
        const doc = docs.get(id) ?? null;
        return Promise.resolve(this.kept === null ? structuredClone(doc) : doc);
      }
      const ahead = this.prefetched.get(physical);
      if (ahead?.has(id)) {
        const doc = ahead.get(id)!;
        ahead.delete(id);
        return Promise.resolve(doc);
      }
      if (this.kept === null) return this.store.get(physical, id);
      const known = this.kept.lookup(physical, id);
      if (known !== undefined) return Promise.resolve(known);
      return this.readAndKeep(this.kept, physical, id);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async readAndKeep(kept: KeptDocuments, physical: string, id: string): Promise<Doc | null> {
    const stored = deepFreeze(await this.store.get(physical, id));
    kept.keep(physical, id, stored);
    return stored;
  }

  /**
   * Reads the committed documents of `wanted` (logical collection -> ids) with one `getMany` per
   * collection, for the `get`s to come. Call before the batch writes anything: what the store
   * holds cannot change until the batch commits (see `committedFinds`).
   */
  async prefetch(wanted: ReadonlyMap<string, ReadonlySet<string>>): Promise<void> {
    for (const [collection, ids] of wanted) {
      const physical = this.resolve(collection);
      const kept = this.kept;
      const unknown = kept === null ? [...ids] : [...ids].filter((id) => kept.lookup(physical, id) === undefined);
      if (unknown.length === 0) continue;
      const found = new Map<string, Doc | null>();
      for (const id of unknown) found.set(id, null);
      for (const doc of await this.store.getMany(physical, unknown)) found.set(doc.id, doc);
      if (kept === null) this.prefetched.set(physical, found);
      else for (const [id, doc] of found) kept.keep(physical, id, deepFreeze(doc));
    }
  }

  /** Whether a `get` of the document is answered without the store: kept (`Projection.keepsDocuments`). */
  knows(collection: string, id: string): boolean {
    return this.kept !== null && this.kept.lookup(this.resolve(collection), id) !== undefined;
  }

  async find(collection: string, query: FindQuery): Promise<Doc[]> {
    const physical = this.resolve(collection);
    await this.beforeFind?.(collection);
    const docs = this.pendingOf(physical);
    const limit = query.limit ?? Number.MAX_SAFE_INTEGER;
    const committed = await this.committedFind(physical, { ...query, limit: query.limit === undefined ? undefined : limit + docs.size });
    const merged = committed.filter((doc) => !docs.has(doc.id));
    for (const doc of docs.values()) {
      if (doc && matchesFilter(doc, query.filter) && (!query.after || !query.sort || isAfterKeyset(doc, query.sort, query.after))) {
        merged.push(structuredClone(doc));
      }
    }
    if (query.sort) merged.sort((a, b) => compareBySort(a, b, query.sort!));
    return merged.slice(0, limit);
  }

  private async committedFind(physical: string, query: FindQuery): Promise<readonly Doc[]> {
    const key = `${physical}\u0000${JSON.stringify(query)}`;
    let found = this.committedFinds.get(key);
    if (!found) {
      found = deepFreeze(await this.store.find(physical, query));
      this.committedFinds.set(key, found);
    }
    return found;
  }

  put(collection: string, doc: Doc): void {
    // Frozen rather than copied: a projection writes one new object per put (the notifications
    // reactor one per delivery), and a copy of each cost more than the rest of its handling.
    this.pendingOf(this.resolve(collection)).set(doc.id, deepFreeze(doc));
  }

  delete(collection: string, id: string): void {
    this.pendingOf(this.resolve(collection)).set(id, null);
  }

  /**
   * The batch's writes are committed (`Projection.keepsDocuments`): a document the set knew as
   * stored now holds what the batch put; any other written id is forgotten, read from the store
   * if it is asked for again (see `KeptDocuments`). Call only once the commit succeeded.
   */
  committed(): void {
    if (this.kept === null) return;
    for (const [collection, docs] of this.pending) for (const [id, doc] of docs) this.kept.written(collection, id, doc);
  }

  writes(): ViewWrite[] {
    const writes: ViewWrite[] = [];
    for (const [collection, docs] of this.pending) {
      for (const [id, doc] of docs) {
        writes.push(doc ? { op: 'put', collection, doc } : { op: 'delete', collection, id });
      }
    }
    return writes;
  }
}

/**
 * Committed documents of one projection, by physical collection and id (null: none stored), as
 * its handlers read them and its batches committed them (`Projection.keepsDocuments`). Only the
 * process applying the projection writes its collections, so while it follows the projection
 * these are what the store holds; the runner makes a new one each time it starts following (a
 * batch refused by the fence, a lost lease or a swap ends the old one). The documents are frozen
 * and shared. Each collection keeps at most `perCollection` documents, the least recently used
 * leaving first (a sixteenth at once when full: `trimOldest`).
 *
 * A committed write is kept only over a document already known as stored (one a handler read
 * and found, or wrote over such a one): those are the documents read back batch after batch
 * (an alert status, an endpoint's rollup rows). A document written where none was known (a new
 * raw check row, whose dedupe read found nothing) is forgotten; if it is read again, that read
 * goes to the store once and keeps it. Kept instead, write-only rows filled each collection's
 * 10,000 places with documents nobody read, retained until pushed out: old-generation garbage.
 * A deleted document is forgotten too.
 */
export class KeptDocuments {
  private readonly byCollection = new Map<string, Map<string, Doc | null>>();

  constructor(private readonly perCollection = 10_000) {}

  /** The document as committed; null: none stored; undefined: not known here. */
  lookup(physical: string, id: string): Doc | null | undefined {
    return this.byCollection.get(physical)?.get(id);
  }

  keep(physical: string, id: string, doc: Doc | null): void {
    let docs = this.byCollection.get(physical);
    if (!docs) this.byCollection.set(physical, (docs = new Map()));
    // Moved to the end, so the first entry is always the least recently kept.
    docs.delete(id);
    docs.set(id, doc);
    trimOldest(docs, this.perCollection);
  }

  /** A committed write (doc null: a delete): kept over a known stored document, forgotten otherwise. */
  written(physical: string, id: string, doc: Doc | null): void {
    const docs = this.byCollection.get(physical);
    const known = docs?.get(id);
    if (known === undefined) return;
    if (doc === null || known === null) docs!.delete(id);
    else this.keep(physical, id, doc);
  }
}

/**
 * What `projection.prefetch` names for the events of the batch it handles, by collection, less
 * what `known` says is answered without the store (`BatchViewTransaction.knows`): at saturation
 * nearly every rollup row a check names is kept, and gathering them only to filter them out
 * later was a set entry per row.
 */
export function wantedBy(projection: Projection, batch: readonly RecordedEvent[], known?: (collection: string, id: string) => boolean): Map<string, Set<string>> {
  const wanted = new Map<string, Set<string>>();
  for (const event of batch) {
    if (!Object.prototype.hasOwnProperty.call(projection.handlers, event.type)) continue;
    for (const [collection, id] of projection.prefetch!(event)) {
      if (known?.(collection, id)) continue;
      let ids = wanted.get(collection);
      if (!ids) wanted.set(collection, (ids = new Set()));
      ids.add(id);
    }
  }
  return wanted;
}
