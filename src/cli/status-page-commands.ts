/**
 * `npm run admin` commands for public status pages (application API routes under
 * /api/v2/teams/:teamID/status-pages). Kept apart from admin.ts, which registers them.
 *
 *   npm run admin -- create-status-page 1 --slug acme --title 'Acme' --component 1 --component '2=Public API'
 *   npm run admin -- list-status-pages 1
 *   npm run admin -- update-status-page 1 4 --title 'Acme Cloud' --component 1
 *   npm run admin -- delete-status-page 1 4
 */
import { InvalidArgumentError, type Command } from 'commander';

export type AdminCall = (method: string, path: string, body?: unknown) => Promise<void>;

/** `<endpointId>` or `<endpointId>=<display name>`. */
function component(value: string, previous: Array<{ endpoint_id: number; name?: string }> = []) {
  const [id, ...name] = value.split('=');
  if (!/^\d+$/.test(id)) throw new Error(`--component ${value}: expected <endpointId> or <endpointId>=<name>`);
  return [...previous, { endpoint_id: Number(id), ...(name.length ? { name: name.join('=') } : {}) }];
}

interface PageOptions {
  slug?: string;
  title?: string;
  description?: string;
  component?: Array<{ endpoint_id: number; name?: string }>;
  historyDays?: string;
  publishAutomaticIncidents?: string;
}

/** The fields given as options; absent options are not sent. */
function fields(o: PageOptions & { components?: boolean }): Record<string, unknown> {
  return {
    ...(o.slug !== undefined ? { slug: o.slug } : {}),
    ...(o.title !== undefined ? { title: o.title } : {}),
    ...(o.description !== undefined ? { description: o.description } : {}),
    ...(o.component !== undefined ? { components: o.component } : o.components === false ? { components: [] } : {}),
    ...(o.historyDays !== undefined ? { history_days: Number(o.historyDays) } : {}),
    ...(o.publishAutomaticIncidents !== undefined ? { publish_automatic_incidents: o.publishAutomaticIncidents === 'true' } : {}),
  };
}

function trueOrFalse(value: string): string {
  if (value !== 'true' && value !== 'false') throw new InvalidArgumentError('must be true or false.');
  return value;
}

const pages = (teamId: string, pageId?: string) => `/api/v2/teams/${teamId}/status-pages${pageId === undefined ? '' : `/${pageId}`}`;

export function registerStatusPageCommands(program: Command, call: AdminCall): void {
  program
    .command('create-status-page')
    .description('Create a public status page (served at /status/<slug>)')
    .argument('<teamId>')
    .requiredOption('--slug <slug>', '1-64 of a-z, 0-9 and -; unique across the service')
    .requiredOption('--title <title>')
    .option('--description <text>')
    .option('--component <endpointId[=name]>', 'an endpoint of the team, in display order (repeat)', component)
    .option('--history-days <days>', 'days of daily uptime shown, 1-90 (default 90)')
    .option('--publish-automatic-incidents <true|false>', 'show automatic incidents at once, with a generated first update (default false)', trueOrFalse)
    .action((teamId: string, o: PageOptions) => call('POST', pages(teamId), { components: [], ...fields(o) }));
  program.command('list-status-pages').description("list a team's status pages").argument('<teamId>').option('--limit <n>').option('--cursor <cursor>').action((teamId: string, o: { limit?: string; cursor?: string }) => {
    const query = new URLSearchParams({ ...(o.limit ? { limit: o.limit } : {}), ...(o.cursor ? { cursor: o.cursor } : {}) }).toString();
    return call('GET', `${pages(teamId)}${query ? `?${query}` : ''}`);
  });
  program.command('status-page').description('show one status page').argument('<teamId>').argument('<pageId>').action((teamId: string, pageId: string) => call('GET', pages(teamId, pageId)));
  program
    .command('update-status-page')
    .description('Change a status page: only the options given are sent; --component replaces the whole list, --no-components empties it')
    .argument('<teamId>')
    .argument('<pageId>')
    .option('--slug <slug>')
    .option('--title <title>')
    .option('--description <text>')
    .option('--component <endpointId[=name]>', 'repeat; replaces the list', component)
    .option('--no-components', 'remove every component')
    .option('--history-days <days>')
    .option('--publish-automatic-incidents <true|false>', 'show automatic incidents at once, with a generated first update', trueOrFalse)
    .action((teamId: string, pageId: string, o: PageOptions & { components?: boolean }) => call('PATCH', pages(teamId, pageId), fields(o)));
  program.command('delete-status-page').description('delete a status page (its slug is free at once)').argument('<teamId>').argument('<pageId>').action((teamId: string, pageId: string) => call('DELETE', pages(teamId, pageId)));
}
