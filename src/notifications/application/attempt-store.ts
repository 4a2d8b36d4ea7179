import type { Position } from '../../platform/event-store/event-store.port.js';
import type { WorkerHost } from '../../platform/projections/projection.js';
import type { CollectionSpec, Doc, ReadStore, ViewWrite } from '../../platform/read-store/read-store.port.js';

/**
 * The delivery worker's state, kept by the processor runner as generation 1 of the worker's
 * name (`p__notifications_delivery__g1__<collection>`, read through the view reader); only the
 * worker writes it.
 *
 * - `attempts`: one `AttemptState` per attempted delivery (a delivery record without one is
 *   pending, never attempted). Read by id only.
 * - `retries`: a copy of each state that waits for another attempt (pending after a failure),
 *   written and removed in the same commit as its state. The indexes that find due retries are
 *   on it alone, so the many deliveries that settle at their first attempt pay for no index
 *   beyond their id (two expression indexes doubled the cost of recording each state).
 * The worker's checkpoint (how far every record has a state) is in the runner's registry.
 */
export const DELIVERY_WORKER = 'notifications_delivery';
export const ATTEMPTS = 'attempts';
export const RETRIES = 'retries';

export const ATTEMPTS_SPEC: CollectionSpec = { name: ATTEMPTS, indexes: [] };

export const RETRIES_SPEC: CollectionSpec = {
  name: RETRIES,
  indexes: [{ fields: ['next_attempt_ms'] }, { fields: ['channel_id', 'next_attempt_ms', 'position'] }],
};

/** Where earlier versions kept the worker's state, outside the runner (plain collections). */
const EARLIER_ATTEMPTS = 'notification_attempts';
const EARLIER_RETRIES = 'notification_retries';
/** Earlier versions' intake cursor (in the attempts) and the marker that every pending state had its retry copy. */
const EARLIER_INTAKE_ID = '~intake';
const EARLIER_COPIED_ID = '~copied';
const PAGE = 500;

/**
 * Carries the earlier versions' state over into the worker's collections, once, before the
 * worker first runs (the runner writes the returned checkpoint with the worker's pointer): every
 * attempt state; the retry copies (made from the pending states when the earlier store had not
 * made them yet); and the intake cursor as a checkpoint (the position before the cursor's: the
 * records of that position after the cursor's id may have no state). A crash part-way leaves no
 * pointer, and the next start copies again (puts of the same documents). The earlier
 * collections are dropped after the pointer is written (`dropEarlierAttemptStore`).
 */
export async function adoptAttemptStore(views: ReadStore, host: WorkerHost): Promise<Position | null> {
  const existing = new Set(await views.listCollections());
  if (!existing.has(EARLIER_ATTEMPTS)) return null;
  const attempts = host.collection(ATTEMPTS);
  const retries = host.collection(RETRIES);
  const copied = existing.has(EARLIER_RETRIES) && (await views.get(EARLIER_RETRIES, EARLIER_COPIED_ID)) !== null;
  let cursor: Position | null = null;
  for (let after: [string] | undefined; ; ) {
    const docs = await views.find(EARLIER_ATTEMPTS, { sort: [['id', 'asc']], after, limit: PAGE });
    const writes: ViewWrite[] = [];
    for (const doc of docs) {
      if (doc.id === EARLIER_INTAKE_ID) {
        cursor = typeof doc.position === 'number' ? doc.position - 1 : null;
        continue;
      }
      writes.push({ op: 'put', collection: attempts, doc });
      if (!copied && doc.state === 'pending') writes.push({ op: 'put', collection: retries, doc });
    }
    if (writes.length > 0) await views.commit(writes);
    if (docs.length < PAGE) break;
    after = [docs[docs.length - 1].id];
  }
  if (copied) {
    for (let after: [string] | undefined; ; ) {
      const docs: Doc[] = await views.find(EARLIER_RETRIES, { sort: [['id', 'asc']], after, limit: PAGE });
      const writes: ViewWrite[] = docs.filter((doc) => doc.id !== EARLIER_COPIED_ID).map((doc) => ({ op: 'put', collection: retries, doc }));
      if (writes.length > 0) await views.commit(writes);
      if (docs.length < PAGE) break;
      after = [docs[docs.length - 1].id];
    }
  }
  return cursor;
}

/** Drops the earlier versions' collections once their state lives in the worker's. */
export async function dropEarlierAttemptStore(views: ReadStore): Promise<void> {
  const existing = new Set(await views.listCollections());
  for (const name of [EARLIER_ATTEMPTS, EARLIER_RETRIES]) if (existing.has(name)) await views.dropCollection(name);
}
