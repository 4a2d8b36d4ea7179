import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Matches,
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
import { INCIDENT_GROUPING_LIMITS } from '../domain/project.js';
import { BODY_MATCH_MODES, LATENCY_DETECTION_MODES, MAX_REGIONS, PROBE_METHODS } from '../domain/endpoint-configuration.js';
import { REGION_NAME } from '../../platform/config/region.js';
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

/** Documents an integer range field with its default. */
const RangeDoc = (range: { min: number; max: number }, defaultValue: number, description?: string) =>
  ApiPropertyOptional({ type: 'integer', minimum: range.min, maximum: range.max, default: defaultValue, description });

const GROUPING_DOC = 'When positive, an automatic incident about to open for an endpoint of the project joins the project\'s open automatic incident of the same type opened within this many seconds; 0 turns grouping off.';

export class CreateProjectBody {
  @ApiProperty({ type: String, minLength: 1, maxLength: 200 }) @IsString() @MinLength(1) @MaxLength(200) name!: string;
  @ApiPropertyOptional({ type: String, maxLength: 2000, default: '' }) @Optional() @IsString() @MaxLength(2000) description?: string;
  @RangeDoc(INCIDENT_GROUPING_LIMITS, 0, GROUPING_DOC) @Optional() @Range(INCIDENT_GROUPING_LIMITS) incident_grouping_seconds?: number;
}

/** At least one field. */
export class UpdateProjectBody {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: 200 }) @Optional() @IsString() @MinLength(1) @MaxLength(200) name?: string;
  @ApiPropertyOptional({ type: String, maxLength: 2000 }) @Optional() @IsString() @MaxLength(2000) description?: string;
  @RangeDoc(INCIDENT_GROUPING_LIMITS, 0, GROUPING_DOC) @Optional() @Range(INCIDENT_GROUPING_LIMITS) incident_grouping_seconds?: number;
}

/** Endpoint fields shared by create and update (all optional here). */
class EndpointFields {
  @ApiPropertyOptional({ type: String, maxLength: 2000, default: '' }) @Optional() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({ enum: PROBE_METHODS, default: 'GET' }) @Optional() @IsIn(PROBE_METHODS) method?: (typeof PROBE_METHODS)[number];
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string', maxLength: 8192 }, maxProperties: MAX_HEADERS, description: 'Header names (HTTP tokens) to values; values are hidden in every answer.' })
  @Optional() @IsHeaderMap() headers?: Record<string, string>;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 65_536, description: 'Hidden in every answer.' }) @Nullable() @IsString() @MaxLength(65_536) request_payload?: string | null;
  @RangeDoc(LIMITS.expected_status, 200) @Optional() @Range(LIMITS.expected_status) expected_status?: number;
  @ApiPropertyOptional({ enum: BODY_MATCH_MODES, default: 'none' }) @Optional() @IsIn(BODY_MATCH_MODES) body_match_mode?: (typeof BODY_MATCH_MODES)[number];
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 65_536, description: 'Required unless body_match_mode is none; hidden in every answer.' }) @Nullable() @IsString() @MaxLength(65_536) expected_body?: string | null;
  @RangeDoc(LIMITS.interval_seconds, 60) @Optional() @Range(LIMITS.interval_seconds) interval_seconds?: number;
  @RangeDoc(LIMITS.timeout_seconds, 10, 'Not above interval_seconds.') @Optional() @Range(LIMITS.timeout_seconds) timeout_seconds?: number;
  @ApiPropertyOptional({ enum: LATENCY_DETECTION_MODES, default: 'auto' }) @Optional() @IsIn(LATENCY_DETECTION_MODES) latency_detection_mode?: (typeof LATENCY_DETECTION_MODES)[number];
  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: LIMITS.latency_fixed_threshold_ms.min, maximum: LIMITS.latency_fixed_threshold_ms.max, description: 'Required when the mode is fixed, null otherwise.' })
  @Nullable() @Range(LIMITS.latency_fixed_threshold_ms) latency_fixed_threshold_ms?: number | null;
  @RangeDoc(LIMITS.latency_sensitivity, 3) @Optional() @Range(LIMITS.latency_sensitivity) latency_sensitivity?: number;
  @RangeDoc(LIMITS.latency_min_samples, 20) @Optional() @Range(LIMITS.latency_min_samples) latency_min_samples?: number;
  @RangeDoc(LIMITS.latency_trigger_count, 3, 'Not above latency_trigger_window.') @Optional() @Range(LIMITS.latency_trigger_count) latency_trigger_count?: number;
  @RangeDoc(LIMITS.latency_trigger_window, 5) @Optional() @Range(LIMITS.latency_trigger_window) latency_trigger_window?: number;
  @RangeDoc(LIMITS.latency_recovery_count, 3) @Optional() @Range(LIMITS.latency_recovery_count) latency_recovery_count?: number;
  @Optional() @Range(LIMITS.latency_min_increase_ms) latency_min_increase_ms?: number;
  @Optional() @Range(LIMITS.latency_min_increase_percent) latency_min_increase_percent?: number;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'integer', minimum: 1 },
    maxItems: LIMITS.depends_on.max,
    default: [],
    description: 'Endpoints of the same team this one depends on (not itself, no cycles). While any of them has its availability signal triggered, failing checks of this one are recorded with alert_suppressed true and open no incident.',
  })
  @Optional() @IsArray() @ArrayMaxSize(LIMITS.depends_on.max) @IsInt({ each: true }) @Min(1, { each: true }) depends_on?: number[];
  @RangeDoc(LIMITS.flap_threshold, 6, 'Availability changes of state within flap_window_seconds that make the endpoint flapping.') @Optional() @Range(LIMITS.flap_threshold) flap_threshold?: number;
  @RangeDoc(LIMITS.flap_window_seconds, 3_600) @Optional() @Range(LIMITS.flap_window_seconds) flap_window_seconds?: number;
  @RangeDoc(LIMITS.certificate_expiry_days, 14, 'https: the certificate signal triggers (a warning incident of type certificate_expiry opens) when the server certificate expires within this many days; 0 turns it off.')
  @Optional() @Range(LIMITS.certificate_expiry_days) certificate_expiry_days?: number;
  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', pattern: REGION_NAME.source },
    maxItems: MAX_REGIONS,
    uniqueItems: true,
    default: [],
    description: 'Probe regions (distinct names of 1-32 a-z, 0-9, -). Each slot is probed once per region; empty: the region of whichever prober takes the job.',
  })
  @Optional() @IsArray() @ArrayMaxSize(MAX_REGIONS) @ArrayUnique() @Matches(REGION_NAME, { each: true, message: 'each region must be 1 to 32 characters of a-z, 0-9 and -' }) regions?: string[];
  @ApiPropertyOptional({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_REGIONS,
    description: 'Regions that must fail for the endpoint to be down: 1 to the number of regions; default (and null) ceil(regions / 2); null when regions is empty. Setting regions without it resets it to the default.',
  })
  @Nullable() @IsInt() @Min(1) @Max(MAX_REGIONS) region_quorum?: number | null;
}

export class CreateEndpointBody extends EndpointFields {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'A project of the team.' }) @IsInt() @Min(1) project_id!: number;
  @ApiProperty({ type: String, minLength: 1, maxLength: 200 }) @IsString() @MinLength(1) @MaxLength(200) name!: string;
  @ApiProperty({ type: String, maxLength: 2048, description: 'Absolute http or https URL; its query and user-info are hidden in every answer.' }) @IsString() @MaxLength(2048) @IsProbeUrl() url!: string;
}

/** At least one field. */
export class UpdateEndpointBody extends EndpointFields {
  @ApiPropertyOptional({ type: 'integer', minimum: 1 }) @Optional() @IsInt() @Min(1) project_id?: number;
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: 200 }) @Optional() @IsString() @MinLength(1) @MaxLength(200) name?: string;
  @ApiPropertyOptional({ type: String, maxLength: 2048 }) @Optional() @IsString() @MaxLength(2048) @IsProbeUrl() url?: string;
  @ApiPropertyOptional({ type: Boolean, description: 'Enabling needs a verified destination (409 destination_not_verified).' }) @Optional() @IsBoolean() enabled?: boolean;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'Legacy maintenance: covered while now is before it.' }) @Nullable() @IsRfc3339() maintenance_until?: string | null;
}

/** Neither id: team-wide. */
export class CreateMaintenanceWindowBody {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, nullable: true }) @Nullable() @IsInt() @Min(1) project_id?: number | null;
  @ApiPropertyOptional({ type: 'integer', minimum: 1, nullable: true, description: 'With project_id, an endpoint of that project.' }) @Nullable() @IsInt() @Min(1) endpoint_id?: number | null;
  @ApiProperty({ type: String, format: 'date-time' }) @IsRfc3339() starts_at!: string;
  @ApiProperty({ type: String, format: 'date-time', description: 'After starts_at; the window covers starts_at <= t < ends_at.' }) @IsRfc3339() ends_at!: string;
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 }) @Nullable() @IsString() @MaxLength(2000) reason?: string | null;
}

export const MAX_IMPORTED_CHECKS = 10_000;

export class ImportedCheckBody {
  @ApiProperty({ type: String, format: 'date-time' }) @IsRfc3339() checked_at!: string;
  @ApiProperty({ type: Boolean }) @IsBoolean() success!: boolean;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 599, description: '0: no response.' }) @IsInt() @Min(0) @Max(599) status_code!: number;
  @ApiProperty({ type: 'integer', minimum: 0 }) @IsInt() @Min(0) latency_ms!: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Default latency_ms.' }) @Optional() @IsInt() @Min(0) time_to_first_byte_ms?: number;
  @ApiPropertyOptional({ type: 'integer', minimum: 0, description: 'Default latency_ms.' }) @Optional() @IsInt() @Min(0) duration_ms?: number;
  @ApiPropertyOptional({ enum: ['scheduled', 'manual'], default: 'scheduled' }) @Optional() @IsIn(['scheduled', 'manual']) source?: 'scheduled' | 'manual';
  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 2000 }) @Nullable() @IsString() @MaxLength(2000) failure_reason?: string | null;
  @ApiPropertyOptional({ type: Boolean, default: true }) @Optional() @IsBoolean() body_complete?: boolean;
  @ApiPropertyOptional({ type: String, pattern: REGION_NAME.source, default: 'local', description: 'The probe region the check was taken from.' })
  @Optional()
  @IsString()
  @Matches(REGION_NAME, { message: 'region must be 1 to 32 characters of a-z, 0-9 and -' })
  region?: string;
}

export class ImportChecksBody {
  @ApiProperty({ type: [ImportedCheckBody], minItems: 1, maxItems: MAX_IMPORTED_CHECKS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_IMPORTED_CHECKS)
  @ValidateNested({ each: true })
  @Type(() => ImportedCheckBody)
  checks!: ImportedCheckBody[];
}
