import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chainedEventStore } from './chained-event-store.js';
import type { EventStore } from './event-store.port.js';
import { EsdbEventStore } from './eventstoredb/esdb-event-store.js';
import { SqliteEventStore } from './sqlite/sqlite-event-store.js';
import { type UpcasterRegistry, withUpcasting } from './upcasting.js';

export interface EventStoreSettings {
  dataDir: string;
  /** EventStoreDB connection string; null selects the embedded SQLite log. */
  eventStoreUrl: string | null;
  /** When given, reads and subscriptions return the latest schema version of each event. */
  upcasters?: UpcasterRegistry;
}

/**
 * EventStoreDB when a URL is configured, otherwise SQLite at `${dataDir}/events.sqlite`; every
 * append hash-chained (docs/audit.md) over the data as stored, so the chain sits below upcasting.
 */
export function createEventStore(settings: EventStoreSettings): EventStore {
  const store = chainedEventStore(settings.eventStoreUrl ? new EsdbEventStore(settings.eventStoreUrl) : openSqliteUnder(settings.dataDir));
  return settings.upcasters ? withUpcasting(store, settings.upcasters) : store;
}

function openSqliteUnder(dataDir: string): EventStore {
  mkdirSync(dataDir, { recursive: true });
  return new SqliteEventStore(join(dataDir, 'events.sqlite'));
}
