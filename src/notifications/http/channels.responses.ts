/** Response shapes of the notification channel routes, for the OpenAPI document. */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DataResponse, ListResponse } from '../../platform/http/envelope.dto.js';
import { CHANNEL_KINDS } from '../domain/channel.js';
import { NOTIFICATION_TYPES } from '../domain/notification-types.js';

export class ChannelDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) id!: number;
  @ApiProperty({ type: 'integer', minimum: 1 }) team_id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ enum: CHANNEL_KINDS }) kind!: string;
  @ApiProperty({ enum: NOTIFICATION_TYPES, isArray: true, nullable: true, description: 'null: every type.' }) events!: string[] | null;
  @ApiProperty({ type: 'integer', isArray: true, nullable: true, description: "null: every project of the team." }) project_ids!: number[] | null;
  @ApiProperty() enabled!: boolean;
  @ApiProperty({ type: String, nullable: true, description: 'Why the service disabled it, e.g. `status: 410 Gone`.' }) disabled_reason!: string | null;
  @ApiProperty({ description: 'The URL is a hidden value: only this and `host` are shown.' }) url_configured!: boolean;
  @ApiProperty({ type: String, nullable: true }) host!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'email: `to`; pagerduty: `routing_key_configured`; otherwise empty.' }) config!: Record<string, unknown>;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'webhook: until when the previous secret still signs.' }) secret_rotation_ends_at?: string | null;
  @ApiProperty({ type: String, format: 'date-time' }) created_at!: string;
  @ApiProperty({ type: String, format: 'date-time' }) updated_at!: string;
}

export class ChannelWithSecretDto extends ChannelDto {
  @ApiPropertyOptional({ type: String, nullable: true, description: 'webhook: `whsec_` + base64 of 32 bytes, shown once; null on a replay.' }) secret?: string | null;
}

export class ChannelResponse extends DataResponse(ChannelDto) {}

export class ChannelWithSecretResponse extends DataResponse(ChannelWithSecretDto) {}

export class ChannelListResponse extends ListResponse(ChannelDto) {}

export class DeliveryDto {
  @ApiProperty({ description: 'The webhook-id: the same on every attempt.' }) id!: string;
  @ApiProperty({ format: 'uuid' }) event_id!: string;
  @ApiProperty({ enum: NOTIFICATION_TYPES }) type!: string;
  @ApiProperty({ enum: ['pending', 'delivered', 'failed'] }) state!: string;
  @ApiProperty({ type: 'integer', minimum: 0 }) attempts!: number;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null when no answer came.' }) last_status_code!: number | null;
  @ApiProperty({ type: String, nullable: true }) last_error!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) next_attempt_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) delivered_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time' }) created_at!: string;
}

export class DeliveryListResponse extends ListResponse(DeliveryDto) {}

export class TestAcceptedDto {
  @ApiProperty() delivery_id!: string;
  @ApiProperty({ enum: ['ping'] }) type!: string;
}

export class TestAcceptedResponse extends DataResponse(TestAcceptedDto) {}
