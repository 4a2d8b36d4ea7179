/**
 * Check retention: summarizes, then removes, the raw checks older than the horizon
 * (CHECK_RETENTION_DAYS, counted back from the start of the UTC day). See check-summary.ts for
 * what a summary carries and docs/architecture.md ("Retention") for why it is exact.
 *
 * Per endpoint, one pass:
 *   1. finish the previous pass: remove the raw checks the last summary stands for (a crash
 *      may have come between appending it and removing them);
 *   2. read the stream forwards from there and take the checks older than the horizon, up to
 *      the first check that is not (checks recorded out of order wait until those before them
 *      age out); events of other types (alert signals a data dir from before `alerts-<id>`
 *      kept in the check stream) are skipped, and removed with the checks once their context
 *      says it carried them over (`carriedOver`);
 *      A pass cuts a hash-chained stream only just before an event that stores its whole hash
 *      (an anchor, docs/audit.md), so the first event left always does: up to 63 old checks
 *      wait for the next anchor;
 *   3. append their summary to check-summaries-<endpoint> through the one write path
 *      (runStreamCommand, with the expected revision), and only then remove them. A second
 *      process doing the same loses the append and decides again from that process's summary.
 * Projections apply the summaries: analytics' per-check rows (which monitoring's checks list
 * reads) drop the summarized checks, and rollups keep their sums.
 */
import type { CoordinationStore } from '../../platform/coordination/coordination.port.js';
import type { EventStore, RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { systemContext } from '../../platform/es/command-context.js';
import { LastEventFold } from '../../platform/es/last-event-fold.js';
import { runStreamCommand, type Aggregate } from '../../platform/es/stream-command.js';
import { fullHashAt, isWholeHash } from '../../platform/event-store/chain.js';
import { IDS_RESERVED, sequenceStream, type IdsReserved } from '../../platform/ids/id-allocator.js';
import { nextTurn } from '../../platform/next-turn.js';
import { CHECK_RECORDED, checksStream, type CheckRecordedData } from '../domain/check.js';
import { CHECKS_SUMMARIZED, checkSummariesStream, retentionHorizon, summarizeChecks, type ChecksSummarizedData } from '../domain/check-summary.js';

export const RETENTION_LEASE = 'check-retention';

/**
 * Event types another context left in an endpoint's check stream (a data dir from before that
 * context had a stream of its own) and has since carried over: retention cuts them with the
 * checks, so a prefix-only adapter (EventStoreDB `$tb`) is not stopped by them. Given by the
 * composition (alerting's old signal events); none without it.
 */
export type CarriedOverTypes = (endpointId: number) => Promise<string[]>;

export interface RetentionOptions {
  days: number;
  carriedOver?: CarriedOverTypes;
  /** Checks per summary event at most (its size stays bounded). */
  maxChecksPerSummary?: number;
  /** Stream page size when reading checks. */
  pageSize?: number;
  /**
   * The same log as stored, without upcasting (`Platform.storedEvents`): the summary's
   * `through_hash` is recomputed over the events as stored. The event store given otherwise.
   */
  storedEvents?: EventStore;
}

export interface RetentionProgress {
  endpoint: number;
  endpoints: number;
  summaries: number;
  removed: number;
}

export interface RetentionResult {
  horizon: string;
  endpoints: number;
  summaries: number;
  /** Raw check events no longer in the log (this pass's and any a crashed pass left). */
  removed: number;
}

export interface EndpointRetentionStatus {
  endpoint_id: number;
  /** checked_at of the oldest check still in the log; null when none. */
  oldest_retained: string | null;
  /** Checks the next pass removes (older than the horizon, in stream order before any newer one). */
  removable: number;
}

/** Thrown when another process holds the retention lease. */
export class RetentionBusyError extends Error {
  constructor(readonly holder: string | null) {
    super('Another process is applying retention');
    this.name = 'RetentionBusyError';
  }
}

/** What a pass needs of the summary stream: where the last summary's checks end. */
interface LastSummary {
  /** Revision of checks-<endpoint> the summarized checks end at; -1 when none. */
  through: number;
}

const NO_SUMMARY: LastSummary = { through: -1 };

const summaryAggregate: Aggregate<LastSummary> = {
  initial: () => NO_SUMMARY,
  evolve: (state, event) => (event.type === CHECKS_SUMMARIZED ? { through: (event.data as ChecksSummarizedData).through_revision } : state),
};

const RETENTION_CONTEXT = systemContext('retention');
/**
 * The first page of an endpoint's checks a pass reads: the horizon moves once a day, so most
 * hourly passes find the first check left already newer than it, and a whole page (1,000
 * checks decoded) per endpoint only to learn that would be most of the pass's cost.
 */
const FIRST_PAGE = 16;
/** Passes racing on one endpoint (the lease keeps them apart; a paused holder may not know it lost it). */
const SUMMARY_ATTEMPTS = 8;

export class CheckRetention {
  private readonly maxChecks: number;
  private readonly pageSize: number;
  /** Each summary stream read from its last event only. */
  private readonly lastSummaries: LastEventFold<LastSummary>;

  constructor(
    private readonly events: EventStore,
    private readonly options: RetentionOptions,
  ) {
    this.maxChecks = options.maxChecksPerSummary ?? 5000;
    this.pageSize = options.pageSize ?? 1000;
    this.lastSummaries = new LastEventFold(events, NO_SUMMARY, (last) => summaryAggregate.evolve(NO_SUMMARY, last));
  }

  horizon(now: number): number {
    return retentionHorizon(now, this.options.days);
  }

  /** Endpoint ids 1..highest allocated (ids come from the `endpoint` sequence stream). */
  async endpointIds(): Promise<number[]> {
    const [last] = await this.events.readStream(sequenceStream('endpoint'), { direction: 'backwards', maxCount: 1 });
    if (!last || last.type !== IDS_RESERVED) return [];
    const { first, count } = last.data as IdsReserved;
    return Array.from({ length: first + count - 1 }, (_, i) => i + 1);
  }

  /**
   * One pass over every endpoint. With a coordination store, holds the retention lease for the
   * whole pass (renewed between endpoints) and throws RetentionBusyError when another has it.
   */
  async apply(
    now: number,
    options: {
      coordination?: CoordinationStore | null;
      owner?: string;
      /** How long the lease outlives a process that died holding it. */
      leaseTtlMs?: number;
      onProgress?: (progress: RetentionProgress) => void;
      /** Called after each summary is appended, before the checks it stands for are removed. */
      onSummary?: (summary: ChecksSummarizedData) => void | Promise<void>;
      shouldStop?: () => boolean;
    } = {},
  ): Promise<RetentionResult> {
    const { coordination, owner = 'retention', onProgress } = options;
    const ttlMs = options.leaseTtlMs ?? 5 * 60_000;
    const hold = async () => {
      if (!coordination) return;
      if (!(await coordination.acquireLease(RETENTION_LEASE, owner, ttlMs))) throw new RetentionBusyError(null);
    };
    await hold();
    const horizon = this.horizon(now);
    const result: RetentionResult = { horizon: new Date(horizon).toISOString(), endpoints: 0, summaries: 0, removed: 0 };
    try {
      const ids = await this.endpointIds();
      for (const [index, endpointId] of ids.entries()) {
        if (options.shouldStop?.()) break;
        // Over SQLite a pass never waits on I/O: without a turn between endpoints, 2,000 of them
        // with nothing to summarize held the loop for 0.5-1.2 s every hour (docs/benchmarks.md).
        if (index > 0) await nextTurn();
        await hold();
        const done = await this.applyToEndpoint(endpointId, horizon, options.onSummary);
        result.endpoints += 1;
        result.summaries += done.summaries;
        result.removed += done.removed;
        onProgress?.({ endpoint: index + 1, endpoints: ids.length, summaries: result.summaries, removed: result.removed });
      }
      await this.events.reclaimSpace?.();
    } finally {
      await coordination?.releaseLease(RETENTION_LEASE, owner).catch(() => undefined);
    }
    return result;
  }

  /** Summarizes and removes one endpoint's checks older than `horizon`. */
  async applyToEndpoint(endpointId: number, horizon: number, onSummary?: (summary: ChecksSummarizedData) => void | Promise<void>): Promise<{ summaries: number; removed: number }> {
    let summaries = 0;
    let removed = 0;
    const types = [CHECK_RECORDED, ...((await this.options.carriedOver?.(endpointId)) ?? [])];
    const stream = checkSummariesStream(endpointId);
    for (;;) {
      const last = await this.lastSummaries.load(stream);
      if (last.state.through >= 0) removed += (await this.events.removeEvents(checksStream(endpointId), { throughRevision: last.state.through, types })).removed;
      // The one write path: the summary expects the summary stream's revision it was decided on;
      // another process summarizing meanwhile makes it decide again from that process's summary.
      const { result } = await runStreamCommand(
        this.events,
        stream,
        summaryAggregate,
        RETENTION_CONTEXT,
        async (after) => {
          const old = await this.oldChecks(endpointId, after.through + 1, horizon, this.maxChecks);
          if (old.checks.length === 0) return { events: [], result: null };
          const summary = summarizeChecks(endpointId, old.checks[0].check.team_id, old.checks, new Date(horizon).toISOString());
          const last = old.checks[old.checks.length - 1];
          // The full hash of the last removed check (it may store only a prefix).
          const throughHash = last.hash === undefined ? null : await fullHashAt(this.options.storedEvents ?? this.events, checksStream(endpointId), last.revision);
          if (throughHash !== null) summary.through_hash = throughHash;
          return { events: [{ type: CHECKS_SUMMARIZED, data: summary, metadata: { occurred_at: new Date(horizon).toISOString() } }], result: { summary, more: old.more } };
        },
        { fold: this.lastSummaries, attempts: SUMMARY_ATTEMPTS },
      );
      if (result === null) return { summaries, removed };
      summaries += 1;
      await onSummary?.(result.summary);
      removed += (await this.events.removeEvents(checksStream(endpointId), { throughRevision: result.summary.through_revision, types })).removed;
      if (!result.more) return { summaries, removed };
      await nextTurn();
    }
  }

  /** What the next pass would do for each endpoint, without changing anything. */
  async status(now: number): Promise<{ horizon: string; endpoints: EndpointRetentionStatus[] }> {
    const horizon = this.horizon(now);
    const endpoints: EndpointRetentionStatus[] = [];
    for (const endpointId of await this.endpointIds()) {
      const { through } = (await this.lastSummaries.load(checkSummariesStream(endpointId))).state;
      const old = await this.oldChecks(endpointId, through + 1, horizon, Number.MAX_SAFE_INTEGER);
      const oldest = await this.firstCheckAfter(endpointId, through);
      endpoints.push({ endpoint_id: endpointId, oldest_retained: oldest?.checked_at ?? null, removable: old.checks.length });
    }
    return { horizon: new Date(horizon).toISOString(), endpoints };
  }


  /** The first check of the stream after revision `after` (an adapter may still hold covered ones). */
  private async firstCheckAfter(endpointId: number, after: number): Promise<CheckRecordedData | null> {
    for (let from = after + 1; ; ) {
      const page = await this.events.readStream(checksStream(endpointId), { fromRevision: from, maxCount: this.pageSize });
      const check = page.find((event) => event.type === CHECK_RECORDED);
      if (check) return check.data as CheckRecordedData;
      if (page.length < this.pageSize) return null;
      from = page[page.length - 1].revision + 1;
    }
  }

  /**
   * Checks from revision `from` on that are older than `horizon`, up to the first that is not,
   * ending where a cut may end: just before an event that stores its whole hash or none (a
   * chained stream's anchor, or any event of an unchained one), or at the head of an unchained
   * stream.
   */
  private async oldChecks(endpointId: number, from: number, horizon: number, max: number): Promise<{ checks: Array<{ revision: number; check: CheckRecordedData; hash?: string }>; more: boolean }> {
    const checks: Array<{ revision: number; check: CheckRecordedData; hash?: string }> = [];
    /** Revisions a removal may end at. */
    const cuts = new Set<number>();
    const cutBefore = (event: RecordedEvent) => {
      if (event.metadata.hash === undefined || isWholeHash(event.metadata.hash)) cuts.add(event.revision - 1);
    };
    const cutAt = (more: boolean) => {
      while (checks.length > 0 && !cuts.has(checks[checks.length - 1].revision)) checks.pop();
      return { checks, more: more && checks.length > 0 };
    };
    let head: RecordedEvent | undefined;
    for (let next = from, size = Math.min(FIRST_PAGE, this.pageSize); ; size = this.pageSize) {
      const page: RecordedEvent[] = await this.events.readStream(checksStream(endpointId), { fromRevision: next, maxCount: size });
      for (const event of page) {
        if (event.revision < from) continue;
        head = event;
        cutBefore(event);
        if (event.type !== CHECK_RECORDED) continue;
        const check = event.data as CheckRecordedData;
        if (Date.parse(check.checked_at) >= horizon) return cutAt(false);
        if (checks.length === max) return cutAt(true);
        checks.push({ revision: event.revision, check, hash: event.metadata.hash });
      }
      if (page.length < size) {
        if (head !== undefined && head.metadata.hash === undefined) cuts.add(head.revision);
        return cutAt(false);
      }
      next = page[page.length - 1].revision + 1;
    }
  }
}
