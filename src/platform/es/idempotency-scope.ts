import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';

/**
 * The Idempotency-Key of the request a command runs for, carried to the event-sourcing layer
 * without every handler passing it on. It makes a request's effects settle with the request:
 * every event a keyed request appends carries the key (and the step of the request that appended
 * it), ids it allocates are recorded under the key, and a retry of the same key (after a crash,
 * a lost connection, or while the first attempt still runs) finds what the first attempt did in
 * the log and does not do it again. The coordination store's claim stays as the fast path that
 * replays a finished answer; the log is what makes one effect certain.
 */
export interface IdempotencyScope {
  /** The scoped key (`team:<id>:<key>` or `admin:<key>`). */
  key: string;
  /** How many steps of each kind (one stream, one id sequence) this request has taken. */
  steps: Map<string, number>;
}

const storage = new AsyncLocalStorage<IdempotencyScope>();

export function runIdempotent<T>(key: string, work: () => T): T {
  return storage.run({ key, steps: new Map() }, work);
}

export function currentIdempotency(): IdempotencyScope | undefined {
  return storage.getStore();
}

/** Work that is the platform's own bookkeeping for a keyed request, not one of its steps. */
export function outsideIdempotency<T>(work: () => T): T {
  return storage.exit(work);
}

/** The ordinal of this request's next step of `kind`: the same on every attempt of the request. */
export function nextStep(scope: IdempotencyScope, kind: string): number {
  const step = scope.steps.get(kind) ?? 0;
  scope.steps.set(kind, step + 1);
  return step;
}

/**
 * Recorded in the key's stream before each append of a keyed step: the step appends to `stream`
 * expecting `after_revision`, so its first event, if it landed, is at `after_revision + 1`.
 */
export const IDEMPOTENT_APPEND = 'IdempotentAppendAttempted';

export interface IdempotentAppend {
  stream: string;
  step: number;
  after_revision: number;
}

/** Where what a keyed request did is recorded: the ids it took, the appends it attempted. */
export function idempotencyStream(key: string): string {
  return `idempotency-${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}
