/**
 * The hidden values an export line shows as withheld (docs/audit.md, "What an export leaves
 * out"). An endpoint's stream records its whole configuration, and the API hides part of it from
 * every answer (docs/api.md; monitoring's domain owns which part: `HIDDEN_CONFIGURATION_MEMBERS`
 * and `maskHiddenValues` in src/monitoring/domain/endpoint.ts). Its stream cannot be left out of
 * a team's export as a channel's is, since its events are the history an auditor needs: so the
 * line of an event holding such values shows `WITHHELD` in their place and names them
 * (`withheld`, JSON Pointers into `data`), keeping the event's stored hash. Its content hash then
 * cannot be recomputed from the line: the signed manifest lists the line instead
 * (`WithheldLine`), and `verify-export` checks its place in the chain.
 *
 * The verification token is not withheld: the API answers it (the operator serves it at the
 * verification URL).
 */
import { hash } from 'node:crypto';
import { canonicalJson } from '../../platform/canonical-json.js';
import { maskHiddenValues } from '../../monitoring/domain/endpoint.js';
import type { EndpointConfiguration } from '../../monitoring/domain/endpoint-configuration.js';
import { ENDPOINT_RECONFIGURED, ENDPOINT_REGISTERED } from '../../monitoring/domain/events.js';

/** What a withheld value shows in its place. */
export const WITHHELD = '[withheld]';

/** The member of each event type's data that holds (part of) an endpoint configuration. */
const CONFIGURATION_OF: Record<string, string> = {
  [ENDPOINT_REGISTERED]: 'configuration',
  [ENDPOINT_RECONFIGURED]: 'changes',
};

export interface ShownData {
  /** The event's data with each hidden value replaced by `WITHHELD`. */
  data: unknown;
  /** JSON Pointers (RFC 6901) into `data` of the values replaced, in the order met. */
  withheld: string[];
}

/**
 * The data an export line shows for an event, or null when the event holds no hidden value (its
 * line carries its data as stored, and is checked against its hash).
 */
export function withholdHiddenValues(type: string, data: unknown): ShownData | null {
  const member = CONFIGURATION_OF[type];
  if (member === undefined || !isObject(data) || !isObject(data[member])) return null;
  const masked = maskHiddenValues(data[member] as Partial<EndpointConfiguration>, WITHHELD);
  if (masked === null) return null;
  return { data: { ...data, [member]: masked.configuration }, withheld: masked.masked.map((path) => `/${[member, ...path].map(pointerToken).join('/')}`) };
}

/** RFC 6901: `~` as `~0`, `/` as `~1`. */
function pointerToken(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A withheld line as the manifest lists it, so that the signature covers it. */
export interface WithheldLine {
  stream: string;
  revision: number;
  /** The line's `prev_hash` and `hash`: its place in the stream's chain. */
  prev_hash: string | null;
  hash: string | null;
  /** `shownHash` of the line: what it shows, covered by the signature as the content hash cannot be. */
  shown_hash: string;
}

/** What a withheld line shows, as the manifest pins it: the fields its content hash would cover, with `withheld`. */
export interface ShownLine {
  stream: string;
  revision: number;
  type: string;
  occurred_at: string;
  actor: string | null;
  request_id: string | null;
  data: unknown;
  withheld: string[];
}

/** Lowercase hex SHA-256 of the RFC 8785 form of what the line shows. */
export function shownHash(line: ShownLine): string {
  const { stream, revision, type, occurred_at, actor, request_id, data, withheld } = line;
  return hash('sha256', canonicalJson({ stream, revision, type, occurred_at, actor, request_id, data, withheld }), 'hex');
}
