/**
 * Walks the hash chains of the log (docs/audit.md): every stream, a team's, or one. Reads the
 * events as stored (an event store without upcasters), one stream at a time, with a turn of the
 * event loop between two pages and two streams: over SQLite the reads never wait on I/O, and the
 * daily pass over a whole log would otherwise hold the loop from its first read to its last.
 */
import type { EventStore, RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { chainedFieldsOf } from '../../platform/event-store/chain.js';
import { nextTurn } from '../../platform/next-turn.js';
import { CHECKS_SUMMARIZED, checkSummariesStream } from '../../checks/domain/check-summary.js';
import { verifyStream, type BrokenStream, type PrunedRange, type StoredEvent } from '../domain/verify-stream.js';

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
}

export interface VerifyOptions {
  shouldStop?: () => boolean;
  /** Called at the start, once the streams to walk are known, then after each stream. */
  onProgress?: (progress: VerificationProgress) => void;
}

export async function verifyHistory(store: EventStore, scope: VerifyScope = {}, options: VerifyOptions = {}): Promise<VerificationReport> {
  // Finding a team's streams (or every stream) reads the whole log first: say the walk began.
  if (scope.stream === undefined) options.onProgress?.({ streams_checked: 0, streams: null, events_checked: 0 });
  const streams = scope.stream !== undefined ? [scope.stream] : await streamsOf(store, scope.teamId);
  const report: VerificationReport = { intact: true, streams_checked: 0, events_checked: 0, broken: [], pruned: [] };
  const progress = () => options.onProgress?.({ streams_checked: report.streams_checked, streams: streams.length, events_checked: report.events_checked });
  progress();
  for (const stream of streams) {
    if (options.shouldStop?.()) throw new VerificationStopped('verification stopped before its end');
    if (report.streams_checked > 0) await nextTurn();
    const pruned = await prunedRanges(store, stream);
    const result = verifyStream(stream, (await readWhole(store, stream)).map(storedEvent), pruned);
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
    progress();
  }
  report.intact = report.broken.length === 0;
  return report;
}

/** Every stream of the log in order of first appearance, or those of one team. */
export async function streamsOf(store: EventStore, teamId: number | undefined): Promise<string[]> {
  const seen = new Set<string>();
  const ofTeam = new Set<string>();
  for (let after: number | null = null; ; ) {
    const page = await store.readAll({ after, maxCount: PAGE });
    for (const event of page) {
      seen.add(event.streamId);
      if (teamId !== undefined && teamOf(event) === teamId) ofTeam.add(event.streamId);
    }
    if (page.length < PAGE) break;
    after = page[page.length - 1].position;
    await nextTurn();
  }
  return teamId === undefined ? [...seen] : [...seen].filter((stream) => ofTeam.has(stream));
}

function teamOf(event: RecordedEvent): number | undefined {
  const data = event.data as { team_id?: unknown } | null;
  return data && typeof data === 'object' && typeof data.team_id === 'number' ? data.team_id : undefined;
}

async function readWhole(store: EventStore, stream: string): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (let from = 0; ; ) {
    const page = await store.readStream(stream, { fromRevision: from, maxCount: PAGE });
    all.push(...page);
    if (page.length < PAGE) return all;
    from = page[page.length - 1].revision + 1;
    await nextTurn();
  }
}

/** What retention removed from a checks stream, from its summaries (src/monitoring/domain/check-summary.ts). */
export async function prunedRanges(store: EventStore, stream: string): Promise<PrunedRange[]> {
  const endpoint = /^checks-(\d+)$/.exec(stream);
  if (!endpoint) return [];
  const summaries = await readWhole(store, checkSummariesStream(Number(endpoint[1])));
  return summaries
    .filter((event) => event.type === CHECKS_SUMMARIZED)
    .map((event) => {
      const data = event.data as { from_revision: number; through_revision: number; through_hash?: string };
      return { from_revision: data.from_revision, through_revision: data.through_revision, through_hash: data.through_hash ?? null };
    });
}

function storedEvent(event: RecordedEvent): StoredEvent {
  return { ...chainedFieldsOf(event), hash: event.metadata.hash, prev_hash: event.metadata.prev_hash };
}
