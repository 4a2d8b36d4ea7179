/**
 * The audit export (docs/audit.md): NDJSON, one line per event in log order, then one manifest
 * line. Each event line carries the chain link it verifies with (`prev_hash`) and its `hash`, so
 * every line checks on its own and against the line before it of the same stream. The manifest
 * names each stream's first and last revision and head hash; its Ed25519 signature covers its
 * RFC 8785 form without `signature`, and through the head hashes every line of the export.
 */
import { canonicalJson } from '../../platform/canonical-json.js';
import { isChannelStream } from '../../notifications/domain/channel.js';
import type { WithheldLine } from './withheld-values.js';

/**
 * Streams an export never carries: their events hold secrets (a notification channel's signing
 * secrets, routing keys and webhook URLs), which no export may hand an auditor. Each stream has
 * its own chain, so leaving one out leaves every other line checkable; a team's manifest names
 * the ones it left out (`withheld_streams`).
 */
export function withheldFromExport(stream: string): boolean {
  return isChannelStream(stream);
}

export interface ExportLine {
  stream: string;
  revision: number;
  position: number;
  type: string;
  occurred_at: string;
  recorded_at: string;
  actor: string | null;
  request_id: string | null;
  data: unknown;
  /**
   * Present when `data` shows hidden values as withheld (withheld-values.ts): JSON Pointers into
   * `data` of the values replaced. `hash` is then the stored event's, which the line's content
   * no longer gives; the manifest lists the line (`withheld_lines`).
   */
  withheld?: string[];
  /**
   * The hash this event links to: the previous revision's (or, at a stream's first chained
   * event after unchained ones, the anchor). null when unknown: the event is unchained (written
   * before chaining began) or the event before it left the log before its hash was kept.
   */
  prev_hash: string | null;
  /** null for events written before chaining began (covered by their stream's anchor). */
  hash: string | null;
}

export interface ManifestStream {
  first_revision: number;
  last_revision: number;
  /** The hash of the stream's last line (null when that event is unchained). */
  head_hash: string | null;
  /** Revision ranges [from, through] absent between the first and last revision (removed by check retention). */
  gaps?: Array<[number, number]>;
}

export interface Manifest {
  /** The team whose streams were exported; null for an export of one stream. */
  team_id: number | null;
  /** The stream exported alone (`--stream`, `--incident`); null for a team's export. */
  stream: string | null;
  /** Events recorded at or after `from` and before `to` (RFC 3339), null when unbounded. */
  from: string | null;
  to: string | null;
  events: number;
  streams: Record<string, ManifestStream>;
  /** The team's streams left out because their events hold secrets (`withheldFromExport`); absent when none. */
  withheld_streams?: string[];
  /** The lines whose hidden values are withheld, in export order; absent when none. */
  withheld_lines?: WithheldLine[];
  generated_at: string;
  /** Hex SHA-256 of the signing public key's DER; null when unsigned. */
  key_id: string | null;
  /** Base64 Ed25519 signature of `signedManifestBytes(manifest)`; null when unsigned. */
  signature: string | null;
}

/** Member order of an event line: the order the issue lists them in. */
export function eventLine(line: ExportLine): string {
  return `${JSON.stringify({
    stream: line.stream,
    revision: line.revision,
    position: line.position,
    type: line.type,
    occurred_at: line.occurred_at,
    recorded_at: line.recorded_at,
    actor: line.actor,
    request_id: line.request_id,
    data: line.data,
    ...(line.withheld !== undefined ? { withheld: line.withheld } : {}),
    prev_hash: line.prev_hash,
    hash: line.hash,
  })}\n`;
}

/**
 * The manifest line, `{"manifest":<the manifest in RFC 8785 form>}`: with the signature removed
 * (`"signature":"…",`) the inner object is byte for byte what was signed, so `sed` and `openssl`
 * can check it (docs/audit.md).
 */
export function manifestLine(manifest: Manifest): string {
  return `{"manifest":${canonicalJson(manifest)}}\n`;
}

/** What the signature covers: the manifest's RFC 8785 form without `signature`, UTF-8. */
export function signedManifestBytes(manifest: Manifest): Buffer {
  const { signature: _signature, ...signed } = manifest;
  return Buffer.from(canonicalJson(signed), 'utf8');
}
