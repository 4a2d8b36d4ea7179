import { performance } from 'node:perf_hooks';
import { StoreUnavailableError, WrongExpectedRevisionError, type EventStore } from '../event-store/event-store.port.js';
import type { Metrics } from './metrics.js';

function outcomeOf(error: unknown): string {
  if (error instanceof WrongExpectedRevisionError) return 'conflict';
  if (error instanceof StoreUnavailableError) return 'unavailable';
  return 'error';
}

/**
 * The same event store, counting and timing its appends. Every other member is the store's own,
 * whatever the port grows to.
 */
export function instrumentedEventStore(store: EventStore, metrics: Metrics): EventStore {
  const succeeded = metrics.appends.labels({ outcome: 'ok' });
  const append: EventStore['append'] = async (streamId, events, options) => {
    const started = performance.now();
    try {
      const result = await store.append(streamId, events, options);
      succeeded.inc();
      metrics.appendedEvents.inc(events.length);
      return result;
    } catch (error) {
      metrics.appends.inc({ outcome: outcomeOf(error) });
      throw error;
    } finally {
      metrics.appendDuration.observe((performance.now() - started) / 1000);
    }
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'append') return append;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
