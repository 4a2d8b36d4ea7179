/**
 * The audit export (docs/audit.md, src/audit/domain/export-format.ts): a team's streams, or one
 * stream, as NDJSON in log order with each event's chain link and hash, then the manifest,
 * signed when a signing key is configured. Produced as it is read, a page of the log at a time,
 * so an export of any size holds only one page and a hash per stream in memory. Lines carry full
 * hashes: an event that stores a prefix has its hash recomputed from the line before it.
 */
import type { EventStore, RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { chainedFieldsOf, chainHash, fullHashAt, GENESIS_HASH, isWholeHash, matchesStored } from '../../platform/event-store/chain.js';
import { eventLine, manifestLine, signedManifestBytes, withheldFromExport, type ExportLine, type Manifest, type ManifestStream } from '../domain/export-format.js';
import type { AuditSigner } from '../domain/signing.js';
import { shownHash, withholdHiddenValues, type WithheldLine } from '../domain/withheld-values.js';
import { prunedRanges, teamStreams } from './verify.js';

export interface ExportScope {
  /** Every stream holding an event whose data carries this team_id. */
  teamId?: number;
  /** This stream alone. */
  stream?: string;
}

export interface ExportProgress {
  events: number;
  /** The log position read up to, and the log's head when the export began. */
  position: number | null;
  head: number | null;
}

export interface ExportOptions {
  /** Events recorded at or after `from` and before `to` (RFC 3339). */
  from?: string | null;
  to?: string | null;
  signer?: AuditSigner | null;
  /** Called after each page of the log. */
  onProgress?: (progress: ExportProgress) => void;
  now?: () => Date;
}

const PAGE = 1000;

interface Exported extends ManifestStream {
  /** The hash of the stream's last exported line. */
  head_hash: string | null;
}

/** An export asked for a stream whose events hold secrets (`withheldFromExport`). */
export class StreamWithheld extends Error {
  constructor(readonly stream: string) {
    super(`Stream ${stream} holds a notification channel's secrets: it is never exported.`);
  }
}

/** Chunks of NDJSON (whole lines), the manifest line last. */
export async function* exportHistory(store: EventStore, scope: ExportScope, options: ExportOptions = {}): AsyncGenerator<string> {
  if ((scope.teamId === undefined) === (scope.stream === undefined)) throw new Error('exportHistory: a team or a stream, exactly one');
  if (scope.stream !== undefined && withheldFromExport(scope.stream)) throw new StreamWithheld(scope.stream);
  const ofTeam = scope.teamId !== undefined ? await teamStreams(store, scope.teamId) : [];
  const withheld = ofTeam.filter(withheldFromExport);
  const from = options.from ? Date.parse(options.from) : -Infinity;
  const to = options.to ? Date.parse(options.to) : Infinity;
  const head = await store.headPosition();
  const streams = new Map<string, Exported>();
  // One entry per line with withheld values (endpoint configuration events: few per endpoint).
  const withheldLines: WithheldLine[] = [];
  let events = 0;
  const inRange = (event: RecordedEvent) => {
    const at = Date.parse(event.recordedAt);
    return at >= from && at < to;
  };

  for await (const page of scope.stream !== undefined ? streamPages(store, scope.stream) : teamPages(store, ofTeam.filter((stream) => !withheldFromExport(stream)))) {
    let chunk = '';
    for (const event of page) {
      if (!inRange(event)) continue;
      const stored = event.metadata.hash ?? null;
      const before = streams.get(event.streamId);
      let prev: string | null;
      if (stored === null) prev = null;
      else if (event.metadata.prev_hash !== undefined) prev = event.metadata.prev_hash;
      else if (before && event.revision === before.last_revision + 1) prev = before.head_hash;
      else if (event.revision === 0) prev = GENESIS_HASH;
      else prev = await linkBefore(store, event.streamId, event.revision);
      const hash = fullHash(stored, prev, event);
      if (!before) streams.set(event.streamId, { first_revision: event.revision, last_revision: event.revision, head_hash: hash });
      else {
        if (event.revision > before.last_revision + 1) (before.gaps ??= []).push([before.last_revision + 1, event.revision - 1]);
        before.last_revision = event.revision;
        before.head_hash = hash;
      }
      const line: ExportLine = {
        stream: event.streamId,
        revision: event.revision,
        position: event.position,
        type: event.type,
        occurred_at: event.metadata.occurred_at,
        recorded_at: event.recordedAt,
        actor: event.metadata.actor ?? null,
        request_id: event.metadata.request_id ?? null,
        data: event.data,
        prev_hash: prev,
        hash,
      };
      // The hash was computed from the stored data above; the line shows what may leave the service.
      const shown = withholdHiddenValues(event.type, event.data);
      if (shown !== null) {
        line.data = shown.data;
        line.withheld = shown.withheld;
        withheldLines.push({ stream: line.stream, revision: line.revision, prev_hash: prev, hash, shown_hash: shownHash({ ...line, withheld: shown.withheld }) });
      }
      chunk += eventLine(line);
      events++;
    }
    if (chunk !== '') yield chunk;
    options.onProgress?.({ events, position: page.length > 0 ? page[page.length - 1].position : null, head });
  }

  const manifest: Manifest = {
    team_id: scope.teamId ?? null,
    stream: scope.stream ?? null,
    from: options.from ?? null,
    to: options.to ?? null,
    events,
    streams: Object.fromEntries(streams),
    ...(withheld.length > 0 ? { withheld_streams: withheld } : {}),
    ...(withheldLines.length > 0 ? { withheld_lines: withheldLines } : {}),
    generated_at: (options.now?.() ?? new Date()).toISOString(),
    key_id: options.signer?.keyId ?? null,
    signature: null,
  };
  if (options.signer) manifest.signature = options.signer.sign(signedManifestBytes(manifest));
  yield manifestLine(manifest);
}

async function* streamPages(store: EventStore, stream: string): AsyncGenerator<RecordedEvent[]> {
  for (let from = 0; ; ) {
    const page = await store.readStream(stream, { fromRevision: from, maxCount: PAGE });
    yield page;
    if (page.length < PAGE) return;
    from = page[page.length - 1].revision + 1;
  }
}

/**
 * The log in order, `exported` streams only (a team's, found by `teamStreams`): a read of those
 * streams alone, so over SQLite no other team's event is read into JavaScript or decoded.
 */
async function* teamPages(store: EventStore, exported: string[]): AsyncGenerator<RecordedEvent[]> {
  const streams = { only: new Set(exported) };
  for (let after: number | null = null; ; ) {
    const page = await store.readAll({ after, maxCount: PAGE, streams });
    yield page;
    if (page.length < PAGE) return;
    after = page[page.length - 1].position;
  }
}

/**
 * The hash a line carries: the stored one when whole, else the hash recomputed from the line's
 * link when it agrees with the stored prefix. Otherwise the stored prefix as it is, so that
 * `verify-export` fails at this line as it fails at an altered whole hash (the export never
 * vouches for content the stored chain does not).
 */
function fullHash(stored: string | null, prev: string | null, event: RecordedEvent): string | null {
  if (stored === null || isWholeHash(stored) || prev === null) return stored;
  const computed = chainHash(prev, chainedFieldsOf(event));
  return matchesStored(computed, stored) ? computed : stored;
}

/**
 * The hash the event at `revision` links to when the line before it is not in the export: the
 * stored previous event's full hash (recomputed from its anchor when it stores a prefix), or,
 * when retention removed it, its retention summary's `through_hash`. null when neither is known.
 */
async function linkBefore(store: EventStore, stream: string, revision: number): Promise<string | null> {
  const [previous] = await store.readStream(stream, { fromRevision: revision - 1, direction: 'backwards', maxCount: 1 });
  if (previous?.revision === revision - 1) return previous.metadata.hash === undefined ? null : fullHashAt(store, stream, revision - 1);
  const pruned = (await prunedRanges(store, stream)).find((range) => range.through_revision === revision - 1);
  return pruned?.through_hash ?? null;
}
