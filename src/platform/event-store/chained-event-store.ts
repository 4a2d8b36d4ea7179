import { chainedFieldsOf, chainHash, chainOf, fullHashAt, GENESIS_HASH, isAnchorRevision, isWholeHash, storedHash } from './chain.js';
import { DelegatingEventStore } from './delegating-event-store.js';
import { isoNow } from '../time/iso-now.js';
import { outsideIdempotency } from '../es/idempotency-scope.js';
import { appendOnly, runStreamCommand, type StreamFold } from '../es/stream-command.js';
import { type AppendOptions, type AppendResult, type EventMetadata, type EventStore, type ExpectedRevision, type NewEvent } from './event-store.port.js';

/** The head of a stream's chain as this process last wrote or read it. */
interface ChainHead {
  revision: number;
  /** The full hash (the event may store only its prefix). */
  hash: string;
  /** The hash must be stored as the next event's prev_hash (it is no stored event's hash). */
  explicit: boolean;
}

const NEW_STREAM: ChainHead = Object.freeze({ revision: -1, hash: GENESIS_HASH, explicit: false });

/** Streams whose head is remembered; past it the cache starts over (a miss costs one read). */
const MAX_HEADS = 100_000;
/** An append with expected revision `any` is tried this often when another append gets in between. */
const ANY_ATTEMPTS = 20;

/**
 * Every adapter, chained: each appended event gets `metadata.hash` (src/platform/event-store/chain.ts),
 * linked to the hash of its stream's previous revision. The previous hash comes from this
 * process's last append to the stream when the expected revision matches it, otherwise from
 * the stream's last event (one read). An append with expected revision `any` is made with the
 * revision of the stream's head through runStreamCommand, which reads the head again when
 * another append got in between, so its link is always the real previous event. Reads pass through as they are: the chain is
 * verified over the stored events (src/audit/application/verify.ts), never on every read.
 *
 * Each event stores the 16-hex prefix of its hash, an anchor the whole hash (chain.ts); the heads
 * kept here are full hashes, and a head this process does not know is recomputed from the
 * stream's newest anchor (fullHashAt).
 */
export function chainedEventStore(store: EventStore): EventStore {
  return new ChainedEventStore(store);
}

class ChainedEventStore extends DelegatingEventStore {
  private readonly heads = new Map<string, ChainHead>();

  override append(streamId: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    try {
      if (events.length === 0) return this.inner.append(streamId, events, options);
      if (options.expectedRevision === 'any') return this.appendAny(streamId, events, options.groupCommit === true);
      const expectedRevision = options.expectedRevision;
      // A head this process knows is taken at once: most appends follow this process's own. Not
      // an async function: its promise and await were about a tenth of the chain's own work on a
      // single-event append (docs/benchmarks.md).
      const head = this.knownHead(streamId, expectedRevision);
      if (head !== undefined) return this.appendAfter(streamId, head, events, options);
      return this.headFor(streamId, expectedRevision).then((read) => this.appendAfter(streamId, read, events, options));
    } catch (error) {
      // Refused as an async function would refuse: a rejected promise, never a throw.
      return Promise.reject(error);
    }
  }

  /** The events stamped to follow `head`, appended; the stream's head remembered, or forgotten when the append fails. */
  private appendAfter(streamId: string, head: ChainHead, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    const expectedRevision = options.expectedRevision;
    const { stamped, last } = this.stamp(streamId, typeof expectedRevision === 'number' ? expectedRevision : -1, head, events);
    return this.inner.append(streamId, stamped, { expectedRevision, groupCommit: options.groupCommit }).then(
      (result) => {
        this.remember(streamId, { revision: result.nextExpectedRevision, hash: last, explicit: false });
        return result;
      },
      (error: unknown) => {
        this.heads.delete(streamId);
        throw error;
      },
    );
  }

  /**
   * `any`: the chain must link to the real previous event, so the append is made at the
   * revision of the stream's head, through the one write path (runStreamCommand, append-only:
   * retried from the new head when another append gets in between). The head comes from this
   * store's own heads, so an append after this process's last one reads nothing.
   */
  private async appendAny(streamId: string, events: NewEvent[], groupCommit: boolean): Promise<AppendResult> {
    // The platform's own bookkeeping, never a step of a keyed request; events keep their own metadata.
    const { append } = await outsideIdempotency(() =>
      runStreamCommand(this, streamId, appendOnly, null, () => ({ events, result: undefined }), { fold: this.headFold, attempts: ANY_ATTEMPTS, maxPauseMs: 5, groupCommit }),
    );
    return append!;
  }

  /** Where each stream ends, for `any` appends: a head this process appended or read, else the last event. */
  private readonly headFold: StreamFold<null> = {
    load: async (streamId) => {
      const head = this.heads.get(streamId) ?? (await this.headFor(streamId, 'any'));
      if (head.revision >= 0) this.remember(streamId, head);
      return { state: null, revision: head.revision };
    },
    stale: (streamId) => this.heads.delete(streamId),
  };

  private remember(streamId: string, head: ChainHead): void {
    if (this.heads.size >= MAX_HEADS) this.heads.clear();
    this.heads.set(streamId, head);
  }

  /**
   * Events as stored: occurred_at and the chain hash fixed here, so the hash covers what is
   * stored; each stores its hash's prefix, an anchor the whole hash. `last`: the last full hash.
   */
  private stamp(streamId: string, base: number, head: ChainHead, events: NewEvent[]): { stamped: NewEvent[]; last: string } {
    const now = isoNow();
    let prev = head.hash;
    // The hash covers what the adapter stores: data as its JSON reads back (canonicalJson treats
    // values as JSON.stringify does), occurred_at fixed here, actor and request_id null when absent.
    const stamped = events.map((event, i): NewEvent => {
      const revision = base + 1 + i;
      const occurredAt = event.metadata?.occurred_at ?? now;
      const hash = chainHash(prev, {
        stream: streamId,
        revision,
        type: event.type,
        data: event.data ?? null,
        occurred_at: occurredAt,
        actor: event.metadata?.actor ?? null,
        request_id: event.metadata?.request_id ?? null,
      });
      prev = hash;
      const linked = i === 0 && head.explicit;
      // A literal of one shape, as stampedMetadata's (a spread of the caller's event is slower).
      return {
        type: event.type,
        schemaVersion: event.schemaVersion,
        data: event.data,
        metadata: stampedMetadata(event.metadata, occurredAt, storedHash(hash, linked || isAnchorRevision(revision)), linked ? head.hash : undefined),
        packed: event.packed,
        streamConstants: event.streamConstants,
        chainHashed: true,
      };
    });
    return { stamped, last: prev };
  }

  /** The head the append links to when it needs no read: a new stream, or this process's last append or read matching the expected revision. */
  private knownHead(streamId: string, expected: ExpectedRevision): ChainHead | undefined {
    if (expected === 'no_stream') return NEW_STREAM;
    const known = this.heads.get(streamId);
    return known && known.revision === expected ? known : undefined;
  }

  private async headFor(streamId: string, expected: ExpectedRevision): Promise<ChainHead> {
    const known = this.knownHead(streamId, expected);
    if (known) return known;
    const [last] = await this.inner.readStream(streamId, { direction: 'backwards', maxCount: 1 });
    if (!last) {
      // Nothing reads back: a new stream, or one whose events all left the log (retention).
      // Then the chain restarts from '' with prev_hash stored, and verification links it
      // across the gap through the retention summary's hash when there is one.
      return typeof expected === 'number' && expected >= 0 ? { revision: expected, hash: GENESIS_HASH, explicit: true } : NEW_STREAM;
    }
    const stored = last.metadata.hash;
    if (stored !== undefined && isWholeHash(stored)) return { revision: last.revision, hash: stored, explicit: false };
    if (stored !== undefined) {
      // A prefix: the full hash from the newest anchor. When no anchor can be reached (rows
      // removed behind the store's back), the chain restarts from '' with prev_hash stored, as
      // after a stream's events all left the log; verification reports the break before it.
      const full = await fullHashAt(this.inner, streamId, last.revision);
      return full !== null ? { revision: last.revision, hash: full, explicit: false } : { revision: last.revision, hash: GENESIS_HASH, explicit: true };
    }
    return { revision: last.revision, hash: chainOf((await this.inner.readStream(streamId)).map(chainedFieldsOf)), explicit: true };
  }
}

/**
 * The metadata an event is stored with: every field of EventMetadata written out (undefined is
 * what adapters leave out), the caller's prev_hash replaced. A literal of one shape, because
 * spreading the caller's metadata and adding three members made a dictionary-mode object that
 * cost more CPU than the hash itself (a CPU profile of the chained append, docs/benchmarks.md).
 */
function stampedMetadata(input: Partial<EventMetadata> | undefined, occurredAt: string, hash: string, prevHash: string | undefined): Partial<EventMetadata> {
  return {
    actor: input?.actor,
    request_id: input?.request_id,
    correlation_id: input?.correlation_id,
    causation_id: input?.causation_id,
    occurred_at: occurredAt,
    idempotency_key: input?.idempotency_key,
    idempotency_step: input?.idempotency_step,
    hash,
    prev_hash: prevHash,
  };
}
