/**
 * The hidden values an export line shows as withheld (docs/audit.md, "What an export leaves
 * out"). An endpoint's stream records its whole configuration, and the API hides part of it from
 * every answer (docs/api.md: the URL's query and user-info, header values, the request payload,
 * the expected body; `publicConfiguration` in src/monitoring/domain/endpoint.ts). Its stream
 * cannot be left out of a team's export as a channel's is, since its events are the history an
 * auditor needs: so the line of an event holding such values shows `WITHHELD` in their place and
 * names them (`withheld`, JSON Pointers into `data`), keeping the event's stored hash. Its
 * content hash then cannot be recomputed from the line: the signed manifest lists the line
 * instead (`WithheldLine`), and `verify-export` checks its place in the chain.
 *
 * The verification token is not withheld: the API answers it (the operator serves it at the
 * verification URL).
 */
import { hash } from 'node:crypto';
import { canonicalJson } from '../../platform/canonical-json.js';
import { ENDPOINT_RECONFIGURED, ENDPOINT_REGISTERED } from '../../monitoring/domain/events.js';

/** What a withheld value shows in its place. */
export const WITHHELD = '[withheld]';

/** The member of each event type's data that holds (part of) an endpoint configuration. */
const CONFIGURATION_OF: Record<string, string> = {
  [ENDPOINT_REGISTERED]: 'configuration',
  [ENDPOINT_RECONFIGURED]: 'changes',
};

/** Configuration members hidden whole when set (not null). */
const HIDDEN_TEXTS = ['request_payload', 'expected_body'] as const;

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
  const config = data[member];
  const shown: Record<string, unknown> = { ...config };
  const withheld: string[] = [];
  const at = (...path: string[]) => `/${[member, ...path].map(pointerToken).join('/')}`;

  if (typeof config.url === 'string') {
    const url = shownUrl(config.url);
    if (url !== config.url) {
      shown.url = url;
      withheld.push(at('url'));
    }
  }
  if (isObject(config.headers) && Object.keys(config.headers).length > 0) {
    shown.headers = Object.fromEntries(Object.keys(config.headers).map((name) => [name, WITHHELD]));
    withheld.push(...Object.keys(config.headers).map((name) => at('headers', name)));
  }
  for (const field of HIDDEN_TEXTS) {
    if (config[field] !== undefined && config[field] !== null) {
      shown[field] = WITHHELD;
      withheld.push(at(field));
    }
  }
  return withheld.length === 0 ? null : { data: { ...data, [member]: shown }, withheld };
}

/**
 * The URL as an export shows it: scheme, host and path as the API shows them, user-info, query
 * and fragment as `WITHHELD`. A URL that does not parse is withheld whole.
 */
function shownUrl(configured: string): string {
  let url: URL;
  try {
    url = new URL(configured);
  } catch {
    return WITHHELD;
  }
  const userInfo = url.username !== '' || url.password !== '' ? `${WITHHELD}@` : '';
  const query = url.search !== '' ? `?${WITHHELD}` : '';
  const fragment = url.hash !== '' ? `#${WITHHELD}` : '';
  return userInfo === '' && query === '' && fragment === '' ? configured : `${url.protocol}//${userInfo}${url.host}${url.pathname}${query}${fragment}`;
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
