/**
 * `npm run history -- incident <id> [--at <RFC 3339>]`: an incident's history for auditors,
 * read straight from the event store (no views): each event with its time, actor token, request
 * id and what changed, then the state rebuilt from the log (as of `--at` when given).
 * `npm run history -- verify [--team N] [--stream NAME]`: walks the hash chains (docs/audit.md),
 * progress on stderr; exit 0 when intact (saying what retention cut), 1 naming each broken stream's first bad revision (or a scope without events).
 * `npm run history -- export (--team N | --stream NAME | --incident ID) [--from T] [--to T] [--out FILE]`:
 * the signed NDJSON export (docs/audit.md), to stdout or FILE, progress on stderr; a scope with no
 * events at all exits 1 and writes nothing (an empty --from/--to range is exported).
 * `npm run history -- verify-export FILE [--public-key PEM-FILE]`: checks an export offline; exit 0
 * when every line and the signature hold, 1 naming the first bad line.
 * Usage errors exit with 2, an unknown incident with 1; `--help` prints the usage.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Command, InvalidArgumentError } from 'commander';
import { createEventStore } from '../platform/event-store/create-event-store.js';
import { incidentHistory } from '../incidents/application/history.js';
import { verifyHistory } from '../audit/application/verify.js';
import { exportHistory, StreamWithheld } from '../audit/application/export.js';
import { parseManifestLine, verifyExport } from '../audit/domain/verify-export.js';
import { auditPublicKey, auditSigner, SigningKeyError } from '../audit/domain/signing.js';
import { incidentStreamId } from '../incidents/domain/events.js';
import { parseRfc3339 } from '../platform/time/rfc3339.js';
import { cliConfig, withDataDirOptions, type DataDirOptions } from './data-dir.js';
import { cliProgram, runCli, UsageError } from './usage.js';
import { stderrProgress } from './stderr-progress.js';

function formatChange(change: { from?: unknown; to?: unknown }): string {
  return 'from' in change ? `${JSON.stringify(change.from)} -> ${JSON.stringify(change.to)}` : JSON.stringify(change.to);
}

function incidentId(text: string): number {
  if (!/^[1-9]\d*$/.test(text)) throw new InvalidArgumentError('must be a positive integer.');
  return Number(text);
}

function rfc3339(text: string): string {
  if (parseRfc3339(text) === null) throw new InvalidArgumentError('must be an RFC 3339 time, e.g. 2026-11-21T15:00:00Z.');
  return text;
}

function teamId(text: string): number {
  if (!/^[1-9]\d*$/.test(text)) throw new InvalidArgumentError('must be a positive integer.');
  return Number(text);
}

async function printVerification(scope: { team?: number; stream?: string }, options: DataDirOptions): Promise<void> {
  const config = cliConfig(options);
  const store = createEventStore({ dataDir: config.dataDir, eventStoreUrl: config.eventStoreUrl });
  try {
    // The whole log is verified in one pass over it (its progress in log positions), a scope stream by stream.
    const wholeLog = scope.team === undefined && scope.stream === undefined;
    const progress = wholeLog ? stderrProgress('verify', 'position') : stderrProgress('verify', 'stream');
    const report = await verifyHistory(store, { teamId: scope.team, stream: scope.stream }, {
      onProgress: (p) =>
        progress.update(wholeLog ? { done: p.position ?? 0, total: p.head, events: p.events_checked } : { done: p.streams_checked, total: p.streams, events: p.events_checked }),
    }).finally(() => progress.stop());
    if ((scope.team !== undefined || scope.stream !== undefined) && report.intact && report.events_checked === 0) {
      // A mistyped id would otherwise read "Intact: 0 streams" and exit 0, as if audited.
      const what = scope.stream !== undefined ? `Stream ${scope.stream}` : `Team ${scope.team}`;
      process.stderr.write(`${what} has no events in this log: nothing verified. Check the id and the data dir.\n`);
      process.exitCode = 1;
      return;
    }
    const out: string[] = [];
    for (const p of report.pruned) {
      out.push(`Pruned by retention: ${p.stream} revisions ${p.from_revision}-${p.through_revision} (${p.events} events), covered by ${p.summaries} ${p.summaries === 1 ? 'summary' : 'summaries'}.`);
    }
    for (const b of report.broken) {
      out.push(`BROKEN ${b.stream} at revision ${b.revision}: ${b.problem} (expected ${b.expected || "''"}, found ${b.found || "''"})`);
    }
    out.push(`${report.intact ? 'Intact' : 'Broken'}: ${report.streams_checked} streams, ${report.events_checked} events verified, ${report.broken.length} broken.`, '');
    process.stdout.write(out.join('\n'));
    if (!report.intact) process.exitCode = 1;
  } finally {
    await store.close();
  }
}

interface ExportCommandOptions {
  team?: number;
  stream?: string;
  incident?: number;
  from?: string;
  to?: string;
  out?: string;
}

async function writeExport(options: ExportCommandOptions, dataDir: DataDirOptions): Promise<void> {
  const scopes = [options.team, options.stream, options.incident].filter((s) => s !== undefined).length;
  if (scopes !== 1) throw new UsageError('Pass exactly one of --team, --stream, --incident.');
  if (options.from && options.to && parseRfc3339(options.from)! > parseRfc3339(options.to)!) throw new UsageError('--from must not be after --to.');
  const config = cliConfig(dataDir);
  const signer = config.auditSigningKey ? auditSigner(config.auditSigningKey) : null;
  if (!signer) process.stderr.write('AUDIT_SIGNING_KEY is not set: the export is not signed.\n');
  const store = createEventStore({ dataDir: config.dataDir, eventStoreUrl: config.eventStoreUrl });
  const ranged = options.from !== undefined || options.to !== undefined;
  // Opened at the first line written, so that a refused export leaves no file behind.
  let out: NodeJS.WritableStream | null = null;
  const progress = stderrProgress('export', 'position');
  let events = 0;
  let emptyScope: string | null = null;
  try {
    const stream = options.stream ?? (options.incident !== undefined ? incidentStreamId(options.incident) : undefined);
    const lines = exportHistory(store, stream !== undefined ? { stream } : { teamId: options.team }, {
      from: options.from ?? null,
      to: options.to ?? null,
      signer,
      onProgress: (p) => {
        events = p.events;
        // An empty last page has no position: the export read the log to its head.
        progress.update({ done: p.position ?? p.head ?? 0, total: p.head, events: p.events });
      },
    });
    // One chunk behind: the last chunk is the manifest, so an export whose only chunk is the
    // manifest holds no event. Over a range that is an answer; over a whole scope it is a
    // mistyped id or another data dir, refused as `verify` refuses it, rather than signed.
    let pending: string | null = null;
    for await (const chunk of lines) {
      if (pending !== null) {
        out ??= options.out ? createWriteStream(options.out) : process.stdout;
        if (!out.write(pending)) await once(out, 'drain');
      }
      pending = chunk;
    }
    if (out === null && !ranged) {
      emptyScope = options.incident !== undefined ? `Incident ${options.incident}` : options.stream !== undefined ? `Stream ${options.stream}` : `Team ${options.team}`;
    } else {
      out ??= options.out ? createWriteStream(options.out) : process.stdout;
      if (pending !== null && !out.write(pending)) await once(out, 'drain');
    }
  } catch (error) {
    // Refused before its first line (a channel's stream), so nothing was written: a usage error.
    if (error instanceof StreamWithheld) throw new UsageError(error.message);
    throw error;
  } finally {
    progress.stop();
    await store.close();
    if (out !== null && out !== process.stdout) {
      const file = out as ReturnType<typeof createWriteStream>;
      await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
    }
  }
  if (emptyScope !== null) {
    process.stderr.write(`${emptyScope} has no events in this log: nothing exported. Check the id and the data dir.\n`);
    process.exitCode = 1;
    return;
  }
  process.stderr.write(`Exported ${events} events${options.out ? ` to ${options.out}` : ''}${signer ? `, signed with key ${signer.keyId}` : ''}.\n`);
}

/** How many lines of an export are checked between two progress updates. */
const PROGRESS_LINES = 1000;

/** The last non-empty line of a file and its number, read as a stream. */
async function lastLineOf(file: string): Promise<{ text: string; number: number } | null> {
  let last: { text: string; number: number } | null = null;
  let number = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    number++;
    if (text.trim() !== '') last = { text, number };
  }
  return last;
}

async function checkExport(file: string, options: { publicKey?: string }): Promise<void> {
  let key = null;
  if (options.publicKey) {
    let pem: string;
    try {
      pem = readFileSync(options.publicKey, 'utf8');
    } catch (error) {
      throw new UsageError(`--public-key ${options.publicKey} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      key = auditPublicKey(pem);
    } catch (error) {
      if (error instanceof SigningKeyError) throw new UsageError(`--public-key ${options.publicKey} ${error.message}.`);
      throw error;
    }
  }
  let last: { text: string; number: number } | null;
  try {
    last = await lastLineOf(file);
  } catch (error) {
    throw new UsageError(`${file} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  const manifest = last ? parseManifestLine(last.text) : null;
  if (manifest?.signature && !key) {
    throw new UsageError(`The export is signed by key ${manifest.key_id}: pass --public-key <PEM file> (GET /api/v2/audit/public-key) to check the signature.`);
  }
  const progress = stderrProgress('verify-export', 'line');
  const total = last?.number ?? null;
  /** The file's lines, with progress every PROGRESS_LINES of them (the file was read once already: its line count is known). */
  async function* counted(lines: AsyncIterable<string>): AsyncGenerator<string> {
    let number = 0;
    progress.update({ done: 0, total, events: 0 });
    for await (const line of lines) {
      if (++number % PROGRESS_LINES === 0) progress.update({ done: number, total, events: number });
      yield line;
    }
  }
  const result = await verifyExport(counted(createInterface({ input: createReadStream(file), crlfDelay: Infinity })), last, key).finally(() => progress.stop());
  if (!result.ok) {
    process.stdout.write(`BAD line ${result.line}: ${result.problem}\n`);
    process.exitCode = 1;
    return;
  }
  const signature = result.key_id ? `signature valid (key ${result.key_id})` : 'unsigned (no signature to check)';
  const unlinked = result.unlinked > 0 ? ` ${result.unlinked} lines link to events no longer in the log: their content was not checked.` : '';
  const withheldLines =
    result.withheld > 0 ? ` ${result.withheld} ${result.withheld === 1 ? 'line shows' : 'lines show'} hidden values as withheld: not content-checked (their place in the chain and what they show are${result.key_id ? ', by the signature' : ''}).` : '';
  const withheldStreams = manifest?.withheld_streams?.length ? ` Left out (they hold secrets): ${manifest.withheld_streams.join(', ')}.` : '';
  process.stdout.write(`Verified: ${result.events} events in ${result.streams} streams, every chain link holds, ${signature}.${unlinked}${withheldLines}${withheldStreams}\n`);
}

async function printIncident(id: number, at: string | undefined, options: DataDirOptions): Promise<void> {
  const config = cliConfig(options);
  const store = createEventStore({ dataDir: config.dataDir, eventStoreUrl: config.eventStoreUrl });
  try {
    const history = await incidentHistory(store, id, at);
    if (!history) {
      process.stderr.write(`Incident ${id} has no events.\n`);
      process.exitCode = 1;
      return;
    }
    const out: string[] = [`Incident ${history.incident_id} (team ${history.team_id})${at ? ` as of ${at}` : ''}`, ''];
    for (const event of history.events) {
      out.push(`#${event.revision} ${event.at} ${event.type} by ${event.actor ?? '-'} request ${event.request_id ?? '-'}`);
      out.push(`    ${event.summary}`);
      for (const [field, change] of Object.entries(event.changes)) out.push(`    ${field}: ${formatChange(change)}`);
    }
    out.push('', 'State:', JSON.stringify(history.state, null, 2), '');
    process.stdout.write(out.join('\n'));
  } finally {
    await store.close();
  }
}

const program = cliProgram(withDataDirOptions(new Command('history')), '(npm run history -- --help for usage)').description(
  "An incident's history for auditors, read straight from the event log",
);
program
  .command('incident')
  .description('every event of the incident, then its state (as of --at when given)')
  .argument('<id>', 'incident id', incidentId)
  .option('--at <time>', 'RFC 3339 time: the events up to then and the state the incident had then', rfc3339)
  .action((id: number, options: { at?: string }) => printIncident(id, options.at, program.opts<DataDirOptions>()));

program
  .command('verify')
  .description("walks every stream's hash chain (docs/audit.md): exit 0 when intact, else 1 with each broken stream's first bad revision (1 also when --team or --stream has no events)")
  .option('--team <id>', "only the team's streams", teamId)
  .option('--stream <name>', 'only this stream')
  .action((options: { team?: number; stream?: string }) => printVerification(options, program.opts<DataDirOptions>()));

program
  .command('export')
  .description("NDJSON of a team's (or one stream's) events in log order with their chain hashes, then a manifest signed with AUDIT_SIGNING_KEY (docs/audit.md); exit 1, nothing written, when the scope has no events")
  .option('--team <id>', "the team's streams", teamId)
  .option('--stream <name>', 'one stream')
  .option('--incident <id>', "one incident's stream", incidentId)
  .option('--from <time>', 'RFC 3339: events recorded at or after it', rfc3339)
  .option('--to <time>', 'RFC 3339: events recorded before it', rfc3339)
  .option('--out <file>', 'write to this file instead of stdout')
  .action((options: ExportCommandOptions) => writeExport(options, program.opts<DataDirOptions>()));

program
  .command('verify-export')
  .description("checks an export offline: every line's hash and chain link, the manifest, the signature; exit 0 when all hold, else 1 naming the first bad line")
  .argument('<file>', 'the NDJSON export')
  .option('--public-key <file>', 'the Ed25519 public key in PEM (GET /api/v2/audit/public-key); needed for a signed export')
  .action((file: string, options: { publicKey?: string }) => checkExport(file, options));

runCli(program);
