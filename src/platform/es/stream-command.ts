import {
  type AppendResult,
  type EventStore,
  type NewEvent,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port.js';
import { Problems } from '../http/problem.js';
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
}

export async function loadStream<S>(store: EventStore, streamId: string, aggregate: Aggregate<S>): Promise<Loaded<S>> {
  const events = await store.readStream(streamId);
  const state = events.reduce(aggregate.evolve, aggregate.initial());
  return { state, revision: events.length === 0 ? -1 : events[events.length - 1].revision, events };
}

export interface StreamCommandResult<S, R> {
  state: S;
  appended: NewEvent[];
  append: AppendResult | null;
  result: R;
}

const MAX_ATTEMPTS = 4;

/**
 * Load, decide, append with the expected revision; on a concurrent append reload and decide
 * again, a few times, then answer 409. `decide` may throw a ProblemError to refuse.
 */
export async function runStreamCommand<S, R = void>(
  store: EventStore,
  streamId: string,
  aggregate: Aggregate<S>,
  context: CommandContext,
  decide: (state: S, loaded: Loaded<S>) => Promise<{ events: NewEvent[]; result: R }> | { events: NewEvent[]; result: R },
  options: { fold?: StreamFold<S> } = {},
): Promise<StreamCommandResult<S, R>> {
  for (let attempt = 1; ; attempt++) {
    const loaded = options.fold ? { ...(await options.fold.load(streamId)), events: [] } : await loadStream(store, streamId, aggregate);
    const { events, result } = await decide(loaded.state, loaded);
    if (events.length === 0) return { state: loaded.state, appended: [], append: null, result };
    const withMetadata = events.map((event) => ({ ...event, metadata: { ...metadataOf(context), ...event.metadata } }));
    try {
      const append = await store.append(streamId, withMetadata, {
        expectedRevision: loaded.revision === -1 ? 'no_stream' : loaded.revision,
      });
      return { state: loaded.state, appended: withMetadata, append, result };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      if (attempt >= MAX_ATTEMPTS) {
        throw Problems.conflict('concurrent_update', 'The resource was changed by concurrent requests; retry.');
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}
