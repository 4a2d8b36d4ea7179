import { performance } from 'node:perf_hooks';
import {
  StoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type NewEvent,
  type Position,
  type ReadAllOptions,
  type ReadStreamOptions,
  type RecordedEvent,
} from '../event-store/event-store.port.js';
import type { Metrics } from './metrics.js';

function outcomeOf(error: unknown): string {
  if (error instanceof WrongExpectedRevisionError) return 'conflict';
  if (error instanceof StoreUnavailableError) return 'unavailable';
  return 'error';
}

/** The same event store, counting and timing its appends; everything else is the store's own. */
export function instrumentedEventStore(store: EventStore, metrics: Metrics): EventStore {
  return new InstrumentedEventStore(store, metrics);
}

class InstrumentedEventStore implements EventStore {
  private readonly succeeded: { inc(): void };

  constructor(
    private readonly inner: EventStore,
    private readonly metrics: Metrics,
  ) {
    this.succeeded = metrics.appends.labels({ outcome: 'ok' });
  }

  async append(streamId: string, events: NewEvent[], options: { expectedRevision: ExpectedRevision }): Promise<AppendResult> {
    const started = performance.now();
    try {
      const result = await this.inner.append(streamId, events, options);
      this.succeeded.inc();
      this.metrics.appendedEvents.inc(events.length);
      return result;
    } catch (error) {
      this.metrics.appends.inc({ outcome: outcomeOf(error) });
      throw error;
    } finally {
      this.metrics.appendDuration.observe((performance.now() - started) / 1000);
    }
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
