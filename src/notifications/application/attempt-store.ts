import type { CollectionSpec } from '../../platform/read-store/read-store.port.js';

/**
 * The delivery worker's own collection (plain read-store documents, not a projection): one
 * `AttemptState` per attempted delivery (a delivery record without one is pending, never
 * attempted), plus the intake cursor (`INTAKE_ID`): every record before it has a state, so a
 * worker starting up looks for first attempts after it. Only the worker writes here.
 */
export const ATTEMPTS_COLLECTION = 'notification_attempts';
export const INTAKE_ID = '~intake';

export const ATTEMPTS_SPEC: CollectionSpec = {
  name: ATTEMPTS_COLLECTION,
  indexes: [{ fields: ['state', 'next_attempt_ms'] }, { fields: ['channel_id', 'state', 'next_attempt_ms', 'position'] }],
};
