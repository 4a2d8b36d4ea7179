/**
 * `npm run history -- incident <id> [--at <RFC 3339>]`: an incident's history for auditors,
 * read straight from the event store (no views): each event with its time, actor token, request
 * id and what changed, then the state rebuilt from the log (as of `--at` when given).
 */
import { loadConfig } from '../platform/config/config.js';
import { createEventStore } from '../platform/event-store/create-event-store.js';
import { incidentHistory } from '../incidents/application/history.js';
import { parseRfc3339 } from '../incidents/domain/time.js';

function usage(message: string): never {
  process.stderr.write(`${message}\nUsage: npm run history -- incident <id> [--at <RFC 3339>]\n`);
  process.exit(2);
}

function formatChange(change: { from?: unknown; to?: unknown }): string {
  return 'from' in change ? `${JSON.stringify(change.from)} -> ${JSON.stringify(change.to)}` : JSON.stringify(change.to);
}

async function main(argv: string[]): Promise<void> {
  const [kind, idText, ...rest] = argv;
  if (kind !== 'incident' || !idText || !/^[1-9]\d*$/.test(idText)) usage('Expected: incident <id>');
  let at: string | undefined;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] !== '--at') usage(`Unknown argument: ${rest[i]}`);
    at = rest[++i];
    if (at === undefined) usage('--at needs an RFC 3339 time');
  }
  if (at !== undefined && parseRfc3339(at) === null) usage(`--at must be an RFC 3339 time, got ${at}`);
  const config = loadConfig();
  const store = createEventStore({ dataDir: config.dataDir, eventStoreUrl: config.eventStoreUrl });
  try {
    const history = await incidentHistory(store, Number(idText), at);
    if (!history) {
      process.stderr.write(`Incident ${idText} has no events.\n`);
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

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
