import type { CollectionSpec } from '../../platform/read-store/read-store.port.js';

/**
 * The delivery worker's own collection (plain read-store documents, not a projection): one
 * `AttemptState` per delivery, plus the intake cursor (`INTAKE_ID`) recording how far the
 * worker has taken the reactor's delivery records in. Only the worker writes here.
 */
export const ATTEMPTS_COLLECTION = 'notification_attempts';
export const INTAKE_ID = '~intake';

export const ATTEMPTS_SPEC: CollectionSpec = {
  name: ATTEMPTS_COLLECTION,
  indexes: [{ fields: ['state', 'next_attempt_ms'] }, { fields: ['channel_id', 'state', 'next_attempt_ms', 'position'] }],
};
