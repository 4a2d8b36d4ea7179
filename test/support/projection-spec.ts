/**
 * Given events, then documents: a projection tested in isolation, on the in-memory read store
 * (which runs the read-store contract) and the runner's own batch transaction. Every spec
 * applies the events twice, all in one batch and one batch per event, and the two results must
 * be the same: a projection may not depend on where the runner cuts its batches. A projection
 * that names its reads ahead (`prefetch`) is applied a third time with them read ahead, as the
 * runner does, and must give the same documents again; one that lets the runner keep its
 * documents (`keepsDocuments`) once more with them kept (frozen) from batch to batch.
 */
import type { RecordedEvent } from '../../src/platform/event-store/event-store.port.js';
import type { Projection } from '../../src/platform/projections/projection.js';
import { BatchViewTransaction, KeptDocuments, wantedBy } from '../../src/platform/projections/view-transaction.js';
import type { Doc } from '../../src/platform/read-store/read-store.port.js';
import { MemoryReadStore } from '../unit/analytics/support/memory-store.js';

export interface GivenEvent {
  type: string;
  data: unknown;
  streamId?: string;
  at?: string;
}

export interface ProjectionOutcome {
  /** The collection's documents, sorted by id. */
  documents(collection: string): Doc[];
  document(collection: string, id: string): Doc | undefined;
}

const AT = '2026-11-23T12:00:00.000Z';

function recorded(events: GivenEvent[]): RecordedEvent[] {
  return events.map((event, index) => ({
    id: `event-${index + 1}`,
    streamId: event.streamId ?? 'stream',
    type: event.type,
    schemaVersion: 1,
    data: event.data,
    metadata: { actor: 'test', request_id: null, correlation_id: null, causation_id: null, occurred_at: event.at ?? AT },
    revision: index,
    position: index + 1,
    recordedAt: event.at ?? AT,
  }));
}

async function apply(projection: Projection, batches: RecordedEvent[][], readAhead = false, keep = false): Promise<MemoryReadStore> {
  const store = new MemoryReadStore();
  for (const spec of projection.collections) await store.ensureCollection(spec);
  // As the runner keeps them while it follows: read back frozen from the batches before.
  const kept = keep ? new KeptDocuments() : null;
  for (const batch of batches) {
    const resolve = (collection: string) => {
      if (!projection.collections.some((spec) => spec.name === collection)) throw new Error(`${projection.name} writes undeclared collection "${collection}"`);
      return collection;
    };
    const transaction = new BatchViewTransaction(store, resolve, undefined, kept);
    if (readAhead) await transaction.prefetch(wantedBy(projection, batch));
    for (const event of batch) await projection.handlers[event.type]?.(event, transaction);
    await store.commit(transaction.writes());
    transaction.committed();
  }
  return store;
}

function snapshot(store: MemoryReadStore): Record<string, Doc[]> {
  return Object.fromEntries(
    [...store.collections.entries()].map(([name, rows]) => [name, [...rows.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))]),
  );
}

export async function given(projection: Projection, events: GivenEvent[]): Promise<ProjectionOutcome> {
  const all = recorded(events);
  const together = snapshot(await apply(projection, [all]));
  const oneByOne = snapshot(await apply(projection, all.map((event) => [event])));
  if (JSON.stringify(together) !== JSON.stringify(oneByOne)) {
    throw new Error(`${projection.name} gives other documents when the same events come in other batches`);
  }
  if (projection.prefetch) {
    for (const batches of [[all], all.map((event) => [event])]) {
      if (JSON.stringify(snapshot(await apply(projection, batches, true))) !== JSON.stringify(together)) {
        throw new Error(`${projection.name} gives other documents when its reads are read ahead`);
      }
    }
  }
  if (projection.keepsDocuments) {
    for (const batches of [[all], all.map((event) => [event])]) {
      for (const readAhead of projection.prefetch ? [false, true] : [false]) {
        if (JSON.stringify(snapshot(await apply(projection, batches, readAhead, true))) !== JSON.stringify(together)) {
          throw new Error(`${projection.name} gives other documents when the runner keeps its documents${readAhead ? ' and reads ahead' : ''}`);
        }
      }
    }
  }
  return {
    documents: (collection) => together[collection] ?? [],
    document: (collection, id) => (together[collection] ?? []).find((doc) => doc.id === id),
  };
}
