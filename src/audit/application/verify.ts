/**
 * Walks the hash chains of the log (docs/audit.md): every stream (the log in one pass), a team's,
 * or one. Reads the events as stored (an event store without upcasters), with a turn of the
 * event loop between two pages and two streams: over SQLite the reads never wait on I/O, and the
 * daily pass over a whole log would otherwise hold the loop from its first read to its last.
 */
import type { EventStore, RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { chainedFieldsOf, chainHash, GENESIS_HASH, matchesStored } from '../../platform/event-store/chain.js';
import { nextTurn } from '../../platform/next-turn.js';
import { CHECKS_SUMMARIZED, checkSummariesStream } from '../../checks/domain/check-summary.js';
import { verifyStreamInSlices, type BrokenStream, type PrunedRange, type StoredEvent } from '../domain/verify-stream.js';

export interface VerificationReport {
  intact: boolean;
  streams_checked: number;
  events_checked: number;
  broken: BrokenStream[];
  /** What retention removed from the streams checked, each stream's ranges taken together. */
  pruned: PrunedStream[];
}

export interface PrunedStream {
  stream: string;
  from_revision: number;
  through_revision: number;
  /** Revisions removed (the ranges need not be contiguous). */
  events: number;
  /** The retention summaries that cover them. */
  summaries: number;
}

export interface VerifyScope {
  /** Only the streams with an event whose data carries this team_id. */
  teamId?: number;
  /** Only this stream. */
  stream?: string;
}

const PAGE = 1000;

/** Thrown when `shouldStop` turned true before every stream was walked. */
export class VerificationStopped extends Error {}

export interface VerificationProgress {
  streams_checked: number;
  /** The streams to walk: null until the log was read for them (a team's, or every stream). */
  streams: number | null;
  events_checked: number;
  /** A whole log's pass: the log position read up to, and the log's head when it began (null otherwise). */
  position: number | null;
  head: number | null;
}

export interface VerifyOptions {
  shouldStop?: () => boolean;
  /** Called at the start, after each page of a whole log's pass, once the streams to walk are known, then after each stream. */
  onProgress?: (progress: VerificationProgress) => void;
}

export async function verifyHistory(store: EventStore, scope: VerifyScope = {}, options: VerifyOptions = {}): Promise<VerificationReport> {
  if (scope.stream === undefined && scope.teamId === undefined) return verifyWholeLog(store, options);
  // Finding a team's streams reads the whole log first: say the walk began.
  if (scope.stream === undefined) options.onProgress?.({ streams_checked: 0, streams: null, events_checked: 0, position: null, head: null });
  const streams = scope.stream !== undefined ? [scope.stream] : await teamStreams(store, scope.teamId!);
  const report = emptyReport();
  const progress = () => options.onProgress?.({ streams_checked: report.streams_checked, streams: streams.length, events_checked: report.events_checked, position: null, head: null });
  progress();
  for (const stream of streams) {
    if (options.shouldStop?.()) throw new VerificationStopped('verification stopped before its end');
    if (report.streams_checked > 0) await nextTurn();
    await verifyOne(store, stream, await prunedRanges(store, stream), report);
    progress();
  }
  report.intact = report.broken.length === 0;
  return report;
}

function emptyReport(): VerificationReport {
  return { intact: true, streams_checked: 0, events_checked: 0, broken: [], pruned: [] };
}

/** One stream read whole and verified (verify-stream.ts), a turn of the loop between two slices, into the report. */
async function verifyOne(store: EventStore, stream: string, pruned: PrunedRange[], report: VerificationReport): Promise<void> {
  const steps = verifyStreamInSlices(stream, await readWhole(store, stream, storedEvent), pruned);
  let step = steps.next();
  while (!step.done) {
    await nextTurn();
    step = steps.next();
  }
  const result = step.value;
  if (pruned.length > 0) {
    report.pruned.push({
      stream,
      from_revision: Math.min(...pruned.map((range) => range.from_revision)),
      through_revision: Math.max(...pruned.map((range) => range.through_revision)),
      events: pruned.reduce((sum, range) => sum + range.through_revision - range.from_revision + 1, 0),
      summaries: pruned.length,
    });
  }
  report.streams_checked += 1;
  report.events_checked += result.events_checked;
  if (result.broken) report.broken.push(result.broken);
}

/**
 * A stream followed through a whole log's pass while each of its events links as an append
 * writes it: revisions from 0 without a gap, each storing its hash (whole or prefix) and no
 * `prev_hash`. `next` is the next revision (the events walked), `prev` the full hash to link to.
 */
interface Walk {
  next: number;
  prev: string;
}

/**
 * Every stream in one pass over the log in order (the log read once, instead of once to list the
 * streams and once more stream by stream: half the reads, which are most of a pass's cost,
 * docs/benchmarks.md). A stream whose events all link as an append writes them is intact, exactly
 * as verifyStream would judge it. Any other stream (an unchained, anchored, restarted or pruned
 * one, or one that does not verify) leaves the walk at its first such event and is read again and
 * judged on its own by verifyStream, as a scoped verification does, so the report is the same.
 * Streams are reported in order of first appearance.
 */
async function verifyWholeLog(store: EventStore, options: VerifyOptions): Promise<VerificationReport> {
  const head = await store.headPosition();
  /** null: the stream left the walk; it is verified on its own after the pass. */
  const walks = new Map<string, Walk | null>();
  let walked = 0;
  const progress = (position: number | null, streams: number | null, report: VerificationReport | null) =>
    options.onProgress?.({ streams_checked: report?.streams_checked ?? 0, streams, events_checked: report?.events_checked ?? walked, position, head });
  progress(null, null, null);
  for (let after: number | null = null; ; ) {
    if (options.shouldStop?.()) throw new VerificationStopped('verification stopped before its end');
    const page = await store.readAll({ after, maxCount: PAGE });
    for (const event of page) {
      const walk = walks.get(event.streamId);
      if (walk === null) continue;
      const stored = event.metadata.hash;
      if (event.revision !== (walk?.next ?? 0) || stored === undefined || event.metadata.prev_hash !== undefined) {
        walks.set(event.streamId, null);
        continue;
      }
      const computed = chainHash(walk?.prev ?? GENESIS_HASH, chainedFieldsOf(event));
      if (!matchesStored(computed, stored)) {
        walks.set(event.streamId, null);
        continue;
      }
      if (walk === undefined) walks.set(event.streamId, { next: 1, prev: computed });
      else {
        walk.next += 1;
        walk.prev = computed;
      }
      walked++;
    }
    if (page.length > 0) progress(page[page.length - 1].position, null, null);
    if (page.length < PAGE) break;
    after = page[page.length - 1].position;
    await nextTurn();
  }

  const report = emptyReport();
  progress(head, walks.size, report);
  for (const [stream, walk] of walks) {
    if (options.shouldStop?.()) throw new VerificationStopped('verification stopped before its end');
    if (report.streams_checked > 0) await nextTurn();
    const pruned = await prunedRanges(store, stream);
    if (walk !== null && pruned.length === 0) {
      report.streams_checked += 1;
      report.events_checked += walk.next;
    } else {
      await verifyOne(store, stream, pruned, report);
    }
    progress(head, walks.size, report);
  }
  report.intact = report.broken.length === 0;
  return report;
}

/**
 * The streams of one team (those with an event whose data carries its team_id), in order of
 * first appearance in the log. A stream is the team's from the first such event on, so the rest
 * of the log is read without its events (`streams: {except}`: over SQLite they are not even
 * decoded); a stream's first event is read before it is known, which keeps the order.
 */
export async function teamStreams(store: EventStore, teamId: number): Promise<string[]> {
  const seen = new Set<string>();
  const ofTeam = new Set<string>();
  for (let after: number | null = null; ; ) {
    const page = await store.readAll({ after, maxCount: PAGE, streams: { except: ofTeam } });
    for (const event of page) {
      seen.add(event.streamId);
      if (teamOf(event) === teamId) ofTeam.add(event.streamId);
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1].position;
    await nextTurn();
  }
  return [...seen].filter((stream) => ofTeam.has(stream));
}

function teamOf(event: RecordedEvent): number | undefined {
  const data = event.data as { team_id?: unknown } | null;
  return data && typeof data === 'object' && typeof data.team_id === 'number' ? data.team_id : undefined;
}

/** A stream's events, each taken through `take` as its page is read (so a page's are copied in one task, not the stream's). */
async function readWhole<T>(store: EventStore, stream: string, take: (event: RecordedEvent) => T): Promise<T[]> {
  const all: T[] = [];
  for (let from = 0; ; ) {
    const page = await store.readStream(stream, { fromRevision: from, maxCount: PAGE });
    for (const event of page) all.push(take(event));
    if (page.length < PAGE) return all;
    from = page[page.length - 1].revision + 1;
    await nextTurn();
  }
}

/** What retention removed from a checks stream, from its summaries (src/monitoring/domain/check-summary.ts). */
export async function prunedRanges(store: EventStore, stream: string): Promise<PrunedRange[]> {
  const endpoint = /^checks-(\d+)$/.exec(stream);
  if (!endpoint) return [];
  const summaries = await readWhole(store, checkSummariesStream(Number(endpoint[1])), (event) => event);
  return summaries
    .filter((event) => event.type === CHECKS_SUMMARIZED)
    .map((event) => {
      const data = event.data as { from_revision: number; through_revision: number; through_hash?: string };
      return { from_revision: data.from_revision, through_revision: data.through_revision, through_hash: data.through_hash ?? null };
    });
}

/** Members added to the fields' literal, not spread into a new one (a spread took V8's slow path: a third of a stream's judging). */
function storedEvent(event: RecordedEvent): StoredEvent {
  const stored: StoredEvent = chainedFieldsOf(event);
  stored.hash = event.metadata.hash;
  stored.prev_hash = event.metadata.prev_hash;
  return stored;
}
