/**
 * Offline check of an audit export (export-format.ts, docs/audit.md), line by line, knowing its
 * manifest (its last line) first. Every event line must give its own hash, link to the line
 * before it of the same stream, and the streams must start, end and skip revisions exactly as
 * the manifest says; then the manifest's signature must hold for the given public key. The
 * first line that fails is named; nothing after it is judged.
 */
import type { KeyObject } from 'node:crypto';
import { chainHash, chainOf, GENESIS_HASH, isChainHash, type ChainedFields } from '../../platform/event-store/chain.js';
import type { ExportLine, Manifest } from './export-format.js';
import { signedManifestBytes } from './export-format.js';
import { keyIdOf, signatureHolds } from './signing.js';
import { shownHash, type WithheldLine } from './withheld-values.js';

export type ExportVerification =
  | {
      ok: true;
      events: number;
      streams: number;
      /** The key that signed the manifest; null when the export is unsigned. */
      key_id: string | null;
      /** Lines whose link is unknown (the event before them left the log before its hash was kept): their content is not checked. */
      unlinked: number;
      /** Lines showing hidden values as withheld: their place in the chain is checked, and what they show against the signed manifest, not their content hash. */
      withheld: number;
    }
  | { ok: false; line: number; problem: string };

interface StreamState {
  revision: number;
  hash: string | null;
  line: number;
  /** The chain of this stream's unchained lines, while they run from revision 0 without a gap. */
  unchained: ChainedFields[] | null;
}

class Refused extends Error {
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(problem);
  }
}

/** The manifest of a manifest line, or null when the line is not one. */
export function parseManifestLine(text: string): Manifest | null {
  try {
    const parsed = JSON.parse(text) as { manifest?: unknown };
    const manifest = parsed?.manifest as Manifest | undefined;
    return manifest && typeof manifest === 'object' && typeof manifest.streams === 'object' && manifest.streams !== null ? manifest : null;
  } catch {
    return null;
  }
}

/**
 * `lines`: the export's lines in order (empty lines skipped). `lastLine`: the file's last
 * non-empty line and its number, read first. `publicKey`: null checks the chain only.
 */
export async function verifyExport(lines: AsyncIterable<string> | Iterable<string>, lastLine: { text: string; number: number } | null, publicKey: KeyObject | null): Promise<ExportVerification> {
  try {
    return await check(lines, lastLine, publicKey);
  } catch (error) {
    if (error instanceof Refused) return { ok: false, line: error.line, problem: error.problem };
    throw error;
  }
}

async function check(lines: AsyncIterable<string> | Iterable<string>, lastLine: { text: string; number: number } | null, publicKey: KeyObject | null): Promise<ExportVerification> {
  const manifest = lastLine ? parseManifestLine(lastLine.text) : null;
  if (!lastLine || !manifest) throw new Refused(lastLine?.number ?? 1, 'the export does not end with a manifest line (truncated?)');
  const manifestAt = lastLine.number;
  const streams = new Map<string, StreamState>();
  let number = 0;
  let events = 0;
  let unlinked = 0;
  let position = -Infinity;
  const withheldLines = listedWithheldLines(manifest, manifestAt);
  for await (const text of lines) {
    number++;
    if (text.trim() === '') continue;
    if (number === manifestAt) break;
    const line = eventLineOf(text, number);
    events++;
    if (line.position <= position) throw new Refused(number, `out of log order (position ${line.position} after ${position})`);
    position = line.position;
    const declared = manifest.streams[line.stream];
    if (!declared) throw new Refused(number, `stream ${line.stream} is not in the manifest`);
    const fields: ChainedFields = { stream: line.stream, revision: line.revision, type: line.type, data: line.data, occurred_at: line.occurred_at, actor: line.actor, request_id: line.request_id };
    if (line.withheld !== undefined) checkWithheld(line, line.withheld, withheldLines, number);
    else if (line.hash !== null) {
      if (line.prev_hash === null) unlinked++;
      else if (chainHash(line.prev_hash, fields) !== line.hash) throw new Refused(number, `${where(line)}: its hash does not match its content (altered)`);
    }
    const before = streams.get(line.stream);
    if (!before) {
      if (line.revision !== declared.first_revision) {
        throw new Refused(number, `${line.stream} starts at revision ${line.revision}, the manifest says ${declared.first_revision} (a line is missing)`);
      }
      if (line.revision === 0 && line.hash !== null && line.prev_hash !== GENESIS_HASH) throw new Refused(number, `${where(line)}: revision 0 must link to '' (prev_hash)`);
    } else {
      const seen = `${line.stream} revision ${before.revision} (line ${before.line})`;
      if (line.revision <= before.revision) throw new Refused(number, `${where(line)} comes after ${seen} (reordered or repeated)`);
      if (line.revision > before.revision + 1) {
        const gap: [number, number] = [before.revision + 1, line.revision - 1];
        if (!(declared.gaps ?? []).some(([from, through]) => from === gap[0] && through === gap[1])) {
          throw new Refused(number, `${line.stream} revisions ${gap[0]}-${gap[1]} are missing after ${seen}`);
        }
      } else if (before.hash !== null) {
        if (line.prev_hash !== before.hash) throw new Refused(number, `${where(line)} does not link to ${seen}`);
      } else if (line.hash !== null && before.unchained !== null && line.prev_hash !== chainOf(before.unchained)) {
        throw new Refused(number, `${where(line)}: its anchor does not match the unchained lines before it (one of them was altered)`);
      }
    }
    const continuous = before ? line.revision === before.revision + 1 : line.revision === 0;
    streams.set(line.stream, {
      revision: line.revision,
      hash: line.hash,
      line: number,
      // A withheld line's content is not what its chain covers: the unchained lines' anchor cannot be recomputed past it.
      unchained: line.hash === null && line.withheld === undefined && continuous && (before ? before.unchained : []) !== null ? [...(before?.unchained ?? []), fields] : null,
    });
  }
  for (const [name, declared] of Object.entries(manifest.streams)) {
    const last = streams.get(name);
    if (!last) throw new Refused(manifestAt, `the manifest lists ${name}, which has no line (lines are missing)`);
    if (last.revision !== declared.last_revision || last.hash !== declared.head_hash) {
      throw new Refused(manifestAt, `${name} ends at revision ${last.revision} (line ${last.line}), the manifest says revision ${declared.last_revision} with head ${declared.head_hash} (lines are missing or altered)`);
    }
  }
  for (const [key, listed] of withheldLines) {
    if (!listed.seen) throw new Refused(manifestAt, `the manifest lists ${key} as withheld, which has no withheld line (lines are missing or altered)`);
  }
  if (manifest.events !== events) throw new Refused(manifestAt, `the manifest counts ${manifest.events} events, the export holds ${events}`);
  if (publicKey) {
    if (manifest.signature === null || manifest.key_id === null) throw new Refused(manifestAt, 'the manifest is not signed');
    const given = keyIdOf(publicKey);
    if (manifest.key_id !== given) throw new Refused(manifestAt, `signed by key ${manifest.key_id}, not by the given public key (${given})`);
    if (!signatureHolds(publicKey, signedManifestBytes(manifest), manifest.signature)) throw new Refused(manifestAt, 'the signature does not hold: the manifest was changed or signed by another key');
  }
  return { ok: true, events, streams: streams.size, key_id: publicKey ? manifest.key_id : null, unlinked, withheld: withheldLines.size };
}

const withheldKey = (line: { stream: string; revision: number }) => `${line.stream} revision ${line.revision}`;

/** The manifest's `withheld_lines` by stream and revision, each to be met by exactly one line. */
function listedWithheldLines(manifest: Manifest, manifestAt: number): Map<string, { entry: WithheldLine; seen: boolean }> {
  const listed = new Map<string, { entry: WithheldLine; seen: boolean }>();
  const entries: unknown = manifest.withheld_lines ?? [];
  if (!Array.isArray(entries)) throw new Refused(manifestAt, 'the manifest\'s withheld_lines is not a list');
  for (const entry of entries as WithheldLine[]) {
    if (typeof entry?.stream !== 'string' || !Number.isInteger(entry.revision) || typeof entry.shown_hash !== 'string') throw new Refused(manifestAt, 'the manifest\'s withheld_lines holds an entry that is not one');
    if (listed.has(withheldKey(entry))) throw new Refused(manifestAt, `the manifest lists ${withheldKey(entry)} as withheld twice`);
    listed.set(withheldKey(entry), { entry, seen: false });
  }
  return listed;
}

/**
 * A line showing withheld values: its content hash cannot be recomputed, so it must be one the
 * signed manifest lists with the same place in the chain (`prev_hash`, `hash`, which the links
 * to the lines around it check) and the same shown content.
 */
function checkWithheld(line: ExportLine, withheld: string[], listed: Map<string, { entry: WithheldLine; seen: boolean }>, number: number): void {
  const found = listed.get(withheldKey(line));
  if (!found) throw new Refused(number, `${where(line)} shows withheld values, but the manifest does not list it as withheld`);
  const { entry } = found;
  if (found.seen || entry.prev_hash !== line.prev_hash || entry.hash !== line.hash || entry.shown_hash !== shownHash({ ...line, withheld })) {
    throw new Refused(number, `${where(line)}: the line differs from the manifest's withheld entry for it (altered)`);
  }
  found.seen = true;
}

function where(line: ExportLine): string {
  return `${line.stream} revision ${line.revision}`;
}

const nullableString = (value: unknown) => value === null || typeof value === 'string';

function eventLineOf(text: string, number: number): ExportLine {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Refused(number, 'not JSON');
  }
  const line = value as ExportLine;
  const valid =
    line !== null &&
    typeof line === 'object' &&
    typeof line.stream === 'string' &&
    Number.isInteger(line.revision) &&
    line.revision >= 0 &&
    typeof line.position === 'number' &&
    typeof line.type === 'string' &&
    typeof line.occurred_at === 'string' &&
    nullableString(line.actor) &&
    nullableString(line.request_id) &&
    'data' in line &&
    (line.prev_hash === null || line.prev_hash === GENESIS_HASH || isChainHash(line.prev_hash)) &&
    (line.hash === null || isChainHash(line.hash)) &&
    (line.withheld === undefined || (Array.isArray(line.withheld) && line.withheld.length > 0 && line.withheld.every((path) => typeof path === 'string')));
  if (!valid && parseManifestLine(text)) throw new Refused(number, 'a manifest line before the last line');
  if (!valid) throw new Refused(number, 'not an event line of an audit export');
  return line;
}
