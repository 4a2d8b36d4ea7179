import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsEmail,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import type { FieldError } from '../../platform/http/problem.js';
import { parseProbeUrl } from '../../monitoring/domain/url.js';
import { CHANNEL_KINDS, MAX_EMAIL_RECIPIENTS, type ChannelKind } from '../domain/channel.js';
import { NOTIFICATION_TYPES, type NotificationType } from '../domain/notification-types.js';

const Optional = () => ValidateIf((_object, value) => value !== undefined);
const Nullable = () => ValidateIf((_object, value) => value !== undefined && value !== null);
const SUBSCRIBABLE = NOTIFICATION_TYPES.filter((t) => t !== 'ping');

const IsHttpUrl = () =>
  ValidateBy({ name: 'isUrl', validator: { validate: (v) => typeof v === 'string' && v.length <= 2048 && parseProbeUrl(v) !== null, defaultMessage: () => 'must be an absolute http or https URL' } });

export class ChannelConfigBody {
  @ApiPropertyOptional({ description: 'webhook, slack, discord: where to POST (a hidden value); pagerduty: optional Events API URL.' })
  @Optional() @IsHttpUrl() url?: string;
  @ApiPropertyOptional({ description: `email: 1 to ${MAX_EMAIL_RECIPIENTS} addresses.`, type: [String] })
  @Optional() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(MAX_EMAIL_RECIPIENTS) @ArrayUnique() @IsEmail({}, { each: true }) to?: string[];
  @ApiPropertyOptional({ description: 'pagerduty: the integration (routing) key, a hidden value.' })
  @Optional() @IsString() @MinLength(1) @MaxLength(256) routing_key?: string;
}

class ChannelFilterFields {
  @ApiPropertyOptional({ enum: SUBSCRIBABLE, isArray: true, nullable: true, description: 'Types to deliver; omitted or null: all.' })
  @Nullable() @IsArray() @ArrayMinSize(1) @ArrayUnique() @IsIn(SUBSCRIBABLE, { each: true }) events?: NotificationType[] | null;
  @ApiPropertyOptional({ type: [Number], nullable: true, description: "Projects to deliver for; omitted or null: all of the team's." })
  @Nullable() @IsArray() @ArrayMinSize(1) @ArrayMaxSize(1000) @ArrayUnique() @IsInt({ each: true }) @Min(1, { each: true }) project_ids?: number[] | null;
  @ApiPropertyOptional({ default: true })
  @Optional() @IsBoolean() enabled?: boolean;
}

export class CreateChannelBody extends ChannelFilterFields {
  @ApiProperty() @IsString() @MinLength(1) @MaxLength(200) name!: string;
  @ApiProperty({ enum: CHANNEL_KINDS }) @IsIn(CHANNEL_KINDS) kind!: ChannelKind;
  @ApiProperty({ type: ChannelConfigBody }) @IsObject() @ValidateNested() @Type(() => ChannelConfigBody) config!: ChannelConfigBody;
}

export class UpdateChannelBody extends ChannelFilterFields {
  @ApiPropertyOptional() @Optional() @IsString() @MinLength(1) @MaxLength(200) name?: string;
  @ApiPropertyOptional({ type: ChannelConfigBody, description: 'Fields given replace the stored ones.' })
  @Optional() @IsObject() @ValidateNested() @Type(() => ChannelConfigBody) config?: ChannelConfigBody;
}

const NEEDS: Record<ChannelKind, Array<keyof ChannelConfigBody>> = {
  webhook: ['url'],
  slack: ['url'],
  discord: ['url'],
  email: ['to'],
  pagerduty: ['routing_key'],
};
const ALLOWS: Record<ChannelKind, Array<keyof ChannelConfigBody>> = { ...NEEDS, pagerduty: ['routing_key', 'url'] };

/** The config fields each kind requires (on create) and accepts. */
export function configErrors(kind: unknown, config: unknown, creating: boolean): FieldError[] {
  if (typeof kind !== 'string' || !(CHANNEL_KINDS as readonly string[]).includes(kind)) return [];
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return [];
  const given = config as Record<string, unknown>;
  const errors: FieldError[] = [];
  for (const field of creating ? NEEDS[kind as ChannelKind] : []) {
    if (given[field] === undefined) errors.push({ field: `config.${field}`, code: 'required', message: `is required for ${kind} channels` });
  }
  for (const field of Object.keys(given)) {
    const known = ['url', 'to', 'routing_key'].includes(field);
    if (known && !ALLOWS[kind as ChannelKind].includes(field as keyof ChannelConfigBody)) {
      errors.push({ field: `config.${field}`, code: 'unknown_field', message: `does not apply to ${kind} channels` });
    }
  }
  return errors;
}
