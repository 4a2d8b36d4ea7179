import { DelegatingEventStore } from '../../src/platform/event-store/delegating-event-store.js';
import { EsdbEventStore } from '../../src/platform/event-store/eventstoredb/esdb-event-store.js';
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { retentionContract } from './retention.contract.js';

/**
 * An event store that, like EventStoreDB's `$tb` (truncate before), can only cut a stream's
 * prefix: removeEvents stops at the first event that is not of the removed types.
 */
class PrefixOnlyEventStore extends DelegatingEventStore {
  private readonly truncateBefore = new Map<string, number>();

  override async removeEvents(streamId: string, options: { throughRevision: number; types: string[] }): Promise<{ removed: number }> {
    const current = this.truncateBefore.get(streamId) ?? 0;
    if (options.throughRevision < current) return { removed: 0 };
    const events = await this.inner.readStream(streamId, { fromRevision: current, maxCount: options.throughRevision - current + 1 });
    let cut = current;
    for (const event of events) {
      if (event.revision > options.throughRevision || !options.types.includes(event.type)) break;
      cut = event.revision + 1;
    }
    if (cut === current) return { removed: 0 };
    this.truncateBefore.set(streamId, cut);
    return this.inner.removeEvents(streamId, { throughRevision: cut - 1, types: options.types });
  }
}

retentionContract('SQLite', async () => new SqliteEventStore(':memory:'));
retentionContract('prefix-only (truncate before, as EventStoreDB)', async () => new PrefixOnlyEventStore(new SqliteEventStore(':memory:')) as EventStore);

const eventStoreUrl = process.env.EVENTSTORE_URL;
if (eventStoreUrl) {
  retentionContract('EventStoreDB', async () => new EsdbEventStore(eventStoreUrl));
} else {
  describe.skip('check retention contract: EventStoreDB (skipped: EVENTSTORE_URL not set)', () => {
    it('runs the retention contract against a real server', () => {});
  });
}

describe('the prefix-only fake', () => {
  it('stops at the first event of another type, as $tb does', async () => {
    const store = new PrefixOnlyEventStore(new SqliteEventStore(':memory:'));
    await store.append('s', ['Raw', 'Other', 'Raw'].map((type, n) => ({ type, data: { n } })), { expectedRevision: 'no_stream' });
    expect(await store.removeEvents('s', { throughRevision: 2, types: ['Raw'] })).toEqual({ removed: 1 });
    expect((await store.readStream('s')).map((e) => e.revision)).toEqual([1, 2]);
    await store.close();
  });
});
