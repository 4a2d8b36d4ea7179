import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { Inject } from '@nestjs/common';
import { Command, CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { CommandContext } from '../../platform/es/command-context.js';
import { runStreamCommand } from '../../platform/es/stream-command.js';
import type { NewEvent } from '../../platform/event-store/event-store.port.js';
import { ChannelHasNoSecretError, ChannelRulesError, NotificationsNotFoundError } from '../domain/errors.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';
import type { AppendedWrite } from '../../platform/projections/views.js';
import { blockedRange } from '../../probing/prober/address-guard.js';
import {
  CHANNEL_CREATED,
  CHANNEL_DELETED,
  CHANNEL_SECRET_ROTATED,
  CHANNEL_TEST_REQUESTED,
  CHANNEL_UPDATED,
  channelAggregate,
  channelStream,
  evolveChannel,
  PREVIOUS_SECRET_GRACE_MS,
  type Channel,
  type ChannelConfig,
  type ChannelKind,
  type ChannelSettings,
  type ChannelState,
} from '../domain/channel.js';
import { deliveryId } from '../domain/channel-view.js';
import { NOTIFICATIONS_VIEW } from '../reactors/notifications/view.js';
import { teamExists } from '../../tenancy/views/tenancy/queries.js';

/**
 * The channel list is kept by the notifications reactor (its `channels` collection), and
 * read-your-writes never waits for a reactor by itself: channel writes name it. Only they do, so a
 * slow webhook receiver holds no other write's answer.
 */
const WAIT_FOR_CHANNEL_VIEW = { alsoViews: [NOTIFICATIONS_VIEW] };

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface ChannelInput extends Partial<ChannelSettings> {
  name: string;
  kind: ChannelKind;
  config: ChannelConfig;
}

export class CreateChannel extends Command<{ channel: Channel; secret: string | null }> {
  constructor(readonly teamId: number, readonly input: ChannelInput, readonly context: CommandContext) {
    super();
  }
}

export class UpdateChannel extends Command<Channel> {
  constructor(readonly teamId: number, readonly channelId: number, readonly changes: Partial<ChannelSettings> & { config?: ChannelConfig }, readonly context: CommandContext) {
    super();
  }
}

export class DeleteChannel extends Command<void> {
  constructor(readonly teamId: number, readonly channelId: number, readonly context: CommandContext) {
    super();
  }
}

export class RotateChannelSecret extends Command<{ channel: Channel; secret: string | null }> {
  constructor(readonly teamId: number, readonly channelId: number, readonly context: CommandContext) {
    super();
  }
}

export class TestChannel extends Command<{ delivery_id: string }> {
  constructor(readonly teamId: number, readonly channelId: number, readonly context: CommandContext) {
    super();
  }
}

/**
 * With PROBE_BLOCK_PRIVATE, a URL naming a non-public IP literal is refused at once. Hostnames
 * are checked when a delivery connects (the probes' guard), which also covers DNS rebinding.
 */
function guardUrl(platform: Platform, config: ChannelConfig | undefined): void {
  if (!config?.url || !platform.config.probeBlockPrivate) return;
  const host = new URL(config.url).hostname.replace(/^\[(.*)\]$/, '$1');
  const range = isIP(host) ? blockedRange(host) : null;
  if (range) throw new ChannelRulesError([{ field: 'config.url', code: 'blocked_address', message: `names a non-public address (${range})` }]);
}

function ownChannel(state: ChannelState, teamId: number): Channel {
  if (!state || state.deleted || state.team_id !== teamId) throw new NotificationsNotFoundError('The notification channel');
  return state;
}

/** The channel after this command's events (answers never wait on the view for it). */
function after(state: ChannelState, appended: NewEvent[]): Channel {
  return appended.reduce<ChannelState>((s, e) => evolveChannel(s, e), state)!;
}

/**
 * Later reads see the write: waits (bounded) for the channel view. Answers that show a secret
 * once do not fail when the view is slow (`require: false`): the secret would be lost.
 */
async function settle(platform: Platform, written: AppendedWrite, require = true): Promise<void> {
  if (require) await platform.freshness.require(written, WAIT_FOR_CHANNEL_VIEW);
  else await platform.freshness.waitForWrite(written, WAIT_FOR_CHANNEL_VIEW);
}

@CommandHandler(CreateChannel)
export class CreateChannelHandler implements ICommandHandler<CreateChannel> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, input, context }: CreateChannel) {
    if (!(await teamExists(this.platform.reader, teamId))) throw new NotificationsNotFoundError('The team');
    guardUrl(this.platform, input.config);
    const channelId = await this.platform.ids.next('notification_channel');
    const secret = input.kind === 'webhook' ? newWebhookSecret() : null;
    const data = {
      channel_id: channelId,
      team_id: teamId,
      name: input.name,
      kind: input.kind,
      config: input.config,
      secret,
      events: input.events ?? null,
      project_ids: input.project_ids ?? null,
      enabled: input.enabled ?? true,
      created_at: new Date().toISOString(),
    };
    const written = await runStreamCommand(this.platform.events, channelStream(channelId), channelAggregate, context, () => ({
      events: [{ type: CHANNEL_CREATED, data }],
      result: undefined,
    }));
    await settle(this.platform, written, false);
    const { state, appended, replayed } = written;
    // A retry of a keyed request whose first attempt created the channel: that secret was shown
    // (or lost) then; this attempt's random one was never stored.
    return { channel: after(state, appended), secret: replayed ? null : secret };
  }
}

@CommandHandler(UpdateChannel)
export class UpdateChannelHandler implements ICommandHandler<UpdateChannel> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, channelId, changes, context }: UpdateChannel) {
    const written = await runStreamCommand(this.platform.events, channelStream(channelId), channelAggregate, context, (state) => {
      const channel = ownChannel(state, teamId);
      guardUrl(this.platform, changes.config);
      if (changes.config?.to && channel.kind !== 'email') throw new ChannelRulesError([{ field: 'config.to', code: 'unknown_field', message: 'applies to email channels only' }]);
      const events: NewEvent[] = [{ type: CHANNEL_UPDATED, data: { channel_id: channelId, team_id: teamId, changes, updated_at: new Date().toISOString() } }];
      return { events, result: undefined };
    });
    await settle(this.platform, written);
    return after(written.state, written.appended);
  }
}

@CommandHandler(DeleteChannel)
export class DeleteChannelHandler implements ICommandHandler<DeleteChannel> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, channelId, context }: DeleteChannel) {
    const written = await runStreamCommand(this.platform.events, channelStream(channelId), channelAggregate, context, (state) => {
      ownChannel(state, teamId);
      return { events: [{ type: CHANNEL_DELETED, data: { channel_id: channelId, team_id: teamId, deleted_at: new Date().toISOString() } }], result: undefined };
    });
    await settle(this.platform, written);
  }
}

@CommandHandler(RotateChannelSecret)
export class RotateChannelSecretHandler implements ICommandHandler<RotateChannelSecret> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, channelId, context }: RotateChannelSecret) {
    const now = Date.now();
    const secret = newWebhookSecret();
    const previous_expires_at = new Date(now + PREVIOUS_SECRET_GRACE_MS).toISOString();
    const written = await runStreamCommand(this.platform.events, channelStream(channelId), channelAggregate, context, (state) => {
      const channel = ownChannel(state, teamId);
      if (channel.kind !== 'webhook') throw new ChannelHasNoSecretError();
      const data = { channel_id: channelId, team_id: teamId, secret, previous_expires_at, rotated_at: new Date(now).toISOString() };
      return { events: [{ type: CHANNEL_SECRET_ROTATED, data }], result: undefined };
    });
    await settle(this.platform, written, false);
    return { channel: after(written.state, written.appended), secret: written.replayed ? null : secret };
  }
}

@CommandHandler(TestChannel)
export class TestChannelHandler implements ICommandHandler<TestChannel> {
  constructor(@Inject(PLATFORM) private readonly platform: Platform) {}

  async execute({ teamId, channelId, context }: TestChannel) {
    const stream = channelStream(channelId);
    const { append } = await runStreamCommand(this.platform.events, stream, channelAggregate, context, (state) => {
      ownChannel(state, teamId);
      return { events: [{ type: CHANNEL_TEST_REQUESTED, data: { channel_id: channelId, team_id: teamId, requested_at: new Date().toISOString() } }], result: undefined };
    });
    const [event] = await this.platform.events.readStream(stream, { fromRevision: append!.nextExpectedRevision, maxCount: 1 });
    return { delivery_id: deliveryId(event, channelId) };
  }
}

export const CHANNEL_COMMAND_HANDLERS = [CreateChannelHandler, UpdateChannelHandler, DeleteChannelHandler, RotateChannelSecretHandler, TestChannelHandler];
