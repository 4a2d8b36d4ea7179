import {
  type AppendResult,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port.js';
import { type CommandContext, metadataOf } from './command-context.js';
import { currentIdempotency, nextStep } from './idempotency-scope.js';

export interface Aggregate<S> {
  initial(): S;
  evolve(state: S, event: RecordedEvent): S;
}

export interface Loaded<S> {
  state: S;
  /** Revision of the last event, -1 when the stream does not exist. */
  revision: number;
  /** The stream's events; empty when the state came from a fold (see `StreamFold`). */
  events: RecordedEvent[];
}

/**
 * A per-process fold of streams (StreamCache): a load reads only the events after the cached
 * revision. For streams that grow long, where replaying the whole stream per command is O(n).
 */
export interface StreamFold<S> {
  load(streamId: string): Promise<{ state: S; revision: number }>;
  /** Records the state after this process's own append, so the next load reads nothing. */
  remember?(streamId: string, entry: { state: S; revision: number }): void;
}

/**
 * The stream kept changing under the command: every attempt lost the race to another writer.
 * The event-sourcing layer's own error; the HTTP edge maps it to 409 `concurrent_update`.
 */
export class ConcurrencyError extends Error {
  constructor(readonly streamId: string, readonly attempts: number) {
    super(`Stream ${streamId} changed concurrently on each of ${attempts} attempts`);
    this.name = 'ConcurrencyError';
  }
}

/** The stream folded from its start, or from `fromRevision` on (the state then covers only the tail). */
export async function loadStream<S>(store: EventStore, streamId: string, aggregate: Aggregate<S>, fromRevision = 0): Promise<Loaded<S>> {
  return folded(await store.readStream(streamId, fromRevision > 0 ? { fromRevision } : undefined), aggregate, fromRevision);
}

function folded<S>(events: RecordedEvent[], aggregate: Aggregate<S>, fromRevision = 0): Loaded<S> {
  const state = events.reduce(aggregate.evolve, aggregate.initial());
  return { state, revision: events.length === 0 ? fromRevision - 1 : events[events.length - 1].revision, events };
}

export interface StreamCommandResult<S, R> {
  /** The state the decision was taken on (before the appended events). */
  state: S;
  appended: NewEvent[];
  append: AppendResult | null;
  result: R;
  /** An earlier attempt of the same keyed request appended these events; this one appended nothing. */
  replayed?: true;
}

export interface StreamCommandOptions<S, R = unknown> {
  /** Fold the stream forward from a per-process cache instead of replaying it. */
  fold?: StreamFold<S>;
  /**
   * Decide on the stream's tail only: the events from this revision on (the stream is known to
   * reach it). For a question about what followed a known event in a long stream.
   */
  fromRevision?: number;
  /** Attempts before ConcurrencyError (default 4). A hot stream (checks of one endpoint) wants more. */
  attempts?: number;
  /**
   * After the append, record the state folded from this command's own events in `fold`, so the
   * next command reads nothing back. Only for aggregates whose evolve reads nothing but an
   * event's type, data and metadata (not its id, position or recorded time).
   */
  foldOwnAppends?: boolean;
  /**
   * The result to answer when this command already ran for the same Idempotency-Key (a retry):
   * computed from the state after the events that attempt appended. Without it the result is
   * decided again on the state before them.
   */
  resultAfter?: (state: S) => R;
}

const DEFAULT_ATTEMPTS = 4;

/**
 * The one load-decide-append loop. Loads the stream (once per attempt), decides, appends with the
 * expected revision; on a concurrent append it reloads and decides again, up to `attempts`, then
 * throws ConcurrencyError. `decide` may throw a domain error to refuse; nothing is appended then.
 * Each event's own metadata wins over the context's (e.g. `occurred_at` of a check).
 */
export async function runStreamCommand<S, R = void>(
  store: EventStore,
  streamId: string,
  aggregate: Aggregate<S>,
  context: CommandContext,
  decide: (state: S, loaded: Loaded<S>) => Promise<{ events: NewEvent[]; result: R }> | { events: NewEvent[]; result: R },
  options: StreamCommandOptions<S, R> = {},
): Promise<StreamCommandResult<S, R>> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const keyed = currentIdempotency();
  const step = keyed ? nextStep(keyed, `stream:${streamId}`) : 0;
  for (let attempt = 1; ; attempt++) {
    // A keyed request reads the whole stream to find an earlier attempt's events; without a fold
    // or a tail to read, that read is also the one the decision is taken on.
    const whole = keyed ? await store.readStream(streamId) : null;
    if (keyed) {
      const done = await alreadyApplied(whole!, aggregate, keyed.key, step, decide, options.resultAfter);
      if (done) return done;
    }
    const loaded = options.fold
      ? { ...(await options.fold.load(streamId)), events: [] }
      : whole && options.fromRevision === undefined
        ? folded(whole, aggregate)
        : await loadStream(store, streamId, aggregate, options.fromRevision);
    const { events, result } = await decide(loaded.state, loaded);
    if (events.length === 0) return { state: loaded.state, appended: [], append: null, result };
    const idempotency = keyed ? { idempotency_key: keyed.key, idempotency_step: step } : {};
    const withMetadata = events.map((event) => ({ ...event, metadata: { ...metadataOf(context), ...event.metadata, ...idempotency } }));
    try {
      const append = await store.append(streamId, withMetadata, {
        expectedRevision: loaded.revision === -1 ? 'no_stream' : loaded.revision,
      });
      if (options.foldOwnAppends) options.fold?.remember?.(streamId, { state: foldAppended(aggregate, loaded.state, withMetadata, loaded.revision), revision: append.nextExpectedRevision });
      return { state: loaded.state, appended: withMetadata, append, result };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt >= attempts) throw new ConcurrencyError(streamId, attempts);
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}

/**
 * What an earlier attempt of the same keyed request appended to the stream at this step, answered
 * as this attempt's outcome; null when it appended nothing (the command runs as usual).
 */
async function alreadyApplied<S, R>(
  events: RecordedEvent[],
  aggregate: Aggregate<S>,
  key: string,
  step: number,
  decide: (state: S, loaded: Loaded<S>) => Promise<{ events: NewEvent[]; result: R }> | { events: NewEvent[]; result: R },
  resultAfter: ((state: S) => R) | undefined,
): Promise<StreamCommandResult<S, R> | null> {
  const first = events.findIndex((event) => event.metadata.idempotency_key === key && event.metadata.idempotency_step === step);
  if (first < 0) return null;
  const before = events.slice(0, first).reduce(aggregate.evolve, aggregate.initial());
  const appended = events.slice(first).filter((event) => event.metadata.idempotency_key === key && event.metadata.idempotency_step === step);
  const last = appended[appended.length - 1];
  const result = resultAfter
    ? resultAfter(appended.reduce(aggregate.evolve, before))
    : (await decide(before, { state: before, revision: first - 1, events: events.slice(0, first) })).result;
  return {
    state: before,
    appended: appended.map(({ type, data, metadata }) => ({ type, data, metadata })),
    append: { nextExpectedRevision: last.revision, position: last.position },
    result,
    replayed: true,
  };
}

/** The state after this command's own events, folded as if read back from the store. */
export function foldAppended<S>(aggregate: Aggregate<S>, state: S, appended: NewEvent[], revision: number): S {
  return appended.reduce(
    (current, event, index) => aggregate.evolve(current, { ...event, revision: revision + 1 + index } as unknown as RecordedEvent),
    state,
  );
}
