import { performance } from 'node:perf_hooks';
import {
  StoreUnavailableError,
  WrongExpectedRevisionError,
  type AppendOptions,
  type AppendResult,
  type EventStore,
  type NewEvent,
} from '../event-store/event-store.port.js';
import { DelegatingEventStore } from '../event-store/delegating-event-store.js';
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

class InstrumentedEventStore extends DelegatingEventStore {
  private readonly succeeded: { inc(): void };

  constructor(
    inner: EventStore,
    private readonly metrics: Metrics,
  ) {
    super(inner);
    this.succeeded = metrics.appends.labels({ outcome: 'ok' });
  }

  override async append(streamId: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
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
}
