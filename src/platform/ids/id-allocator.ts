import type { EventStore, RecordedEvent } from '../event-store/event-store.port.js';
import { systemContext } from '../es/command-context.js';
import { currentIdempotency, idempotencyStream, nextStep, outsideIdempotency, type IdempotencyScope } from '../es/idempotency-scope.js';
import { LastEventFold } from '../es/last-event-fold.js';
import { ConcurrencyError, runStreamCommand, type Aggregate } from '../es/stream-command.js';

/** Event recorded in `sequence-<name>`: ids first .. first + count - 1 now belong to someone. */
export const IDS_RESERVED = 'IdsReserved';

/** Event recorded in `idempotency-<key hash>`: the id (or the range) a keyed request's step took. */
export const IDEMPOTENT_ID_ALLOCATED = 'IdempotentIdAllocated';

interface IdempotentIdAllocated {
  sequence: string;
  step: number;
  /** The id, or the first id of a range of `count`. */
  id: number;
  /** Present for a range (`reserve`); a single id has none. */
  count?: number;
}

export interface IdsReserved {
  first: number;
  count: number;
}

export interface IdRange {
  first: number;
  count: number;
}

/** A request waiting for the next reservation of its sequence. */
interface Gathered {
  count: number;
  resolve(range: IdRange): void;
  reject(error: unknown): void;
}

export interface IdAllocatorOptions {
  /** Attempts per reservation before giving up under contention. */
  maxAttempts?: number;
  /** Upper bound of the random pause between attempts, in milliseconds. */
  maxJitterMs?: number;
}

export class IdAllocationError extends Error {
  constructor(sequence: string, attempts: number, options?: { cause?: unknown }) {
    super(`Could not reserve ids in sequence ${sequence} after ${attempts} attempts`, options);
    this.name = 'IdAllocationError';
  }
}

export function sequenceStream(sequence: string): string {
  return `sequence-${sequence}`;
}

const CONTEXT = systemContext('id-allocator');

/** A sequence stream folded: the next free id. Only its newest reservation matters. */
const sequenceAggregate: Aggregate<number> = {
  initial: () => 1,
  evolve: (next, event) => (event.type === IDS_RESERVED ? (event.data as IdsReserved).first + (event.data as IdsReserved).count : next),
};

/** A key's stream folded: what each of the keyed request's id steps took. */
const allocationsAggregate: Aggregate<Map<string, IdempotentIdAllocated>> = {
  initial: () => new Map(),
  evolve: (taken, event: RecordedEvent) => {
    if (event.type !== IDEMPOTENT_ID_ALLOCATED) return taken;
    const allocation = event.data as IdempotentIdAllocated;
    return new Map(taken).set(`${allocation.sequence}:${allocation.step}`, allocation);
  },
};

/**
 * Integer ids unique across every process sharing the event store. Each reservation is an
 * append with the exact expected revision of the sequence stream, through the one write path
 * (runStreamCommand), so two processes can never both reserve the same range: the loser
 * re-reads and tries again.
 */
export class IdAllocator {
  /**
   * The sequences this process reserved from, remembered after its own appends so the next
   * reservation reads nothing; a sequence is read again (its last event only) after another
   * process appended to it.
   */
  private readonly heads: LastEventFold<number>;
  /** Per sequence: the requests gathered for its next reservation, until that reservation decides. */
  private readonly gathering = new Map<string, Gathered[]>();
  private readonly maxAttempts: number;
  private readonly maxJitterMs: number;

  constructor(
    private readonly store: EventStore,
    options: IdAllocatorOptions = {},
  ) {
    this.heads = new LastEventFold(store, 1, (last) => sequenceAggregate.evolve(1, last), true);
    this.maxAttempts = options.maxAttempts ?? 50;
    this.maxJitterMs = options.maxJitterMs ?? 10;
  }

  /**
   * The next id of the sequence; the first id ever handed out is 1. Inside a keyed request
   * (Idempotency-Key) the id is recorded under the key, and the request's retry gets the same id.
   */
  async next(sequence: string): Promise<number> {
    const scope = currentIdempotency();
    if (!scope) return (await this.reserveUnkeyed(sequence, 1)).first;
    return (await this.keyed(sequence, 1, scope)).first;
  }

  /**
   * `count` consecutive ids in one append, for bulk imports. Inside a keyed request the range is
   * recorded under the key like a single id: a retry gets the same range.
   */
  async reserve(sequence: string, count: number): Promise<IdRange> {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
    const scope = currentIdempotency();
    return scope ? this.keyed(sequence, count, scope) : this.reserveUnkeyed(sequence, count);
  }

  /**
   * The id step of a keyed request: the range an earlier attempt recorded under the key, or a
   * new one recorded now. When another attempt of the request records first, its range wins and
   * this one's is a gap.
   */
  private async keyed(sequence: string, count: number, scope: IdempotencyScope): Promise<IdRange> {
    const step = nextStep(scope, `ids:${sequence}`);
    const { result } = await outsideIdempotency(() =>
      runStreamCommand(this.store, idempotencyStream(scope.key), allocationsAggregate, CONTEXT, async (taken) => {
        const earlier = taken.get(`${sequence}:${step}`);
        if (earlier) return { events: [], result: { first: earlier.id, count: earlier.count ?? 1 } };
        const range = await this.reserveUnkeyed(sequence, count);
        const allocated: IdempotentIdAllocated = { sequence, step, id: range.first, ...(count > 1 ? { count } : {}) };
        return { events: [{ type: IDEMPOTENT_ID_ALLOCATED, data: allocated }], result: range };
      }, { attempts: this.maxAttempts, maxPauseMs: this.maxJitterMs }),
    );
    return result;
  }

  /**
   * Requests of one sequence are gathered, reserved with one append and handed out in the order
   * they were asked: concurrent commands (20 clients creating incidents) share the sequence append
   * instead of paying one each, and every id reserved is handed out, so none is skipped. A group
   * is reserved after the current turn of the event loop, and closes when its reservation's turn
   * on the sequence stream begins: runStreamCommand takes this process's commands on one stream
   * one at a time, so requests made while the reservation before it is under way join this one.
   */
  private reserveUnkeyed(sequence: string, count: number): Promise<IdRange> {
    return new Promise<IdRange>((resolve, reject) => {
      let group = this.gathering.get(sequence);
      if (!group) {
        const opened: Gathered[] = [];
        this.gathering.set(sequence, (group = opened));
        setImmediate(() => void this.reserveGathered(sequence, opened));
      }
      group.push({ count, resolve, reject });
    });
  }

  private async reserveGathered(sequence: string, group: Gathered[]): Promise<void> {
    const close = () => {
      if (this.gathering.get(sequence) === group) this.gathering.delete(sequence);
      return group.reduce((sum, request) => sum + request.count, 0);
    };
    try {
      const range = await outsideIdempotency(() => this.reserveNow(sequence, close));
      let next = range.first;
      for (const request of group) {
        request.resolve({ first: next, count: request.count });
        next += request.count;
      }
    } catch (error) {
      close();
      for (const request of group) request.reject(error);
    }
  }

  /** One reservation of `count()` ids, asked when the reservation decides (its turn on the stream). */
  private async reserveNow(sequence: string, count: () => number): Promise<IdRange> {
    try {
      const { result } = await runStreamCommand(
        this.store,
        sequenceStream(sequence),
        sequenceAggregate,
        CONTEXT,
        (next) => {
          const reserved = { first: next, count: count() } satisfies IdsReserved;
          return { events: [{ type: IDS_RESERVED, data: reserved }], result: reserved };
        },
        { fold: this.heads, foldOwnAppends: true, attempts: this.maxAttempts, maxPauseMs: this.maxJitterMs },
      );
      return result;
    } catch (error) {
      if (error instanceof ConcurrencyError) throw new IdAllocationError(sequence, this.maxAttempts, { cause: error });
      throw error;
    }
  }
}
