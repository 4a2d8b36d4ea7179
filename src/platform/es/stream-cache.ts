import type { EventStore, RecordedEvent } from '../event-store/event-store.port.js';

export interface CachedStream<S> {
  state: S;
  /** Revision of the last folded event; -1 when the stream does not exist. */
  revision: number;
}

/**
 * Per-process fold of streams: the first read loads the whole stream (or starts from what `seed`
 * gives, e.g. a fold of the stream's tail), later reads only the events after the cached
 * revision. Bounded by `maxEntries` (least recently used dropped).
 */
export class StreamCache<S> {
  private readonly entries = new Map<string, CachedStream<S>>();

  constructor(
    private readonly store: EventStore,
    private readonly initial: () => S,
    private readonly evolve: (state: S, event: RecordedEvent) => S,
    private readonly maxEntries = 10_000,
    private readonly seed?: (streamId: string) => Promise<CachedStream<S>>,
  ) {}

  /** The stream folded up to its current end. */
  async load(streamId: string): Promise<CachedStream<S>> {
    const cached = this.entries.get(streamId) ?? (this.seed ? await this.seed(streamId) : { state: this.initial(), revision: -1 });
    const events = await this.store.readStream(streamId, cached.revision >= 0 ? { fromRevision: cached.revision + 1 } : undefined);
    let { state, revision } = cached;
    for (const event of events) {
      if (event.revision <= revision) continue;
      state = this.evolve(state, event);
      revision = event.revision;
    }
    const next = { state, revision };
    this.remember(streamId, next);
    return next;
  }

  /** Records state after our own append, so the next load reads nothing. */
  remember(streamId: string, entry: CachedStream<S>): void {
    const current = this.entries.get(streamId);
    if (current && current.revision > entry.revision) return;
    this.entries.delete(streamId);
    this.entries.set(streamId, entry);
    if (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  forget(streamId: string): void {
    this.entries.delete(streamId);
  }
}
