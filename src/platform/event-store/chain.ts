/**
 * The hash chain over each stream of the event log (docs/audit.md).
 *
 *   hash(event) = lowercase hex SHA-256 of the UTF-8 bytes of  prev_hash + canonical(event)
 *
 * where `prev_hash` is the hash of the stream's previous revision ('' for revision 0) and
 * canonical(event) is the RFC 8785 form of
 * `{stream, revision, type, data, occurred_at, actor, request_id}` (data as stored, before any
 * upcasting; actor and request_id null when absent). An event stores only its own `hash`: the
 * previous one is that of the event before it. `prev_hash` is stored only where it cannot be
 * derived: on the first chained event of a stream that had events before chaining began (the
 * anchor, the chain of those earlier events computed the same way from ''), and on an event
 * appended to a stream whose earlier events all left the log.
 *
 * Stored form (docs/decisions.md "The event row's chain hash"): an event stores the first 16 hex
 * digits (8 bytes) of its hash, except an anchor, which stores the whole hash: revision 0, every
 * 64th revision, and an event that stores `prev_hash`. The full hash of any event is recomputed
 * from the newest anchor at or before it (at most 63 events). Files written before store whole
 * hashes on every event; a whole hash is an anchor wherever it is.
 */
import { hash } from 'node:crypto';
import type { EventStore, RecordedEvent } from './event-store.port.js';
import { canonicalJson } from '../canonical-json.js';

/** The prev_hash of a stream's first event. */
export const GENESIS_HASH = '';

export interface ChainedFields {
  stream: string;
  revision: number;
  type: string;
  data: unknown;
  occurred_at: string;
  actor: string | null;
  request_id: string | null;
}

/**
 * canonicalJson of the seven fields, written out in their RFC 8785 order (it runs on every
 * append): only `data` needs the general function; the other fields are strings, null or an
 * integer, written directly. Stream, type, actor and occurred_at repeat from event to event (all
 * the events of one append share most of them), so the text around `data`, `request_id` and
 * `revision` is kept whole for a run of equal values: the form is built from seven pieces, and
 * the fewer the pieces the less the hash spends reading the string (a CPU profile, docs/benchmarks.md).
 */
export function canonicalEvent(event: ChainedFields): string {
  return (
    heads.of(event.actor) +
    canonicalJson(event.data ?? null) +
    middles.of(event.occurred_at) +
    quoted(event.request_id) +
    ',"revision":' +
    integer(event.revision) +
    tails.of(event.stream, event.type)
  );
}

/** A string field as RFC 8785 writes it (as JSON.stringify does); absent or null as null. */
function quoted(value: string | null | undefined): string {
  return typeof value === 'string' ? JSON.stringify(value) : 'null';
}

/** `before` + the quoted value + `after` for the last value met: a run of equal values is written once. */
class Around {
  private last: string | null | undefined = null;
  private text: string;

  constructor(
    private readonly before: string,
    private readonly after: string,
  ) {
    this.text = `${before}null${after}`;
  }

  of(value: string | null | undefined): string {
    if (value !== this.last) {
      this.text = this.before + quoted(value) + this.after;
      this.last = value;
    }
    return this.text;
  }
}

/**
 * The last two members, stream and type, for the last pair met, else for the stream's last type
 * met: single-event appends move from stream to stream (a probed check's, a command's), and
 * writing the text anew took two JSON.stringify calls per append. At most MAX_TAILS streams kept.
 */
class Tail {
  private stream: string | null = null;
  private type: string | null = null;
  private text = '';
  private readonly byStream = new Map<string, { type: string; text: string }>();

  of(stream: string, type: string): string {
    if (stream === this.stream && type === this.type) return this.text;
    let kept = this.byStream.get(stream);
    if (kept === undefined || kept.type !== type) {
      kept = { type, text: `,"stream":${quoted(stream)},"type":${quoted(type)}}` };
      if (this.byStream.size >= MAX_TAILS) this.byStream.clear();
      this.byStream.set(stream, kept);
    }
    this.stream = stream;
    this.type = type;
    return (this.text = kept.text);
  }
}

const MAX_TAILS = 10_000;

const heads = new Around('{"actor":', ',"data":');
const middles = new Around(',"occurred_at":', ',"request_id":');
const tails = new Tail();

/** A revision is an integer: its ECMAScript form is its RFC 8785 form. */
function integer(value: number): string {
  return Number.isSafeInteger(value) ? String(value) : canonicalJson(value);
}

export function chainHash(prevHash: string, event: ChainedFields): string {
  return hash('sha256', prevHash + canonicalEvent(event), 'hex');
}

/** The hash at the end of a run of events chained from `prev` (a stream's anchor: from ''). */
export function chainOf(events: Iterable<ChainedFields>, prev: string = GENESIS_HASH): string {
  for (const event of events) prev = chainHash(prev, event);
  return prev;
}

const HASH = /^[0-9a-f]{64}$/;

export function isChainHash(value: unknown): value is string {
  return typeof value === 'string' && HASH.test(value);
}

/** The fields of a recorded event that its hash covers, as the store gives it back. */
export function chainedFieldsOf(event: RecordedEvent): ChainedFields {
  return {
    stream: event.streamId,
    revision: event.revision,
    type: event.type,
    data: event.data,
    occurred_at: event.metadata.occurred_at,
    actor: event.metadata.actor,
    request_id: event.metadata.request_id,
  };
}

/** Hex digits of the hash a chained event that is not an anchor stores. */
export const PREFIX_LENGTH = 16;
/** Every this many revisions an event stores its whole hash. */
export const ANCHOR_INTERVAL = 64;

/** Whether the event at `revision` stores its whole hash (it also does when it stores prev_hash). */
export function isAnchorRevision(revision: number): boolean {
  return revision % ANCHOR_INTERVAL === 0;
}

/** What an event stores of its full hash. */
export function storedHash(full: string, anchor: boolean): string {
  return anchor ? full : full.slice(0, PREFIX_LENGTH);
}

/** Whether a stored hash is a whole one (an anchor, or any event of a file written before prefixes). */
export function isWholeHash(stored: string): boolean {
  return stored.length === 64;
}

/** Whether a recomputed full hash agrees with what the event stores: a whole hash compares whole, a prefix as a prefix. */
export function matchesStored(computed: string, stored: string): boolean {
  return stored.length === 64 ? computed === stored : stored.length === PREFIX_LENGTH && computed.startsWith(stored);
}

/**
 * The full hash of the stream's event at `revision`: its stored hash when whole, else recomputed
 * from the newest event at or before it that stores a whole hash (read back, at most
 * ANCHOR_INTERVAL events on a stream written by this version). Null when the event is not there,
 * stores no hash, or no whole hash precedes it without a gap (the stream was cut off an anchor).
 * A recomputed hash that disagrees with a stored prefix is still returned: verification, not
 * this, reports where a chain is broken.
 */
export async function fullHashAt(store: EventStore, stream: string, revision: number): Promise<string | null> {
  const back: RecordedEvent[] = [];
  // The first read ends at the newest multiple of ANCHOR_INTERVAL, where the anchor usually is.
  for (let from = revision, count = (revision % ANCHOR_INTERVAL) + 1; from >= 0; count = ANCHOR_INTERVAL) {
    const page = await store.readStream(stream, { fromRevision: from, direction: 'backwards', maxCount: count });
    for (const event of page) {
      const expected = back.length === 0 ? revision : back[back.length - 1].revision - 1;
      const stored = event.metadata.hash;
      if (event.revision !== expected || stored === undefined) return null;
      if (isWholeHash(stored)) return chainOf(back.reverse().map(chainedFieldsOf), stored);
      back.push(event);
    }
    if (page.length < count) return null;
    from = page[page.length - 1].revision - 1;
  }
  return null;
}
