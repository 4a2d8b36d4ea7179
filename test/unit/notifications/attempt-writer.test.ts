/**
 * Attempt states of many deliveries share one commit, each still fenced on the attempt count
 * its lane read: a state whose delivery another process recorded meanwhile is refused, and the
 * others of its batch are recorded all the same (else they would stay pending and go out again).
 */
import { join } from 'node:path';
import { ATTEMPTS_SPEC, RETRIES_SPEC } from '../../../src/notifications/application/attempt-store.js';
import { AttemptWriter } from '../../../src/notifications/application/attempt-writer.js';
import { afterAttempt, pendingState, type AttemptState } from '../../../src/notifications/domain/delivery.js';
import { PreconditionFailedError } from '../../../src/platform/read-store/read-store.port.js';
import { SqliteReadStore } from '../../../src/platform/read-store/sqlite/sqlite-read-store.js';
import { makeTempDir } from '../../support/event-store-fixtures.js';

/** The writer is handed the worker's collections by name (the runner's physical names in the service). */
const NAMES = { attempts: 'attempts', retries: 'retries' };
const ATTEMPTS_COLLECTION = NAMES.attempts;
const RETRIES_COLLECTION = NAMES.retries;

const T0 = Date.parse('2026-11-23T12:00:00.000Z');
const delivered = { delivered: true, status: 204, error: null };

describe('attempt writer', () => {
  const dir = makeTempDir('attempt-writer-');
  let store: SqliteReadStore;
  beforeAll(async () => {
    store = new SqliteReadStore(join(dir.path, 'views.sqlite'));
    await store.ensureCollection(ATTEMPTS_SPEC);
    await store.ensureCollection(RETRIES_SPEC);
  });
  afterAll(async () => {
    await store.close();
    dir.remove();
  });

  const pending = async (ids: string[]): Promise<AttemptState[]> => {
    const states = ids.map((id, i) => pendingState(id, 1, i, T0, new Date(T0).toISOString()));
    await store.commit(states.map((doc) => ({ op: 'put' as const, collection: ATTEMPTS_COLLECTION, doc: doc as never })));
    return states;
  };
  const stateOf = async (id: string) => (await store.get(ATTEMPTS_COLLECTION, id))?.state;

  it('records the states handed over together once flushed', async () => {
    const states = await pending(['msg_a1', 'msg_a2', 'msg_a3']);
    const writer = new AttemptWriter(store, NAMES);
    const recorded = states.map((s) => writer.record(s, afterAttempt(s, delivered, T0 + 1)));
    await writer.flush();
    await Promise.all(recorded);
    expect(await Promise.all(states.map((s) => stateOf(s.id)))).toEqual(['delivered', 'delivered', 'delivered']);
  });

  it('refuses only the state whose delivery was recorded by another writer meanwhile', async () => {
    const [first, stale, last] = await pending(['msg_b1', 'msg_b2', 'msg_b3']);
    // Another process (its claim taken over after ours lapsed) recorded an attempt of msg_b2.
    await new AttemptWriter(store, NAMES).record(stale, afterAttempt(stale, { delivered: false, status: 500, error: 'status: 500' }, T0 + 1));
    const writer = new AttemptWriter(store, NAMES);
    const outcomes = await Promise.allSettled([first, stale, last].map((s) => writer.record(s, afterAttempt(s, delivered, T0 + 2))));
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(PreconditionFailedError);
    expect(await stateOf('msg_b1')).toBe('delivered');
    expect(await store.get(ATTEMPTS_COLLECTION, 'msg_b2')).toMatchObject({ state: 'pending', attempts: 1, last_status_code: 500 });
    expect(await stateOf('msg_b3')).toBe('delivered');
    // Only the one still waiting for an attempt has its copy among the retries.
    expect((await store.find(RETRIES_COLLECTION, {})).map((doc) => doc.id)).toEqual(['msg_b2']);
  });
});
