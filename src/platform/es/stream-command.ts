import {
  type AppendResult,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port.js';
import { type CommandContext, metadataOf } from './command-context.js';

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
  const events = await store.readStream(streamId, fromRevision > 0 ? { fromRevision } : undefined);
  const state = events.reduce(aggregate.evolve, aggregate.initial());
  return { state, revision: events.length === 0 ? fromRevision - 1 : events[events.length - 1].revision, events };
}

export interface StreamCommandResult<S, R> {
  /** The state the decision was taken on (before the appended events). */
  state: S;
  appended: NewEvent[];
  append: AppendResult | null;
  result: R;
}

export interface StreamCommandOptions<S> {
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
  options: StreamCommandOptions<S> = {},
): Promise<StreamCommandResult<S, R>> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    const loaded = options.fold
      ? { ...(await options.fold.load(streamId)), events: [] }
      : await loadStream(store, streamId, aggregate, options.fromRevision);
    const { events, result } = await decide(loaded.state, loaded);
    if (events.length === 0) return { state: loaded.state, appended: [], append: null, result };
    const withMetadata = events.map((event) => ({ ...event, metadata: { ...metadataOf(context), ...event.metadata } }));
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

/** The state after this command's own events, folded as if read back from the store. */
export function foldAppended<S>(aggregate: Aggregate<S>, state: S, appended: NewEvent[], revision: number): S {
  return appended.reduce(
    (current, event, index) => aggregate.evolve(current, { ...event, revision: revision + 1 + index } as unknown as RecordedEvent),
    state,
  );
}
