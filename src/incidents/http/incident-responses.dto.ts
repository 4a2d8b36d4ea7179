/** OpenAPI documentation of the incident resources (spec: Incident summary, Incident detail). */
import { ApiProperty } from '@nestjs/swagger';
import { DataResponse, ListResponse } from '../../platform/http/envelope.dto.js';
import { SEVERITIES } from '../domain/events.js';

const int = (description?: string) => ApiProperty({ type: 'integer', description });
const id = (description?: string) => ApiProperty({ type: 'integer', minimum: 1, description });
const time = (description?: string) => ApiProperty({ type: String, format: 'date-time', description });
const nullableTime = (description?: string) => ApiProperty({ type: String, format: 'date-time', nullable: true, description });

export class CommentDto {
  @id() id!: number;
  @ApiProperty({ type: String }) body!: string;
  @ApiProperty({ type: Boolean }) pinned!: boolean;
  @time() created_at!: string;
  @time() updated_at!: string;
}

export class CheckpointDto {
  @id() id!: number;
  @ApiProperty({ type: String }) title!: string;
  @ApiProperty({ type: String }) body!: string;
  @ApiProperty({ type: String, description: "The incident's status name when posted, unless set." }) status_label!: string;
  @time() created_at!: string;
  @time() updated_at!: string;
}

export class LinkedCheckDto {
  @id() id!: number;
  @id() endpoint_id!: number;
  @int() configuration_version!: number;
  @ApiProperty({ type: Boolean }) success!: boolean;
  @int('0 when no response arrived.') status_code!: number;
  @int() latency_ms!: number;
  @int() time_to_first_byte_ms!: number;
  @int() duration_ms!: number;
  @ApiProperty({ enum: ['scheduled', 'manual'] }) source!: string;
  @ApiProperty({ type: Boolean }) body_complete!: boolean;
  @ApiProperty({ type: Boolean }) latency_anomaly!: boolean;
  @ApiProperty({ type: 'integer', nullable: true }) latency_threshold_ms!: number | null;
  @ApiProperty({ type: Boolean }) alert_suppressed!: boolean;
  @ApiProperty({ type: String, nullable: true }) failure_reason!: string | null;
  @ApiProperty({ type: Boolean }) response_excerpt_omitted!: boolean;
  @time() checked_at!: string;
}

export class MergedIncidentDto {
  @id() id!: number;
  @ApiProperty({ type: String }) title!: string;
  @time() merged_at!: string;
}

export class IncidentSummaryDto {
  @id() id!: number;
  @id() team_id!: number;
  @id() project_id!: number;
  @ApiProperty({ type: 'integer', minimum: 1, nullable: true, description: 'The first of endpoint_ids, or null.' }) endpoint_id!: number | null;
  @ApiProperty({ type: 'array', items: { type: 'integer', minimum: 1 } }) endpoint_ids!: number[];
  @ApiProperty({ type: String }) title!: string;
  @ApiProperty({ type: String }) type!: string;
  @ApiProperty({ enum: ['manual', 'automatic'] }) source!: string;
  @ApiProperty({ enum: SEVERITIES }) severity!: string;
  @ApiProperty({ type: Boolean }) auto_resolve!: boolean;
  @ApiProperty({ type: String }) detection_reason!: string;
  @ApiProperty({ type: 'object', additionalProperties: true }) metadata!: Record<string, unknown>;
  @id() status_id!: number;
  @ApiProperty({ type: String }) status_name!: string;
  @int('Failing checks linked (automatic incidents); 0 for manual ones.') error_count!: number;
  @time() first_error_at!: string;
  @time() last_error_at!: string;
  @nullableTime('null while open.') resolved_at!: string | null;
  @time() created_at!: string;
  @time() updated_at!: string;
  @ApiProperty({ type: 'integer', minimum: 1, nullable: true, description: 'Set once merged into another incident; it then refuses writes (409).' }) merged_into_id!: number | null;
}

export class IncidentDetailDto extends IncidentSummaryDto {
  @ApiProperty({ type: [CommentDto], description: 'Oldest first.' }) comments!: CommentDto[];
  @ApiProperty({ type: [CheckpointDto], description: 'Oldest first.' }) checkpoints!: CheckpointDto[];
  @ApiProperty({ type: [LinkedCheckDto], description: 'The newest 100 linked checks, by checked_at ascending (all of them: GET /incidents/{incidentID}/checks).' }) checks!: LinkedCheckDto[];
  @ApiProperty({ type: 'integer', minimum: 0, description: 'How many checks are linked in all.' }) checks_total!: number;
  @ApiProperty({ type: [MergedIncidentDto], description: 'Oldest first.' }) merged_incidents!: MergedIncidentDto[];
}

export class IncidentStatusDto {
  @id() id!: number;
  @id() team_id!: number;
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ type: Boolean }) is_default!: boolean;
  @time() created_at!: string;
}

export class IncidentResponse extends DataResponse(IncidentDetailDto) {}
export class IncidentListResponse extends ListResponse(IncidentSummaryDto) {}
export class IncidentStatusListResponse extends DataResponse([IncidentStatusDto]) {}
export class CommentResponse extends DataResponse(CommentDto) {}
export class CheckpointResponse extends DataResponse(CheckpointDto) {}

export class LinkedCheckListResponse extends ListResponse(LinkedCheckDto) {}
