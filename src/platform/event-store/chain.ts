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
 */
import { hash } from 'node:crypto';
import type { RecordedEvent } from './event-store.port.js';
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
 * integer, written directly.
 */
export function canonicalEvent(event: ChainedFields): string {
  return (
    `{"actor":${quoted(event.actor)},"data":${canonicalJson(event.data ?? null)},"occurred_at":${quoted(event.occurred_at)},` +
    `"request_id":${quoted(event.request_id)},"revision":${canonicalJson(event.revision)},"stream":${quoted(event.stream)},"type":${quoted(event.type)}}`
  );
}

/** A string field as RFC 8785 writes it (as JSON.stringify does); absent or null as null. */
function quoted(value: string | null | undefined): string {
  return typeof value === 'string' ? JSON.stringify(value) : 'null';
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
