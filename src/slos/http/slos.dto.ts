/**
 * SLO bodies and answers: validated at the edge by `validateBody` (unknown fields refused,
 * nothing coerced, every violation listed) and documented in the OpenAPI documents by the same
 * classes. Whether the endpoints and the project are the team's is the command's lookup (400
 * `not_found` for each).
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsInt, IsNumber, Max, Min, ValidateBy, ValidateIf } from 'class-validator';
import type { FieldError } from '../../platform/http/problem.js';
import type { BodyRules } from '../../platform/http/validation.js';
import { idListErrors, oneOfRequired, Optional, PositiveId, Text } from '../../platform/http/validators.js';
import { DataResponse, ListResponse } from '../../platform/http/envelope.dto.js';
import { BURN_SEVERITIES, BURN_WINDOWS } from '../domain/events.js';
import { LIMITS, validObjective } from '../domain/slo.js';

/** May be omitted or null. */
const Nullable = () => ValidateIf((_object, value) => value !== undefined && value !== null);

const positiveId = { type: 'integer', minimum: 1 } as const;

const EndpointIds = () => (target: object, key: string | symbol) => {
  IsArray()(target, key);
  ValidateBy({ name: 'arrayMinSize', constraints: [LIMITS.endpoint_ids.min], validator: { validate: (v) => !Array.isArray(v) || v.length >= LIMITS.endpoint_ids.min, defaultMessage: () => 'must name at least 1 endpoint' } })(target, key);
  ValidateBy({ name: 'arrayMaxSize', constraints: [LIMITS.endpoint_ids.max], validator: { validate: (v) => !Array.isArray(v) || v.length <= LIMITS.endpoint_ids.max, defaultMessage: () => `may name at most ${LIMITS.endpoint_ids.max} endpoints` } })(target, key);
};

const Objective = () => (target: object, key: string | symbol) => {
  IsNumber({ allowNaN: false, allowInfinity: false })(target, key);
  ValidateBy({
    name: 'max',
    validator: { validate: (v) => typeof v !== 'number' || validObjective(v), defaultMessage: () => 'must be above 50 and below 100, with at most 3 decimals' },
  })(target, key);
};

const WindowDays = () => (target: object, key: string | symbol) => {
  IsInt()(target, key);
  Min(LIMITS.window_days.min)(target, key);
  Max(LIMITS.window_days.max)(target, key);
};

const LatencyThreshold = () => (target: object, key: string | symbol) => {
  Nullable()(target, key);
  IsInt()(target, key);
  Min(LIMITS.latency_threshold_ms.min)(target, key);
  Max(LIMITS.latency_threshold_ms.max)(target, key);
};

const ENDPOINT_IDS = 'Endpoints of this team, each once (1-500). Exactly one of endpoint_ids and project_id.';
const PROJECT_ID = 'A project of this team: the SLO counts the endpoints it holds now (followed as they move). Exactly one of endpoint_ids and project_id.';
const OBJECTIVE = 'Share of good checks aimed for: above 50 and below 100, at most 3 decimals (99.95).';
const LATENCY = 'With a threshold, a check is good only when it succeeded within it. null: success alone.';

/** Both given: the rule across the two fields. */
function selectionRule(body: { endpoint_ids?: unknown; project_id?: unknown }): FieldError[] {
  if (body.endpoint_ids !== undefined && body.project_id !== undefined) {
    return [{ field: 'project_id', code: 'conflict', message: 'give either endpoint_ids or project_id, not both' }];
  }
  return [];
}

/**
 * Neither given (create): judged on the body as sent, since a field refused by the shape check
 * (501 ids) is left out of what the DTO's own rules see, and is still given.
 */
export function selectionRequired(body: unknown): FieldError[] {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return [];
  const sent = body as Record<string, unknown>;
  if (sent.endpoint_ids !== undefined || sent.project_id !== undefined) return [];
  return [{ field: 'endpoint_ids', code: 'required', message: 'one of endpoint_ids and project_id is required' }];
}

export class CreateSloBody implements BodyRules {
  @ApiProperty({ type: String, minLength: LIMITS.name.min, maxLength: LIMITS.name.max })
  @Text(LIMITS.name.min, LIMITS.name.max)
  name!: string;

  @ApiPropertyOptional({ type: 'array', items: positiveId, minItems: 1, maxItems: LIMITS.endpoint_ids.max, uniqueItems: true, description: ENDPOINT_IDS })
  @Optional()
  @EndpointIds()
  endpoint_ids?: number[];

  @ApiPropertyOptional({ ...positiveId, description: PROJECT_ID })
  @Optional()
  @PositiveId()
  project_id?: number;

  @ApiProperty({ type: Number, exclusiveMinimum: 50, exclusiveMaximum: 100, multipleOf: 0.001, description: OBJECTIVE } as never)
  @Objective()
  objective_percent!: number;

  @ApiPropertyOptional({ type: 'integer', minimum: LIMITS.window_days.min, maximum: LIMITS.window_days.max, default: LIMITS.window_days.default, description: 'Rolling window, in days, ending now.' })
  @Optional()
  @WindowDays()
  window_days?: number;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: LIMITS.latency_threshold_ms.min, maximum: LIMITS.latency_threshold_ms.max, default: null, description: LATENCY })
  @LatencyThreshold()
  latency_threshold_ms?: number | null;

  bodyRules(): FieldError[] {
    return [...idListErrors('endpoint_ids', this.endpoint_ids, LIMITS.endpoint_ids.max), ...selectionRule(this)];
  }
}

/** PATCH: at least one field; giving endpoint_ids or project_id replaces the selection. */
export class UpdateSloBody implements BodyRules {
  @ApiPropertyOptional({ type: String, minLength: LIMITS.name.min, maxLength: LIMITS.name.max })
  @Optional()
  @Text(LIMITS.name.min, LIMITS.name.max)
  name?: string;

  @ApiPropertyOptional({ type: 'array', items: positiveId, minItems: 1, maxItems: LIMITS.endpoint_ids.max, uniqueItems: true, description: `${ENDPOINT_IDS} Replaces project_id.` })
  @Optional()
  @EndpointIds()
  endpoint_ids?: number[];

  @ApiPropertyOptional({ ...positiveId, description: `${PROJECT_ID} Replaces endpoint_ids.` })
  @Optional()
  @PositiveId()
  project_id?: number;

  @ApiPropertyOptional({ type: Number, exclusiveMinimum: 50, exclusiveMaximum: 100, multipleOf: 0.001, description: OBJECTIVE } as never)
  @Optional()
  @Objective()
  objective_percent?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: LIMITS.window_days.min, maximum: LIMITS.window_days.max })
  @Optional()
  @WindowDays()
  window_days?: number;

  @ApiPropertyOptional({ type: 'integer', nullable: true, minimum: LIMITS.latency_threshold_ms.min, maximum: LIMITS.latency_threshold_ms.max, description: LATENCY })
  @LatencyThreshold()
  latency_threshold_ms?: number | null;

  static readonly FIELDS = ['name', 'endpoint_ids', 'project_id', 'objective_percent', 'window_days', 'latency_threshold_ms'] as const;

  bodyRules(): FieldError[] {
    return [...idListErrors('endpoint_ids', this.endpoint_ids, LIMITS.endpoint_ids.max), ...selectionRule(this), ...oneOfRequired(this, UpdateSloBody.FIELDS)];
  }
}

class SloWindowDto {
  @ApiProperty({ format: 'date-time', description: 'to - window_days.' }) from!: string;
  @ApiProperty({ format: 'date-time', description: 'Now.' }) to!: string;
}

class ErrorBudgetDto {
  @ApiProperty({ type: Number, nullable: true, description: 'total x (1 - objective/100), 3 decimals; null without checks.' }) allowed_bad!: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'total - good; null without checks.' }) bad!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: '100 x (1 - bad / allowed_bad), 3 decimals, negative once exceeded; null without checks.' }) remaining_percent!: number | null;
}

class BurnRatesDto {
  @ApiProperty({ name: '5m', type: Number, nullable: true }) '5m'!: number | null;
  @ApiProperty({ name: '30m', type: Number, nullable: true }) '30m'!: number | null;
  @ApiProperty({ name: '1h', type: Number, nullable: true }) '1h'!: number | null;
  @ApiProperty({ name: '6h', type: Number, nullable: true }) '6h'!: number | null;
  @ApiProperty({ name: '24h', type: Number, nullable: true }) '24h'!: number | null;
  @ApiProperty({ name: '72h', type: Number, nullable: true }) '72h'!: number | null;
}

class SloAlertDto {
  @ApiProperty({ enum: BURN_SEVERITIES, description: 'page: 1h and 5m burn rates above 14.4; ticket: 6h and 30m above 6.' }) severity!: string;
  @ApiProperty({ format: 'date-time' }) since!: string;
}

export class SloDto {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: 'integer' }) team_id!: number;
  @ApiProperty() name!: string;
  @ApiProperty({ type: 'array', items: { type: 'integer' }, nullable: true }) endpoint_ids!: number[] | null;
  @ApiProperty({ type: 'integer', nullable: true }) project_id!: number | null;
  @ApiProperty({ type: Number }) objective_percent!: number;
  @ApiProperty({ type: 'integer' }) window_days!: number;
  @ApiProperty({ type: 'integer', nullable: true }) latency_threshold_ms!: number | null;
  @ApiProperty({ type: SloWindowDto }) window!: SloWindowDto;
  @ApiProperty({ type: 'integer', description: 'Good checks in the window.' }) good!: number;
  @ApiProperty({ type: 'integer', description: 'Applicable checks in the window (scheduled, unsuppressed, imported included).' }) total!: number;
  @ApiProperty({ type: Number, nullable: true, description: '100 x good / total, 3 decimals.' }) sli_percent!: number | null;
  @ApiProperty({ type: ErrorBudgetDto }) error_budget!: ErrorBudgetDto;
  @ApiProperty({ type: BurnRatesDto, description: `(bad / total) / (1 - objective/100) over each of ${BURN_WINDOWS.join(', ')} ending now; null without checks.` }) burn_rates!: BurnRatesDto;
  @ApiProperty({ type: [SloAlertDto], description: 'Active burn-rate alerts.' }) alerts!: SloAlertDto[];
  @ApiProperty({ enum: ['ok', 'at_risk', 'breached'] }) status!: string;
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class SloResponse extends DataResponse(SloDto) {}

export class SloListResponse extends ListResponse(SloDto) {}
