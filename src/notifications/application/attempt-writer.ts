import { PreconditionFailedError, type Doc, type ReadStore, type ViewWrite } from '../../platform/read-store/read-store.port.js';
import type { AttemptState } from '../domain/delivery.js';

/** Physical names of the worker's collections (attempt-store.ts). */
export interface AttemptCollections {
  attempts: string;
  retries: string;
}

interface Queued {
  /** The state the lane read under its claim; null when the delivery had none (its first attempt). */
  before: AttemptState | null;
  after: AttemptState;
  settle: (error?: unknown) => void;
}

/**
 * A state waits at most this long for others to share its commit, or until MAX_BATCH wait.
 * Committing at the end of each event-loop turn instead gave batches of one or two: responses
 * come back a few per turn.
 */
const FLUSH_AFTER_MS = 10;
const MAX_BATCH = 256;

/**
 * Records attempt states, the states of many attempts in one commit. Each write is fenced on the
 * attempt count its lane read under the channel's claim, or on there being no state yet for a
 * first attempt (a writer whose claim lapsed meanwhile changes nothing).
 *
 * Why: one commit per attempt was the worker's largest cost (in SQLite, about 0.35 ms per
 * commit: the transaction, two JSON indexes and the collection stamps), while a commit of 30
 * states costs about 0.05 ms a state. The lanes do not wait for the commit before their next
 * send, only before reading their channel's next page and before releasing its claim (they
 * `flush` then). A state not yet committed when the process dies was sent but is still
 * pending: it goes out again after the restart with the same webhook-id (at least once), as
 * an attempt cut off by the crash always did.
 *
 * When one fence of a batch fails, the batch is committed again one state at a time, so only
 * the fenced-out state is refused.
 */
export class AttemptWriter {
  private queue: Queued[] = [];
  private scheduled: NodeJS.Timeout | null = null;
  private committing: Promise<void> = Promise.resolve();

  constructor(
    private readonly views: ReadStore,
    private readonly names: AttemptCollections,
  ) {}

  /** Settles once `after` is committed; rejects when its fence failed or the commit failed. */
  record(before: AttemptState | null, after: AttemptState): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ before, after, settle: (error) => (error === undefined ? resolve() : reject(error)) });
      if (this.queue.length >= MAX_BATCH) void this.flush();
      else this.scheduled ??= setTimeout(() => void this.flush(), FLUSH_AFTER_MS);
    });
  }

  /** Commits what is waiting now; settles once every state handed over before the call is committed (or refused). */
  flush(): Promise<void> {
    if (this.scheduled) clearTimeout(this.scheduled);
    this.scheduled = null;
    const batch = this.queue;
    this.queue = [];
    // Commits run one after another, so a later state of a delivery never overtakes an earlier one.
    this.committing = this.committing.then(() => (batch.length === 0 ? undefined : this.commit(batch)));
    return this.committing;
  }

  private async commit(batch: Queued[]): Promise<void> {
    try {
      await this.views.commit(batch.flatMap((queued) => writesOf(this.names, queued)), { expect: batch.map((queued) => fenceOf(this.names, queued)) });
      for (const queued of batch) queued.settle();
    } catch (error) {
      if (!(error instanceof PreconditionFailedError) || batch.length === 1) {
        for (const queued of batch) queued.settle(error);
        return;
      }
      for (const queued of batch) await this.commit([queued]);
    }
  }
}

/** The state, and its copy among the retries while it waits for another attempt. */
function writesOf(names: AttemptCollections, { before, after }: Queued): ViewWrite[] {
  const doc = after as unknown as Doc;
  const writes: ViewWrite[] = [{ op: 'put', collection: names.attempts, doc }];
  if (after.state === 'pending') writes.push({ op: 'put', collection: names.retries, doc });
  else if (before !== null) writes.push({ op: 'delete', collection: names.retries, id: after.id });
  return writes;
}

function fenceOf(names: AttemptCollections, { before, after }: Queued) {
  // A missing document counts as null: a first attempt is recorded only while no state exists.
  return { collection: names.attempts, id: after.id, field: 'attempts', value: before === null ? null : before.attempts };
}
