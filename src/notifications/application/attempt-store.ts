import type { CollectionSpec } from '../../platform/read-store/read-store.port.js';

/**
 * The delivery worker's own collections (plain read-store documents, not a projection); only the
 * worker writes them.
 *
 * - `notification_attempts`: one `AttemptState` per attempted delivery (a delivery record without
 *   one is pending, never attempted), plus the intake cursor (`INTAKE_ID`): every record before it
 *   has a state, so a worker starting up looks for first attempts after it. Read by id only.
 * - `notification_retries`: a copy of each state that waits for another attempt (pending after a
 *   failure), written and removed in the same commit as its state. The indexes that find due
 *   retries are on it alone, so the many deliveries that settle at their first attempt pay for
 *   no index beyond their id (two expression indexes doubled the cost of recording each state).
 */
export const ATTEMPTS_COLLECTION = 'notification_attempts';
export const RETRIES_COLLECTION = 'notification_retries';
export const INTAKE_ID = '~intake';
/** In `notification_retries`: every pending state of `notification_attempts` has its copy there. */
export const RETRIES_COPIED_ID = '~copied';

export const ATTEMPTS_SPEC: CollectionSpec = { name: ATTEMPTS_COLLECTION, indexes: [] };

export const RETRIES_SPEC: CollectionSpec = {
  name: RETRIES_COLLECTION,
  indexes: [{ fields: ['next_attempt_ms'] }, { fields: ['channel_id', 'next_attempt_ms', 'position'] }],
};
