/**
 * Incident request bodies, validated at the HTTP edge by `validateBody` like every other body
 * (class-validator decorators, unknown fields refused, no coercion, every violation listed) and
 * documented in the OpenAPI document by the same classes. Rules that need lookups in the team
 * (projects, endpoints, statuses, merge sources) or the stored incident (error times) are the
 * domain's: src/incidents/domain/validation.ts.
 *
 * - Lengths count characters as Unicode code points; `metadata` counts bytes of its UTF-8 JSON.
 * - `null` is not "absent": a field sent as null fails its type rule.
 * - `endpoint_ids[2]` names one element of an id array; `` names the whole body.
 */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsArray, IsBoolean, IsIn, IsString, ValidateBy } from 'class-validator';
import type { FieldError } from '../../platform/http/problem.js';
import type { BodyRules } from '../../platform/http/validation.js';
import { idListErrors, JsonObject, oneOfRequired, Optional, PositiveId, Text } from '../../platform/http/validators.js';
import { SEVERITIES, type Severity } from '../domain/events.js';
import { parseRfc3339 } from '../../platform/time/rfc3339.js';
import { LIMITS } from '../domain/validation.js';

/** An RFC 3339 date-time with an offset; impossible dates (30 February, 24:00) are refused. */
function DateTime(): PropertyDecorator {
  return (target, key) => {
    IsString()(target, key);
    ValidateBy({
      name: 'isRfc3339',
      validator: { validate: (value) => typeof value !== 'string' || parseRfc3339(value) !== null, defaultMessage: () => 'must be an RFC 3339 date-time such as 2026-11-21T15:04:05Z' },
    })(target, key);
  };
}

/** An array (`invalid_type`) of `min` (`too_short`) to `max` (`too_many`) ids; elements: `idListErrors`. */
const IdArray = (max: number, min = 0) => (target: object, key: string | symbol) => {
  IsArray()(target, key);
  ValidateBy({ name: 'arrayMinSize', constraints: [min], validator: { validate: (v) => !Array.isArray(v) || v.length >= min, defaultMessage: () => `must name at least ${min} id` } })(target, key);
  ValidateBy({ name: 'arrayMaxSize', constraints: [max], validator: { validate: (v) => !Array.isArray(v) || v.length <= max, defaultMessage: () => `may hold at most ${max} ids` } })(target, key);
};

const statusExclusive = (body: { status?: unknown; status_id?: unknown }): FieldError[] =>
  body.status !== undefined && body.status_id !== undefined ? [{ field: 'status', code: 'conflict', message: 'use either status or status_id, not both' }] : [];

const time = { type: String, format: 'date-time' } as const;
const positiveId = { type: 'integer', minimum: 1 } as const;

/** The detail fields a create and an update share (title aside), all optional here. */
class IncidentDetailFields {
  @ApiPropertyOptional({ ...positiveId, description: 'A project of the team. Required when endpoint_ids is empty or missing.' })
  @Optional()
  @PositiveId()
  project_id?: number;

  @ApiPropertyOptional({ type: 'array', items: positiveId, maxItems: LIMITS.endpointIds, uniqueItems: true, description: 'Endpoints of the project, each once.' })
  @Optional()
  @IdArray(LIMITS.endpointIds)
  endpoint_ids?: number[];

  @ApiPropertyOptional({ type: String, maxLength: LIMITS.type, description: 'Free-form, e.g. availability, latency, deploy.' })
  @Optional()
  @Text(0, LIMITS.type)
  type?: string;

  @ApiPropertyOptional({ enum: SEVERITIES, description: 'Default warning.' })
  @Optional()
  @IsString()
  @IsIn(SEVERITIES)
  severity?: Severity;

  @ApiPropertyOptional({ type: String, maxLength: LIMITS.detectionReason })
  @Optional()
  @Text(0, LIMITS.detectionReason)
  detection_reason?: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `A JSON object of at most ${LIMITS.metadataBytes} bytes encoded.` })
  @Optional()
  @JsonObject(LIMITS.metadataBytes)
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ ...time, description: 'Default: now (create).' })
  @Optional()
  @DateTime()
  first_error_at?: string;

  @ApiPropertyOptional({ ...time, description: 'Not before first_error_at.' })
  @Optional()
  @DateTime()
  last_error_at?: string;

  bodyRules(): FieldError[] {
    return idListErrors('endpoint_ids', this.endpoint_ids, LIMITS.endpointIds);
  }
}

export class CreateIncidentBody extends IncidentDetailFields implements BodyRules {
  @ApiProperty({ type: String, minLength: 1, maxLength: LIMITS.title })
  @Text(1, LIMITS.title)
  title!: string;

  @ApiPropertyOptional({ ...positiveId, description: 'An incident status of the team; default: the default status. Not with status.' })
  @Optional()
  @PositiveId()
  status_id?: number;

  @ApiPropertyOptional({ type: String, minLength: 1, description: 'Status by exact, case-sensitive name. Not with status_id.' })
  @Optional()
  @Text(1, Number.MAX_SAFE_INTEGER)
  status?: string;

  @ApiPropertyOptional({ type: Boolean, description: 'Resolve when the linked endpoints recover. Default false.' })
  @Optional()
  @IsBoolean()
  auto_resolve?: boolean;

  override bodyRules(): FieldError[] {
    const errors = [...super.bodyRules(), ...statusExclusive(this)];
    const noEndpoints = this.endpoint_ids === undefined || (Array.isArray(this.endpoint_ids) && this.endpoint_ids.length === 0);
    if (this.project_id === undefined && noEndpoints) errors.push({ field: 'project_id', code: 'required', message: 'is required when endpoint_ids is empty or missing' });
    return errors;
  }
}

/** PATCH /incidents/:id: at least one detail field. */
export class UpdateIncidentBody extends IncidentDetailFields implements BodyRules {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: LIMITS.title })
  @Optional()
  @Text(1, LIMITS.title)
  title?: string;

  static readonly FIELDS = ['project_id', 'endpoint_ids', 'title', 'type', 'severity', 'detection_reason', 'metadata', 'first_error_at', 'last_error_at'] as const;

  override bodyRules(): FieldError[] {
    return [...super.bodyRules(), ...oneOfRequired(this, UpdateIncidentBody.FIELDS)];
  }
}

/** PATCH /incidents/:id/status: at least one field. */
export class UpdateIncidentStatusBody implements BodyRules {
  @ApiPropertyOptional({ type: String, minLength: 1, description: 'Status by exact, case-sensitive name. Not with status_id.' })
  @Optional()
  @Text(1, Number.MAX_SAFE_INTEGER)
  status?: string;

  @ApiPropertyOptional({ ...positiveId, description: 'Not with status.' })
  @Optional()
  @PositiveId()
  status_id?: number;

  @ApiPropertyOptional({ type: Boolean, description: 'true resolves (keeping the first resolved_at); false reopens.' })
  @Optional()
  @IsBoolean()
  resolved?: boolean;

  @ApiPropertyOptional({ type: Boolean })
  @Optional()
  @IsBoolean()
  auto_resolve?: boolean;

  bodyRules(): FieldError[] {
    return [...oneOfRequired(this, ['status', 'status_id', 'resolved', 'auto_resolve']), ...statusExclusive(this)];
  }
}

export class MergeIncidentsBody implements BodyRules {
  @ApiProperty({ type: 'array', items: positiveId, minItems: 1, maxItems: LIMITS.mergeSources, uniqueItems: true, description: 'Incidents of the team to merge into this one; not this one, none merged before.' })
  @IdArray(LIMITS.mergeSources, 1)
  source_incident_ids!: number[];

  bodyRules(): FieldError[] {
    return idListErrors('source_incident_ids', this.source_incident_ids, LIMITS.mergeSources);
  }
}

export class AddCommentBody {
  @ApiProperty({ type: String, minLength: 1, maxLength: LIMITS.commentBody })
  @Text(1, LIMITS.commentBody)
  body!: string;

  @ApiPropertyOptional({ type: Boolean, description: 'Default false.' })
  @Optional()
  @IsBoolean()
  pinned?: boolean;
}

export class EditCommentBody implements BodyRules {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: LIMITS.commentBody })
  @Optional()
  @Text(1, LIMITS.commentBody)
  body?: string;

  @ApiPropertyOptional({ type: Boolean })
  @Optional()
  @IsBoolean()
  pinned?: boolean;

  bodyRules(): FieldError[] {
    return oneOfRequired(this, ['body', 'pinned']);
  }
}

class CheckpointFields {
  @ApiPropertyOptional({ type: String, maxLength: LIMITS.checkpointBody })
  @Optional()
  @Text(0, LIMITS.checkpointBody)
  body?: string;

  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: LIMITS.statusLabel, description: "Default: the incident's status name when posted." })
  @Optional()
  @Text(1, LIMITS.statusLabel)
  status_label?: string;
}

export class AddCheckpointBody extends CheckpointFields {
  @ApiProperty({ type: String, minLength: 1, maxLength: LIMITS.title })
  @Text(1, LIMITS.title)
  title!: string;
}

export class EditCheckpointBody extends CheckpointFields implements BodyRules {
  @ApiPropertyOptional({ type: String, minLength: 1, maxLength: LIMITS.title })
  @Optional()
  @Text(1, LIMITS.title)
  title?: string;

  bodyRules(): FieldError[] {
    return oneOfRequired(this, ['title', 'body', 'status_label']);
  }
}
