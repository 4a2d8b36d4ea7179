import {
  type EventStore,
  type ExpectedRevision,
  WrongExpectedRevisionError,
} from '../event-store/event-store.port.js';
import { currentIdempotency, idempotencyStream, nextStep, type IdempotencyScope } from '../es/idempotency-scope.js';

/** Event recorded in `sequence-<name>`: ids first .. first + count - 1 now belong to someone. */
export const IDS_RESERVED = 'IdsReserved';

/** Event recorded in `idempotency-<key hash>`: the id a keyed request's step took. */
export const IDEMPOTENT_ID_ALLOCATED = 'IdempotentIdAllocated';

interface IdempotentIdAllocated {
  sequence: string;
  step: number;
  id: number;
}

function isAllocation(data: unknown, sequence: string, step: number): boolean {
  const allocation = data as IdempotentIdAllocated;
  return allocation.sequence === sequence && allocation.step === step;
}

export interface IdsReserved {
  first: number;
  count: number;
}

export interface IdRange {
  first: number;
  count: number;
}

export interface IdAllocatorOptions {
  /** Attempts per reservation before giving up under contention. */
  maxAttempts?: number;
  /** Upper bound of the random pause between attempts, in milliseconds. */
  maxJitterMs?: number;
  /**
   * Sequences handed out from in-process blocks of this size: one append per block instead of
   * one per id. Ids left in a block when the process stops are never used (gaps, no duplicates).
   */
  blockSizes?: Record<string, number>;
}

export class IdAllocationError extends Error {
  constructor(sequence: string, attempts: number, options?: { cause?: unknown }) {
    super(`Could not reserve ids in sequence ${sequence} after ${attempts} attempts`, options);
    this.name = 'IdAllocationError';
  }
}

interface SequenceState {
  expected: ExpectedRevision;
  nextId: number;
}

export function sequenceStream(sequence: string): string {
  return `sequence-${sequence}`;
}

/**
 * Integer ids unique across every process sharing the event store. Each reservation is an
 * append with the exact expected revision of the sequence stream, so two processes can never
 * both reserve the same range: the loser re-reads and tries again.
 */
export class IdAllocator {
  private readonly known = new Map<string, SequenceState>();
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly blocks = new Map<string, { next: number; end: number }>();
  private readonly maxAttempts: number;
  private readonly maxJitterMs: number;
  private readonly blockSizes: Record<string, number>;

  constructor(
    private readonly store: EventStore,
    options: IdAllocatorOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 50;
    this.maxJitterMs = options.maxJitterMs ?? 10;
    this.blockSizes = options.blockSizes ?? {};
  }

  /**
   * The next id of the sequence; the first id ever handed out is 1. Inside a keyed request
   * (Idempotency-Key) the id is recorded under the key, and the request's retry gets the same id.
   */
  async next(sequence: string): Promise<number> {
    const scope = currentIdempotency();
    return scope ? this.keyedNext(sequence, scope) : this.nextUnkeyed(sequence);
  }

  private async nextUnkeyed(sequence: string): Promise<number> {
    const blockSize = this.blockSizes[sequence];
    if (!blockSize || blockSize <= 1) return (await this.reserve(sequence, 1)).first;
    return this.serialized(sequence, async () => {
      let block = this.blocks.get(sequence);
      if (!block || block.next >= block.end) {
        const range = await this.reserveNow(sequence, blockSize);
        block = { next: range.first, end: range.first + range.count };
        this.blocks.set(sequence, block);
      }
      return block.next++;
    });
  }

  private async keyedNext(sequence: string, scope: IdempotencyScope): Promise<number> {
    const step = nextStep(scope, `ids:${sequence}`);
    const stream = idempotencyStream(scope.key);
    for (let attempt = 1; ; attempt++) {
      const recorded = await this.store.readStream(stream);
      const earlier = recorded.find((event) => event.type === IDEMPOTENT_ID_ALLOCATED && isAllocation(event.data, sequence, step));
      if (earlier) return (earlier.data as IdempotentIdAllocated).id;
      const id = await this.nextUnkeyed(sequence);
      try {
        const data: IdempotentIdAllocated = { sequence, step, id };
        await this.store.append(stream, [{ type: IDEMPOTENT_ID_ALLOCATED, data, metadata: { actor: 'system:id-allocator' } }], {
          expectedRevision: recorded.length === 0 ? 'no_stream' : recorded[recorded.length - 1].revision,
        });
        return id;
      } catch (error) {
        // Another attempt of the same request recorded first: its id wins, this one is a gap.
        if (!(error instanceof WrongExpectedRevisionError) || attempt >= this.maxAttempts) throw error;
      }
    }
  }

  /** `count` consecutive ids in one append, for bulk imports. */
  reserve(sequence: string, count: number): Promise<IdRange> {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
    return this.serialized(sequence, () => this.reserveNow(sequence, count));
  }

  private async reserveNow(sequence: string, count: number): Promise<IdRange> {
    const stream = sequenceStream(sequence);
    let lastError: unknown;
    for (let attempt = 1; attempt <= this.maxAttempts; attempt++) {
      const state = this.known.get(sequence) ?? (await this.load(sequence));
      const range = { first: state.nextId, count };
      try {
        const result = await this.store.append(stream, [{ type: IDS_RESERVED, data: range, metadata: { actor: 'system:id-allocator' } }], {
          expectedRevision: state.expected,
        });
        this.known.set(sequence, { expected: result.nextExpectedRevision, nextId: range.first + count });
        return range;
      } catch (error) {
        if (!(error instanceof WrongExpectedRevisionError)) throw error;
        lastError = error;
        this.known.delete(sequence);
        await pause(Math.random() * Math.min(this.maxJitterMs, attempt));
      }
    }
    throw new IdAllocationError(sequence, this.maxAttempts, { cause: lastError });
  }

  /** Only the newest reservation matters: it says where the next free id starts. */
  private async load(sequence: string): Promise<SequenceState> {
    const [last] = await this.store.readStream(sequenceStream(sequence), { direction: 'backwards', maxCount: 1 });
    if (!last) return { expected: 'no_stream', nextId: 1 };
    const data = last.data as IdsReserved;
    return { expected: last.revision, nextId: data.first + data.count };
  }

  /** One reservation per sequence at a time in this process: callers here never race each other. */
  private serialized<T>(sequence: string, task: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(sequence) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.queues.set(sequence, tail);
    void tail.then(() => {
      if (this.queues.get(sequence) === tail) this.queues.delete(sequence);
    });
    return result;
  }
}

function pause(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((done) => setTimeout(done, ms));
}
