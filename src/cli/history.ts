/**
 * `npm run history -- incident <id> [--at <RFC 3339>]`: an incident's history for auditors,
 * read straight from the event store (no views): each event with its time, actor token, request
 * id and what changed, then the state rebuilt from the log (as of `--at` when given).
 * `npm run history -- verify [--team N] [--stream NAME]`: walks the hash chains (docs/audit.md);
 * exit 0 when intact, 1 naming each broken stream's first bad revision.
 * Usage errors exit with 2, an unknown incident with 1; `--help` prints the usage.
 */
import { Command, InvalidArgumentError } from 'commander';
import { createEventStore } from '../platform/event-store/create-event-store.js';
import { incidentHistory } from '../incidents/application/history.js';
import { verifyHistory } from '../audit/application/verify.js';
import { parseRfc3339 } from '../platform/time/rfc3339.js';
import { cliConfig, withDataDirOptions, type DataDirOptions } from './data-dir.js';
import { cliProgram, runCli } from './usage.js';

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
    const report = await verifyHistory(store, { teamId: scope.team, stream: scope.stream });
    const out: string[] = [];
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
  .description("walks every stream's hash chain (docs/audit.md): exit 0 when intact, else 1 with each broken stream's first bad revision")
  .option('--team <id>', "only the team's streams", teamId)
  .option('--stream <name>', 'only this stream')
  .action((options: { team?: number; stream?: string }) => printVerification(options, program.opts<DataDirOptions>()));

runCli(program);
