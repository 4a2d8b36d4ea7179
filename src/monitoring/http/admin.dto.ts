import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';
import { IsRfc3339 } from '../../platform/http/validators.js';
import { LIMITS } from '../domain/endpoint.js';
import { BODY_MATCH_MODES, LATENCY_DETECTION_MODES, PROBE_METHODS } from '../domain/endpoint-configuration.js';
import { parseProbeUrl } from '../domain/url.js';

/** May be omitted; when present, null is not accepted. */
const Optional = () => ValidateIf((_object, value) => value !== undefined);
/** May be omitted or null. */
const Nullable = () => ValidateIf((_object, value) => value !== undefined && value !== null);

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
export const MAX_HEADERS = 50;

function IsProbeUrl(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isUrl', validator: { validate: (value) => typeof value === 'string' && parseProbeUrl(value) !== null, defaultMessage: () => 'must be an absolute http or https URL' } }, options);
}

function IsHeaderMap(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isHeaderMap',
      validator: {
        validate: (value) =>
          typeof value === 'object' &&
          value !== null &&
          !Array.isArray(value) &&
          Object.keys(value).length <= MAX_HEADERS &&
          Object.entries(value).every(([name, v]) => HEADER_NAME.test(name) && typeof v === 'string' && v.length <= 8192 && !/[\r\n\0]/.test(v)),
        defaultMessage: () => `must be an object of at most ${MAX_HEADERS} header names (tokens) to string values without line breaks`,
      },
    },
    options,
  );
}

const Range = (range: { min: number; max: number }) => (target: object, key: string | symbol) => {
  IsInt()(target, key);
  Min(range.min)(target, key);
  Max(range.max)(target, key);
};

export class CreateProjectBody {
  @IsString() @MinLength(1) @MaxLength(200) name!: string;
  @Optional() @IsString() @MaxLength(2000) description?: string;
}

export class UpdateProjectBody {
  @Optional() @IsString() @MinLength(1) @MaxLength(200) name?: string;
  @Optional() @IsString() @MaxLength(2000) description?: string;
}

/** Endpoint fields shared by create and update (all optional here). */
class EndpointFields {
  @Optional() @IsString() @MaxLength(2000) description?: string;
  @Optional() @IsIn(PROBE_METHODS) method?: (typeof PROBE_METHODS)[number];
  @Optional() @IsHeaderMap() headers?: Record<string, string>;
  @Nullable() @IsString() @MaxLength(65_536) request_payload?: string | null;
  @Optional() @Range(LIMITS.expected_status) expected_status?: number;
  @Optional() @IsIn(BODY_MATCH_MODES) body_match_mode?: (typeof BODY_MATCH_MODES)[number];
  @Nullable() @IsString() @MaxLength(65_536) expected_body?: string | null;
  @Optional() @Range(LIMITS.interval_seconds) interval_seconds?: number;
  @Optional() @Range(LIMITS.timeout_seconds) timeout_seconds?: number;
  @Optional() @IsIn(LATENCY_DETECTION_MODES) latency_detection_mode?: (typeof LATENCY_DETECTION_MODES)[number];
  @Nullable() @Range(LIMITS.latency_fixed_threshold_ms) latency_fixed_threshold_ms?: number | null;
  @Optional() @Range(LIMITS.latency_sensitivity) latency_sensitivity?: number;
  @Optional() @Range(LIMITS.latency_min_samples) latency_min_samples?: number;
  @Optional() @Range(LIMITS.latency_trigger_count) latency_trigger_count?: number;
  @Optional() @Range(LIMITS.latency_trigger_window) latency_trigger_window?: number;
  @Optional() @Range(LIMITS.latency_recovery_count) latency_recovery_count?: number;
  @Optional() @Range(LIMITS.latency_min_increase_ms) latency_min_increase_ms?: number;
  @Optional() @Range(LIMITS.latency_min_increase_percent) latency_min_increase_percent?: number;
}

export class CreateEndpointBody extends EndpointFields {
  @IsInt() @Min(1) project_id!: number;
  @IsString() @MinLength(1) @MaxLength(200) name!: string;
  @IsString() @MaxLength(2048) @IsProbeUrl() url!: string;
}

export class UpdateEndpointBody extends EndpointFields {
  @Optional() @IsInt() @Min(1) project_id?: number;
  @Optional() @IsString() @MinLength(1) @MaxLength(200) name?: string;
  @Optional() @IsString() @MaxLength(2048) @IsProbeUrl() url?: string;
  @Optional() @IsBoolean() enabled?: boolean;
  @Nullable() @IsRfc3339() maintenance_until?: string | null;
}

export class CreateMaintenanceWindowBody {
  @Nullable() @IsInt() @Min(1) project_id?: number | null;
  @Nullable() @IsInt() @Min(1) endpoint_id?: number | null;
  @IsRfc3339() starts_at!: string;
  @IsRfc3339() ends_at!: string;
  @Nullable() @IsString() @MaxLength(2000) reason?: string | null;
}

export const MAX_IMPORTED_CHECKS = 10_000;

export class ImportedCheckBody {
  @IsRfc3339() checked_at!: string;
  @IsBoolean() success!: boolean;
  @IsInt() @Min(0) @Max(599) status_code!: number;
  @IsInt() @Min(0) latency_ms!: number;
  @Optional() @IsInt() @Min(0) time_to_first_byte_ms?: number;
  @Optional() @IsInt() @Min(0) duration_ms?: number;
  @Optional() @IsIn(['scheduled', 'manual']) source?: 'scheduled' | 'manual';
  @Nullable() @IsString() @MaxLength(2000) failure_reason?: string | null;
  @Optional() @IsBoolean() body_complete?: boolean;
}

export class ImportChecksBody {
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_IMPORTED_CHECKS)
  @ValidateNested({ each: true })
  @Type(() => ImportedCheckBody)
  checks!: ImportedCheckBody[];
}
