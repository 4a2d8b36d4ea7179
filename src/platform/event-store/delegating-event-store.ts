import type {
  AppendOptions,
  AppendResult,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  NewEvent,
  Position,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
} from './event-store.port.js';

/**
 * An event store that passes every call to the one it wraps. Decorators (upcasting, metrics)
 * extend it and override only what they change, so a method added to the port is forwarded once.
 */
export class DelegatingEventStore implements EventStore {
  constructor(protected readonly inner: EventStore) {}

  append(streamId: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    return this.inner.append(streamId, events, options);
  }

  readStream(streamId: string, options?: ReadStreamOptions): Promise<RecordedEvent[]> {
    return this.inner.readStream(streamId, options);
  }

  readAll(options: ReadAllOptions): Promise<RecordedEvent[]> {
    return this.inner.readAll(options);
  }

  subscribeToAll(options: { after?: Position | null }): EventSubscription {
    return this.inner.subscribeToAll(options);
  }

  headPosition(): Promise<Position | null> {
    return this.inner.headPosition();
  }

  removeEvents(streamId: string, options: { throughRevision: number; types: string[] }): Promise<{ removed: number }> {
    return this.inner.removeEvents(streamId, options);
  }

  async reclaimSpace(): Promise<void> {
    await this.inner.reclaimSpace?.();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
