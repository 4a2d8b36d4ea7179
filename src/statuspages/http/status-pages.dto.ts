import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsInt, IsString, Matches, Max, MaxLength, Min, MinLength, ValidateIf, ValidateNested } from 'class-validator';
import { LIMITS, SLUG_PATTERN } from '../domain/status-page.js';

/** May be omitted; when present, null is not accepted. */
const Optional = () => ValidateIf((_object, value) => value !== undefined);
/** May be omitted or null. */
const Nullable = () => ValidateIf((_object, value) => value !== undefined && value !== null);

const PUBLISH_AUTOMATIC =
  'Show automatic incidents of the page\'s endpoints at once, with a generated first update ("Outage detected at 09:13 UTC; investigating."), instead of waiting for a checkpoint.';
const SLUG_MESSAGE = 'must be 1 to 64 of a-z, 0-9 and -';

export class StatusPageComponentBody {
  @ApiProperty({ description: 'An endpoint of this team (another team\'s: 400 validation_failed, code not_found).', minimum: 1 })
  @IsInt()
  @Min(1)
  endpoint_id!: number;

  @ApiPropertyOptional({ type: String, nullable: true, minLength: 1, maxLength: 200, description: 'Display name; default the endpoint\'s name.' })
  @Nullable()
  @IsString()
  @MinLength(LIMITS.component_name.min)
  @MaxLength(LIMITS.component_name.max)
  name?: string | null;
}

const Components = () => (target: object, key: string | symbol) => {
  IsArray()(target, key);
  ArrayMaxSize(LIMITS.components.max)(target, key);
  ArrayUnique((c: StatusPageComponentBody) => c?.endpoint_id, { message: 'must not name an endpoint twice' })(target, key);
  ValidateNested({ each: true })(target, key);
  Type(() => StatusPageComponentBody)(target, key);
};

export class CreateStatusPageBody {
  @ApiProperty({ pattern: SLUG_PATTERN.source, description: 'Unique across the service (409 slug_taken); the page is served at /status/{slug}.' })
  @IsString()
  @Matches(SLUG_PATTERN, { message: SLUG_MESSAGE })
  slug!: string;

  @ApiProperty({ minLength: 1, maxLength: 200 }) @IsString() @MinLength(LIMITS.title.min) @MaxLength(LIMITS.title.max) title!: string;
  @ApiPropertyOptional({ maxLength: 2000, default: '' }) @Optional() @IsString() @MaxLength(LIMITS.description.max) description?: string;
  @ApiProperty({ type: [StatusPageComponentBody], maxItems: 100, description: 'In display order.' }) @Components() components!: StatusPageComponentBody[];
  @ApiPropertyOptional({ minimum: 1, maximum: 90, default: 90, description: 'Days of daily uptime shown per component.' })
  @Optional()
  @IsInt()
  @Min(LIMITS.history_days.min)
  @Max(LIMITS.history_days.max)
  history_days?: number;

  @ApiPropertyOptional({ default: false, description: PUBLISH_AUTOMATIC })
  @Optional()
  @IsBoolean()
  publish_automatic_incidents?: boolean;
}

export class UpdateStatusPageBody {
  @ApiPropertyOptional({ pattern: SLUG_PATTERN.source }) @Optional() @IsString() @Matches(SLUG_PATTERN, { message: SLUG_MESSAGE }) slug?: string;
  @ApiPropertyOptional({ minLength: 1, maxLength: 200 }) @Optional() @IsString() @MinLength(LIMITS.title.min) @MaxLength(LIMITS.title.max) title?: string;
  @ApiPropertyOptional({ maxLength: 2000 }) @Optional() @IsString() @MaxLength(LIMITS.description.max) description?: string;
  @ApiPropertyOptional({ type: [StatusPageComponentBody], maxItems: 100 }) @Optional() @Components() components?: StatusPageComponentBody[];
  @ApiPropertyOptional({ minimum: 1, maximum: 90 }) @Optional() @IsInt() @Min(LIMITS.history_days.min) @Max(LIMITS.history_days.max) history_days?: number;
  @ApiPropertyOptional({ description: PUBLISH_AUTOMATIC }) @Optional() @IsBoolean() publish_automatic_incidents?: boolean;
}

export class StatusPageComponentDto {
  @ApiProperty() endpoint_id!: number;
  @ApiProperty({ type: String, nullable: true }) name!: string | null;
}

export class StatusPageDto {
  @ApiProperty() id!: number;
  @ApiProperty() team_id!: number;
  @ApiProperty() slug!: string;
  @ApiProperty() title!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ type: [StatusPageComponentDto] }) components!: StatusPageComponentDto[];
  @ApiProperty() history_days!: number;
  @ApiProperty({ description: PUBLISH_AUTOMATIC }) publish_automatic_incidents!: boolean;
  @ApiProperty({ description: 'The public page: PUBLIC_BASE_URL + /status/{slug}.' }) url!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}
