import {
  type AppendResult,
  type EventMetadata,
  type EventStore,
  type EveryNewEventMember,
  type NewEvent,
  type RecordedEvent,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port.js';
import { type CommandContext, metadataOf } from './command-context.js';
import { currentIdempotency, IDEMPOTENT_APPEND, idempotencyStream, nextStep, type IdempotentAppend } from './idempotency-scope.js';

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
  /**
   * An append on the fold's revision lost the race: for a fold that trusts what it remembered
   * without reading (the id allocator's sequences), the next load must look at the store.
   */
  stale?(streamId: string): void;
}

/**
 * The aggregate of a command that decides on nothing in the stream but where it ends (a chunk
 * of imported checks): loading reads the stream's last event only, and the append still
 * expects that revision.
 */
export const appendOnly: Aggregate<null> = { initial: () => null, evolve: () => null };

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
  /** Upper bound of the random pause before the next attempt (default 10 ms times the attempt). */
  maxPauseMs?: number;
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
  /**
   * The append may wait to share a commit with the other appends of this turn of the event loop
   * (`AppendOptions.groupCommit`): for work arriving many at once on many streams (probed
   * checks, incidents created or commented on by many clients). With `fold`, an append another
   * command of this process waits in line behind is written at once instead: a hot stream's
   * next command waits for it, and holding each to the end of a turn would bind the stream to
   * one append per turn of the loop.
   */
  groupCommit?: boolean;
}

/** What a command's `decide` answers: the events to append and the command's result. */
export interface Decision<S, R> {
  events: NewEvent[];
  result: R;
  /**
   * The state after `events`, when deciding folded them already (the result is that state):
   * `foldOwnAppends` keeps it instead of folding the events a second time. The aggregate's
   * evolve must read nothing of an event but its type and data, as `foldOwnAppends` requires.
   */
  after?: S;
}

const DEFAULT_ATTEMPTS = 4;

/**
 * The one load-decide-append loop. Loads the stream (once per attempt), decides, appends with the
 * expected revision; on a concurrent append it reloads and decides again, up to `attempts`, then
 * throws ConcurrencyError. `decide` may throw a domain error to refuse; nothing is appended then.
 * Each event's own metadata wins over the context's (e.g. `occurred_at` of a check); with no
 * context (the chained store's `any` appends) events keep only their own.
 *
 * Inside a keyed request (Idempotency-Key) the command is one step of the request: before its
 * append it records a marker (`IdempotentAppendAttempted`: this stream, this step, the revision
 * the append expects) in the key's stream, and its events carry the key and the step. A retry of
 * the request looks its markers up (a short stream) and reads the one event each names: when
 * that event is the step's, the step already happened and its outcome is answered again. The
 * markers are read after the stream is loaded, and the append expects the loaded revision, so an
 * attempt running at the same time either shows in the markers or makes this append fail.
 */
export async function runStreamCommand<S, R = void>(
  store: EventStore,
  streamId: string,
  aggregate: Aggregate<S>,
  context: CommandContext | null,
  decide: (state: S, loaded: Loaded<S>) => Promise<Decision<S, R>> | Decision<S, R>,
  options: StreamCommandOptions<S, R> = {},
): Promise<StreamCommandResult<S, R>> {
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const keyed = currentIdempotency();
  const step = keyed ? nextStep(keyed, `stream:${streamId}`) : 0;
  const onlyHead = aggregate === (appendOnly as Aggregate<unknown>);
  // The revision a refused append reported (null when the adapter cannot tell): an append-only
  // command may take it as the head, which matters where a stream's last events can be cut
  // away while it keeps its revision (EventStoreDB $tb).
  let reported: number | null = null;
  // The same for every attempt and event: built once, not once per event per attempt.
  const idempotency = keyed ? { idempotency_key: keyed.key, idempotency_step: step } : null;
  const commandMetadata = context || keyed ? (context ? metadataOf(context) : {}) : null;
  // One load-decide-append an attempt, written out in the loop rather than as nested async
  // functions (an attempt closure and a turn wrapper were about 1 KB and two promises a command).
  for (let tried = 1; ; tried++) {
    // A fold-based command takes the stream's turn from its load to its append (see joinLine).
    const turn = options.fold ? joinLine(store, streamId) : null;
    try {
      if (turn) {
        if (turn.ahead) {
          await turn.ahead.passed();
          turn.ahead = null;
        }
        turn.start();
      }
      const loaded: Loaded<S> = options.fold
        ? loadedFrom(await options.fold.load(streamId))
        : onlyHead
          ? { state: aggregate.initial(), revision: await streamHead(store, streamId), events: [] }
          : await loadStream(store, streamId, aggregate, options.fromRevision);
      if (onlyHead && reported !== null && reported > loaded.revision) loaded.revision = reported;
      if (keyed) {
        const done = await alreadyApplied(store, streamId, aggregate, keyed.key, step, loaded.revision, decide, options.resultAfter);
        if (done) return done;
      }
      const { events, result, after } = await decide(loaded.state, loaded);
      if (events.length === 0) return { state: loaded.state, appended: [], append: null, result };
      const withMetadata = commandMetadata ? events.map((event) => withCommandMetadata(event, { ...commandMetadata, ...event.metadata, ...idempotency })) : events;
      try {
        if (keyed) await markAttempt(store, keyed.key, { stream: streamId, step, after_revision: loaded.revision });
        const append = await store.append(streamId, withMetadata, {
          expectedRevision: loaded.revision === -1 ? 'no_stream' : loaded.revision,
          groupCommit: options.groupCommit === true && !turn?.followed,
        });
        if (options.foldOwnAppends) {
          const state = after !== undefined ? after : foldAppended(aggregate, loaded.state, withMetadata, loaded.revision);
          options.fold?.remember?.(streamId, { state, revision: append.nextExpectedRevision });
        }
        return { state: loaded.state, appended: withMetadata, append, result };
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        // Refused: the append lost to a concurrent one.
        reported = error.actual;
        // Still in the stream's turn: the next command of this process must not trust the fold either.
        options.fold?.stale?.(streamId);
      }
    } finally {
      if (turn) leaveLine(store, streamId, turn);
    }
    if (tried >= attempts) throw new ConcurrencyError(streamId, attempts);
    // Out of the stream's turn: another process appended, and this process's next command may go first.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(10 * tried, options.maxPauseMs ?? Infinity)));
  }
}

/** A fold's state as a loaded stream (no events: they were folded already). */
function loadedFrom<S>(folded: { state: S; revision: number }): Loaded<S> {
  return { state: folded.state, revision: folded.revision, events: [] };
}

/**
 * A stream's place in line: a command's turn runs from its load to its append (or refusal), so a
 * command that waits in line loads what the one before it appended.
 */
class Turn {
  constructor(
    /** The turn in line before this one, until this one has waited for it. */
    public ahead: Turn | null,
  ) {}

  /** When the turn began (performance.now()); -1 while it waits in line. */
  startedAt = -1;
  over = false;
  /** Another command of this process waits in line behind this one. */
  followed = false;
  /**
   * Wakes the one command in line behind this turn when the turn starts or ends. Made only when
   * one waits: most turns have nobody behind them (two promises made for every turn were ~370
   * bytes of a command's ~5.9 KB).
   */
  private wake: (() => void) | null = null;

  start(): void {
    this.startedAt = performance.now();
    this.wakeNext();
  }

  finish(): void {
    this.over = true;
    this.wakeNext();
  }

  /** Resolves when the turn is over, or when it has run STUCK_TURN_MS and the next in line stops waiting for it. */
  async passed(): Promise<void> {
    // Each wait is registered right after the flag it waits on was read, so no wake is lost.
    if (this.startedAt === -1) await this.changed();
    if (this.over) return;
    const left = this.startedAt + STUCK_TURN_MS - performance.now();
    if (left <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.changed(), new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
    clearTimeout(timer);
  }

  /** Resolves at the turn's next start or finish (only the one command behind it waits). */
  private changed(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  private wakeNext(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

/** Per store: the last turn in line of each stream a fold-based command of this process runs on. */
const streamLines = new WeakMap<EventStore, Map<string, Turn>>();

/**
 * Fold-based commands of this process on one stream (an incident's commands, a sequence's
 * reservations) take turns, each from its load to its append: concurrent ones (20 clients
 * commenting on one incident, a group of commands that got their ids together) would otherwise
 * all decide on the same revision and all but one lose the append, fold on and decide again,
 * each retry paying for the stream's state again. A command waits only while the one before it
 * loads, decides and appends; a refused append ends the turn, so the pause before a retry
 * holds nobody up. Other processes still race through the optimistic loop. A turn that has not
 * ended STUCK_TURN_MS after it began (an append held up in a slow store, commands that wait on
 * each other across streams) stops holding the next one, which then races as before.
 *
 * A decide must not run a fold-based command on its own stream and store: that command would
 * wait in line behind its caller until the turn counts as stuck. None does; telling a nested
 * command from a concurrent one would take an AsyncLocalStorage, whose promise hooks cost every
 * promise of the process a few percent of its CPU once any store is entered.
 *
 * Joins the stream's line: the turn returned waits for its `ahead` (when there is one) before it
 * starts, and is left through leaveLine whatever the command's outcome.
 */
function joinLine(store: EventStore, streamId: string): Turn {
  let lines = streamLines.get(store);
  if (!lines) streamLines.set(store, (lines = new Map()));
  const ahead = lines.get(streamId) ?? null;
  const turn = new Turn(ahead);
  lines.set(streamId, turn);
  if (ahead) ahead.followed = true;
  return turn;
}

/** The turn is over (its append made or refused, or its command failed): the next in line goes. */
function leaveLine(store: EventStore, streamId: string, turn: Turn): void {
  const lines = streamLines.get(store)!;
  if (lines.get(streamId) === turn) lines.delete(streamId);
  turn.finish();
}

/**
 * How long a turn holds the next command in line at most. A turn's work is a load, a decision
 * and an append (microseconds on SQLite, a round trip or two on a network store); past this the
 * turn is taken as stuck.
 */
const STUCK_TURN_MS = 1000;

/** Revision of the stream's last event, -1 when it does not exist. */
async function streamHead(store: EventStore, streamId: string): Promise<number> {
  const [last] = await store.readStream(streamId, { direction: 'backwards', maxCount: 1 });
  return last ? last.revision : -1;
}

/** Markers of every attempt are facts, not decisions: appended in any order (`any`). */
async function markAttempt(store: EventStore, key: string, marker: IdempotentAppend): Promise<void> {
  await store.append(idempotencyStream(key), [{ type: IDEMPOTENT_APPEND, data: marker, metadata: { actor: 'system:idempotency' } }], { expectedRevision: 'any' });
}

const REPLAY_PAGE = 1000;

/**
 * What an earlier attempt of the same keyed request appended to the stream at this step, answered
 * as this attempt's outcome; null when it appended nothing (the command runs as usual). Only
 * markers below `revision` (the stream as just loaded) can name an append that happened.
 */
async function alreadyApplied<S, R>(
  store: EventStore,
  streamId: string,
  aggregate: Aggregate<S>,
  key: string,
  step: number,
  revision: number,
  decide: (state: S, loaded: Loaded<S>) => Promise<{ events: NewEvent[]; result: R }> | { events: NewEvent[]; result: R },
  resultAfter: ((state: S) => R) | undefined,
): Promise<StreamCommandResult<S, R> | null> {
  const ours = (event: RecordedEvent) => event.metadata.idempotency_key === key && event.metadata.idempotency_step === step;
  const markers = (await store.readStream(idempotencyStream(key)))
    .filter((event) => event.type === IDEMPOTENT_APPEND)
    .map((event) => event.data as IdempotentAppend)
    .filter((marker) => marker.stream === streamId && marker.step === step && marker.after_revision < revision);
  for (const marker of markers) {
    const first = marker.after_revision + 1;
    const [named] = await store.readStream(streamId, { fromRevision: first, maxCount: 1 });
    if (!named || named.revision !== first || !ours(named)) continue;
    // One append's events are consecutive: read on while they are the step's.
    const appended: RecordedEvent[] = [];
    for (let from = first; ; ) {
      const page = await store.readStream(streamId, { fromRevision: from, maxCount: REPLAY_PAGE });
      const run = page.findIndex((event) => !ours(event));
      appended.push(...(run < 0 ? page : page.slice(0, run)));
      if (run >= 0 || page.length < REPLAY_PAGE) break;
      from = page[page.length - 1].revision + 1;
    }
    // The state the first attempt decided on: a replay is rare, so it may read the stream's start.
    const earlier = aggregate === (appendOnly as Aggregate<unknown>) ? [] : (await store.readStream(streamId, { maxCount: first })).filter((event) => event.revision < first);
    const before = earlier.reduce(aggregate.evolve, aggregate.initial());
    const last = appended[appended.length - 1];
    const result = resultAfter
      ? resultAfter(appended.reduce(aggregate.evolve, before))
      : (await decide(before, { state: before, revision: first - 1, events: earlier })).result;
    return {
      state: before,
      appended: appended.map(({ type, data, metadata }) => ({ type, data, metadata })),
      append: { nextExpectedRevision: last.revision, position: last.position },
      result,
      replayed: true,
    };
  }
  return null;
}

/**
 * The event with `metadata` for its own: a literal of every NewEvent member, because
 * `{ ...event, metadata }` on an event that had no metadata adds a member after a spread, V8's
 * slow path (about 0.6 us against 0.02; docs/benchmarks.md).
 */
function withCommandMetadata(event: NewEvent, metadata: Partial<EventMetadata>): NewEvent {
  return {
    type: event.type,
    schemaVersion: event.schemaVersion,
    data: event.data,
    metadata,
    packed: event.packed,
    streamConstants: event.streamConstants,
    chainHashed: event.chainHashed,
  } satisfies EveryNewEventMember;
}

/** The state after this command's own events, folded as if read back from the store. */
export function foldAppended<S>(aggregate: Aggregate<S>, state: S, appended: NewEvent[], revision: number): S {
  return appended.reduce(
    // A literal, not `{ ...event, revision }`: a spread with a member added after it took V8's
    // slow path, about 0.5 us an event against 0.02 (a micro-benchmark, docs/benchmarks.md).
    (current, event, index) =>
      aggregate.evolve(current, { type: event.type, schemaVersion: event.schemaVersion, data: event.data, metadata: event.metadata, revision: revision + 1 + index } as unknown as RecordedEvent),
    state,
  );
}
