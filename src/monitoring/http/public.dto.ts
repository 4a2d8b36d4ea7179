import { ApiProperty } from '@nestjs/swagger';

/** OpenAPI documentation of the public monitoring resources (spec field names, exactly). */
export class PaginationDto {
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` to continue; null when no more results.' }) next_cursor!: string | null;
  @ApiProperty({ description: 'true exactly when next_cursor is non-null.' }) has_more!: boolean;
}

export class ProjectDto {
  @ApiProperty() id!: number;
  @ApiProperty() team_id!: number;
  @ApiProperty() name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ description: 'true while a team-wide or project window covers the project; endpoint-only windows do not change it.' }) under_maintenance!: boolean;
  @ApiProperty({ type: [Number], description: 'Ids of covering windows.' }) maintenance_window_ids!: number[];
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class EndpointDto {
  @ApiProperty() id!: number;
  @ApiProperty() team_id!: number;
  @ApiProperty() project_id!: number;
  @ApiProperty() name!: string;
  @ApiProperty() description!: string;
  @ApiProperty({ description: 'Configured URL with all query parameters (and user-info) omitted.' }) url!: string;
  @ApiProperty({ description: 'true when hidden query values exist.' }) url_query_configured!: boolean;
  @ApiProperty({ enum: ['GET', 'HEAD', 'OPTIONS'] }) method!: string;
  @ApiProperty({ type: [String], description: 'Configured header names only; values are never returned.' }) header_names!: string[];
  @ApiProperty() request_payload_configured!: boolean;
  @ApiProperty() expected_status!: number;
  @ApiProperty({ enum: ['none', 'exact', 'contains', 'json_subset'] }) body_match_mode!: string;
  @ApiProperty() expected_body_configured!: boolean;
  @ApiProperty() interval_seconds!: number;
  @ApiProperty() timeout_seconds!: number;
  @ApiProperty({ description: 'New endpoints start false.' }) enabled!: boolean;
  @ApiProperty() destination_verified!: boolean;
  @ApiProperty({ description: 'URL at which the hostname must return the token.' }) verification_url!: string;
  @ApiProperty({ description: '64-character challenge token.' }) verification_token!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) destination_verified_at!: string | null;
  @ApiProperty({ enum: ['auto', 'fixed', 'off'] }) latency_detection_mode!: string;
  @ApiProperty({ type: Number, nullable: true, description: 'null unless the mode is fixed.' }) latency_fixed_threshold_ms!: number | null;
  @ApiProperty() latency_sensitivity!: number;
  @ApiProperty() latency_min_samples!: number;
  @ApiProperty() latency_trigger_count!: number;
  @ApiProperty() latency_trigger_window!: number;
  @ApiProperty() latency_recovery_count!: number;
  @ApiProperty({ description: 'Auto mode: a check is anomalous only when also at least this many ms over the baseline median (default 25).' }) latency_min_increase_ms!: number;
  @ApiProperty({ description: 'Auto mode: a check is anomalous only when also at least this many percent over the baseline median (default 25).' }) latency_min_increase_percent!: number;
  @ApiProperty({ description: 'Increases by 1 with every configuration change; each check records the version that produced it.' }) configuration_version!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Legacy maintenance value.' }) maintenance_until!: string | null;
  @ApiProperty({ description: 'true while a team, project, endpoint or legacy endpoint maintenance window covers the endpoint.' }) under_maintenance!: boolean;
  @ApiProperty({ type: [Number], description: 'Active scheduled-window ids; can be empty (legacy coverage).' }) maintenance_window_ids!: number[];
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class CheckDto {
  @ApiProperty() id!: number;
  @ApiProperty() endpoint_id!: number;
  @ApiProperty() configuration_version!: number;
  @ApiProperty() success!: boolean;
  @ApiProperty({ description: '0 when no response arrived.' }) status_code!: number;
  @ApiProperty() latency_ms!: number;
  @ApiProperty() time_to_first_byte_ms!: number;
  @ApiProperty() duration_ms!: number;
  @ApiProperty({ enum: ['scheduled', 'manual'] }) source!: string;
  @ApiProperty() body_complete!: boolean;
  @ApiProperty() latency_anomaly!: boolean;
  @ApiProperty({ type: Number, nullable: true }) latency_threshold_ms!: number | null;
  @ApiProperty() alert_suppressed!: boolean;
  @ApiProperty({ type: String, nullable: true }) failure_reason!: string | null;
  @ApiProperty({ description: 'true when an excerpt was stored internally; it is never returned.' }) response_excerpt_omitted!: boolean;
  @ApiProperty({ format: 'date-time' }) checked_at!: string;
}

export class ProjectResponse {
  @ApiProperty({ type: ProjectDto }) data!: ProjectDto;
}
export class ProjectListResponse {
  @ApiProperty({ type: [ProjectDto] }) data!: ProjectDto[];
  @ApiProperty({ type: PaginationDto }) pagination!: PaginationDto;
}
export class EndpointResponse {
  @ApiProperty({ type: EndpointDto }) data!: EndpointDto;
}
export class EndpointListResponse {
  @ApiProperty({ type: [EndpointDto] }) data!: EndpointDto[];
  @ApiProperty({ type: PaginationDto }) pagination!: PaginationDto;
}
export class CheckResponse {
  @ApiProperty({ type: CheckDto }) data!: CheckDto;
}
export class CheckListResponse {
  @ApiProperty({ type: [CheckDto] }) data!: CheckDto[];
  @ApiProperty({ type: PaginationDto }) pagination!: PaginationDto;
}
