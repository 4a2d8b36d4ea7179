/**
 * `npm run admin` commands for notification channels (application API):
 *   npm run admin -- create-channel 1 --kind webhook --name Ops --channel-url https://hooks.example.com/x
 *   npm run admin -- create-channel 1 --kind email --name Oncall --to a@example.com,b@example.com
 *   npm run admin -- channels 1 | channel 1 5 | update-channel 1 5 --json '{"enabled":false}'
 *   npm run admin -- test-channel 1 5 | rotate-channel-secret 1 5 | channel-deliveries 1 5 | delete-channel 1 5
 */
import type { Command } from 'commander';
import { jsonOption } from './usage.js';

type Call = (method: string, path: string, body?: unknown) => Promise<void>;

interface CreateOptions {
  kind: string;
  name: string;
  channelUrl?: string;
  to?: string;
  routingKey?: string;
  events?: string;
  projectIds?: string;
  disabled?: boolean;
}

const list = (text: string | undefined) => (text ? text.split(',').map((item) => item.trim()).filter(Boolean) : undefined);

export function notificationCommands(program: Command, call: Call): void {
  const channels = (team: string) => `/api/v2/teams/${team}/notification-channels`;
  program
    .command('create-channel')
    .description('create a notification channel (webhook secrets are printed once)')
    .argument('<teamId>')
    .requiredOption('--kind <kind>', 'webhook, slack, discord, email or pagerduty')
    .requiredOption('--name <name>')
    .option('--channel-url <url>', 'webhook/slack/discord URL (pagerduty: optional Events API URL); --url is the service')
    .option('--to <list>', 'email: comma-separated addresses')
    .option('--routing-key <key>', 'pagerduty: integration key')
    .option('--events <list>', 'comma-separated types (default: all)')
    .option('--project-ids <list>', 'comma-separated project ids (default: all)')
    .option('--disabled', 'create it disabled')
    .action((team: string, o: CreateOptions) => {
      const config = { ...(o.channelUrl ? { url: o.channelUrl } : {}), ...(o.to ? { to: list(o.to) } : {}), ...(o.routingKey ? { routing_key: o.routingKey } : {}) };
      return call('POST', channels(team), {
        name: o.name,
        kind: o.kind,
        config,
        ...(o.events ? { events: list(o.events) } : {}),
        ...(o.projectIds ? { project_ids: list(o.projectIds)!.map(Number) } : {}),
        ...(o.disabled ? { enabled: false } : {}),
      });
    });
  program.command('channels').description("list a team's notification channels").argument('<teamId>').option('--cursor <cursor>').action((t: string, o: { cursor?: string }) => call('GET', `${channels(t)}${o.cursor ? `?cursor=${encodeURIComponent(o.cursor)}` : ''}`));
  program.command('channel').description('show one notification channel').argument('<teamId>').argument('<channelId>').action((t: string, c: string) => call('GET', `${channels(t)}/${c}`));
  program
    .command('update-channel')
    .description('change a notification channel')
    .argument('<teamId>')
    .argument('<channelId>')
    .requiredOption('--json <body>', 'fields to change, e.g. {"enabled":true}')
    .action((t: string, c: string, o: { json: string }) => call('PATCH', `${channels(t)}/${c}`, jsonOption(o.json)));
  program.command('delete-channel').description('delete a notification channel').argument('<teamId>').argument('<channelId>').action((t: string, c: string) => call('DELETE', `${channels(t)}/${c}`));
  program.command('test-channel').description('send a ping now').argument('<teamId>').argument('<channelId>').action((t: string, c: string) => call('POST', `${channels(t)}/${c}/test`));
  program.command('rotate-channel-secret').description("rotate a webhook channel's signing secret (printed once)").argument('<teamId>').argument('<channelId>').action((t: string, c: string) => call('POST', `${channels(t)}/${c}/rotate-secret`));
  program
    .command('channel-deliveries')
    .description("list a channel's delivery attempts")
    .argument('<teamId>')
    .argument('<channelId>')
    .option('--cursor <cursor>')
    .action((t: string, c: string, o: { cursor?: string }) => call('GET', `${channels(t)}/${c}/deliveries${o.cursor ? `?cursor=${encodeURIComponent(o.cursor)}` : ''}`));
}
