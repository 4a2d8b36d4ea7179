import type { EventStore, RecordedEvent } from '../event-store/event-store.port.js';
import type { StreamFold } from './stream-command.js';

/**
 * A fold of streams whose last event says all a command needs (a sequence's next id, the last
 * retention summary): a load reads that one event, backwards. With `remembers`, the state after
 * this process's own append (`foldOwnAppends`) is kept, so the next load reads nothing until an
 * append on it loses a race (`stale`) and the store is read again.
 */
export class LastEventFold<S> implements StreamFold<S> {
  private readonly known = new Map<string, { state: S; revision: number }>();

  constructor(
    private readonly store: EventStore,
    private readonly initial: S,
    private readonly fromLast: (event: RecordedEvent) => S,
    private readonly remembers = false,
  ) {}

  async load(streamId: string): Promise<{ state: S; revision: number }> {
    const known = this.known.get(streamId);
    if (known) return known;
    const [last] = await this.store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
    return last ? { state: this.fromLast(last), revision: last.revision } : { state: this.initial, revision: -1 };
  }

  remember(streamId: string, entry: { state: S; revision: number }): void {
    if (this.remembers) this.known.set(streamId, entry);
  }

  stale(streamId: string): void {
    this.known.delete(streamId);
  }
}
