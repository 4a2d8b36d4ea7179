import { Module } from '@nestjs/common';
import { CHANNEL_COMMAND_HANDLERS } from './application/channel.commands.js';
import { ChannelReads } from './reactors/notifications/queries.js';
import { NotificationsWorkers } from './application/notifications-workers.js';
import { NotificationChannelsController } from './http/channels.controller.js';

/** The notifications context's Nest wiring: channel admin routes, command handlers, the delivery worker. */
@Module({
  controllers: [NotificationChannelsController],
  providers: [...CHANNEL_COMMAND_HANDLERS, ChannelReads, NotificationsWorkers],
})
export class NotificationsModule {}
