import { EventStoreDBClient } from '@eventstore/db-client';

/**
 * The pinned EventStoreDB client's verdict on a connection string: null when it accepts it
 * (`esdb://n1:2113,n2:2113,n3:2113`, `esdb+discover://`), otherwise the client's own message.
 * The client connects lazily, so parsing it opens nothing.
 */
export function esdbUrlProblem(url: string): string | null {
  try {
    EventStoreDBClient.connectionString(url);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
