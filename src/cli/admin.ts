/**
 * Provisioning from the shell, over the application API of a running service:
 *   npm run admin -- create-team Acme
 *   npm run admin -- issue-token 1 --name dashboard --scopes monitoring:read,analytics:read --role viewer
 *   npm run admin -- create-endpoint 1 --json '{"project_id":1,"name":"API","url":"https://example.com/health"}'
 * The admin token comes from ADMIN_TOKEN or DATA_DIR/admin-token; the service from --url.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { notificationCommands } from './admin-notifications.js';
import { registerStatusPageCommands } from './status-page-commands.js';
import { cliProgram, jsonOption as json, runCli, UsageError } from './usage.js';

const program = cliProgram(new Command('admin'), '(npm run admin -- --help for usage)')
  .description('Provision teams, tokens, projects and endpoints over the application API')
  .option('--url <url>', 'service base URL', 'http://127.0.0.1:3000');

/** The admin token and where it came from (said when the service refuses it). */
function adminToken(): { token: string; source: string } {
  if (process.env.ADMIN_TOKEN) return { token: process.env.ADMIN_TOKEN, source: 'ADMIN_TOKEN (it takes precedence over DATA_DIR/admin-token)' };
  const file = join(resolve(process.env.DATA_DIR ?? './data'), 'admin-token');
  try {
    return { token: readFileSync(file, 'utf8').trim(), source: `${file} (ADMIN_TOKEN is not set)` };
  } catch {
    throw new Error(`No ADMIN_TOKEN set and no ${file}: start the service once, or set ADMIN_TOKEN.`);
  }
}

/** One request to the application API; a service that cannot be reached is named with its URL. */
async function send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; ok: boolean; text: string }> {
  const base = program.opts<{ url: string }>().url.replace(/\/$/, '');
  const { token, source } = adminToken();
  let response: Response;
  try {
    response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw unreachable(base, error);
  }
  if (response.status === 401) process.stderr.write(`The service refused the admin token from ${source}.\n`);
  return { status: response.status, ok: response.ok, text: await response.text() };
}

/** Prints the answer's JSON; any error status makes the exit code 1. */
function report(answer: { status: number; ok: boolean; text: string }): void {
  process.stdout.write(`${answer.text ? JSON.stringify(JSON.parse(answer.text), null, 2) : `(${answer.status}, no body)`}\n`);
  if (!answer.ok) process.exitCode = 1;
}

async function call(method: string, path: string, body?: unknown): Promise<void> {
  report(await send(method, path, body));
}

/** `fetch failed` says nothing: name the URL, the cause, and how to point the CLI elsewhere. */
function unreachable(base: string, error: unknown): Error {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
  return new Error(`Could not reach the service at ${base} (${reason}). Is it running there? Point the CLI at another address with --url <url>, e.g. npm run admin -- --url http://host:3000 <command>.`);
}

/** The application API takes at most this many checks per import request. */
const IMPORT_BATCH = 10_000;

/**
 * Sends a history file in requests of IMPORT_BATCH checks, each with an Idempotency-Key made from
 * its endpoint and content: rerunning the command after a failure (within the 24 hours keys are
 * kept) replays the requests that were imported and imports the rest, never a check twice.
 */
async function importChecks(teamId: string, endpointId: string, file: string): Promise<void> {
  let checks: unknown;
  try {
    checks = (JSON.parse(readFileSync(file, 'utf8')) as { checks?: unknown }).checks;
  } catch (error) {
    throw new UsageError(`${file} cannot be read as JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(checks) || checks.length === 0) throw new UsageError(`${file} holds no checks: it must be {"checks": [...]} with at least one check.`);
  const path = `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`;
  const batches = Math.ceil(checks.length / IMPORT_BATCH);
  let imported = 0;
  for (let batch = 0; batch < batches; batch++) {
    const body = { checks: checks.slice(batch * IMPORT_BATCH, (batch + 1) * IMPORT_BATCH) };
    const key = `admin-import-${endpointId}-${createHash('sha256').update(JSON.stringify(body)).digest('hex')}`;
    const stopped = `Stopped at request ${batch + 1} of ${batches}: ${imported} of ${checks.length} checks imported. Run the same command again to import the rest (what was imported is not imported twice).`;
    const answer = await send('POST', path, body, { 'idempotency-key': key }).catch((error: Error) => {
      throw new Error(`${error.message}\n${stopped}`);
    });
    if (!answer.ok) {
      report(answer);
      process.stderr.write(`${stopped}\n`);
      return;
    }
    imported += body.checks.length;
    // A 202 (views_behind) recorded the checks too; its body is not the count.
    if (batches > 1) process.stderr.write(`${imported} of ${checks.length} checks imported (${batch + 1}/${batches})\n`);
  }
  process.stdout.write(`${JSON.stringify({ data: { imported } }, null, 2)}\n`);
}

const pageQuery = (o: { limit: string; cursor?: string }) => `?${new URLSearchParams({ limit: o.limit, ...(o.cursor ? { cursor: o.cursor } : {}) })}`;

program.command('list-teams').description('List every team (id, name, created_at)').option('--limit <n>', 'page size, 1-100', '100').option('--cursor <cursor>', 'next_cursor of the previous page')
  .action((o: { limit: string; cursor?: string }) => call('GET', `/api/v2/teams${pageQuery(o)}`));
program.command('create-team').description('Create a team (seeds its incident statuses)').argument('<name>').action((name: string) => call('POST', '/api/v2/teams', { name }));
program
  .command('list-tokens')
  .description("List a team's developer tokens: scopes, role, expiry, revocation, last use (never the secret)")
  .argument('<teamId>')
  .option('--limit <n>', 'page size, 1-100', '100')
  .option('--cursor <cursor>', 'next_cursor of the previous page')
  .action((t: string, o: { limit: string; cursor?: string }) => call('GET', `/api/v2/teams/${t}/tokens${pageQuery(o)}`));
program
  .command('issue-token')
  .description('Issue a developer token for a team; the secret is printed once')
  .argument('<teamId>')
  .requiredOption('--name <name>')
  .requiredOption('--scopes <list>', 'comma-separated: monitoring:read,analytics:read,incidents:read,incidents:write')
  .option('--role <role>', 'editor or viewer', 'viewer')
  .option('--expires-at <time>', 'RFC 3339')
  .action((teamId: string, o: { name: string; scopes: string; role: string; expiresAt?: string }) =>
    call('POST', `/api/v2/teams/${teamId}/tokens`, { name: o.name, scopes: o.scopes.split(','), role: o.role, ...(o.expiresAt ? { expires_at: o.expiresAt } : {}) }),
  );
program.command('revoke-token').description('Revoke a developer token (refused with 401 from then on)').argument('<teamId>').argument('<tokenId>').action((t: string, k: string) => call('DELETE', `/api/v2/teams/${t}/tokens/${k}`));
program
  .command('create-project')
  .description('Create a project in a team')
  .argument('<teamId>')
  .argument('<name>')
  .option('--description <text>')
  .action((t: string, name: string, o: { description?: string }) => call('POST', `/api/v2/teams/${t}/projects`, { name, ...(o.description ? { description: o.description } : {}) }));
program.command('delete-project').description('Delete a project that has no endpoints left (409 project_not_empty otherwise)').argument('<teamId>').argument('<projectId>').action((t: string, p: string) => call('DELETE', `/api/v2/teams/${t}/projects/${p}`));
program.command('create-endpoint').description('Register an endpoint (disabled until its destination is verified)').argument('<teamId>').requiredOption('--json <body>', 'endpoint fields as JSON').action((t: string, o: { json: string }) => call('POST', `/api/v2/teams/${t}/endpoints`, json(o.json)));
program.command('update-endpoint').description("Change an endpoint's fields").argument('<teamId>').argument('<endpointId>').requiredOption('--json <body>', 'fields to change as JSON').action((t: string, e: string, o: { json: string }) => call('PATCH', `/api/v2/teams/${t}/endpoints/${e}`, json(o.json)));
program.command('delete-endpoint').description('Delete an endpoint: probing stops at once; its checks and incidents stay readable to auditors').argument('<teamId>').argument('<endpointId>').action((t: string, e: string) => call('DELETE', `/api/v2/teams/${t}/endpoints/${e}`));
program.command('verify-destination').description("Fetch the endpoint's verification URL and mark its destination verified").argument('<teamId>').argument('<endpointId>').action((t: string, e: string) => call('POST', `/api/v2/teams/${t}/endpoints/${e}/verify-destination`));
program.command('enable').description('Enable scheduled checks of a verified endpoint').argument('<teamId>').argument('<endpointId>').action((t: string, e: string) => call('PATCH', `/api/v2/teams/${t}/endpoints/${e}`, { enabled: true }));
program.command('check-now').description('Run one manual check of an endpoint now').argument('<teamId>').argument('<endpointId>').action((t: string, e: string) => call('POST', `/api/v2/teams/${t}/endpoints/${e}/checks`));
program
  .command('maintenance')
  .description('Schedule a maintenance window (team-wide, or for a project or an endpoint)')
  .argument('<teamId>')
  .requiredOption('--starts-at <time>')
  .requiredOption('--ends-at <time>')
  .option('--project-id <id>')
  .option('--endpoint-id <id>')
  .option('--reason <text>')
  .action((t: string, o: { startsAt: string; endsAt: string; projectId?: string; endpointId?: string; reason?: string }) =>
    call('POST', `/api/v2/teams/${t}/maintenance-windows`, {
      starts_at: o.startsAt,
      ends_at: o.endsAt,
      ...(o.projectId ? { project_id: Number(o.projectId) } : {}),
      ...(o.endpointId ? { endpoint_id: Number(o.endpointId) } : {}),
      ...(o.reason ? { reason: o.reason } : {}),
    }),
  );
program
  .command('import-checks')
  .description(`Import check history from a JSON file, ${IMPORT_BATCH.toLocaleString('en')} checks a request, progress on stderr; rerunning it after a failure imports only what is missing`)
  .argument('<teamId>')
  .argument('<endpointId>')
  .argument('<file>', 'JSON file: {"checks": [...]}')
  .action((t: string, e: string, file: string) => importChecks(t, e, file));
registerStatusPageCommands(program, call);

notificationCommands(program, call);

runCli(program);
