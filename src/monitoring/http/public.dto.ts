import { ApiProperty } from '@nestjs/swagger';
import { DataResponse, ListResponse } from '../../platform/http/envelope.dto.js';

/** OpenAPI documentation of the public monitoring resources (spec field names, exactly). */

export class ProjectDto {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: 'integer' }) team_id!: number;
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ type: String }) description!: string;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 3600, description: 'Automatic incidents of one type opened within this many seconds of each other group into one (0: off, the default).' }) incident_grouping_seconds!: number;
  @ApiProperty({ description: 'true while a team-wide or project window covers the project; endpoint-only windows do not change it.' }) under_maintenance!: boolean;
  @ApiProperty({ type: 'array', items: { type: 'integer' }, description: 'Ids of covering windows.' }) maintenance_window_ids!: number[];
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class EndpointDto {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: 'integer' }) team_id!: number;
  @ApiProperty({ type: 'integer' }) project_id!: number;
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ type: String }) description!: string;
  @ApiProperty({ description: 'Configured URL with all query parameters (and user-info) omitted.' }) url!: string;
  @ApiProperty({ description: 'true when hidden query values exist.' }) url_query_configured!: boolean;
  @ApiProperty({ enum: ['GET', 'HEAD', 'OPTIONS'] }) method!: string;
  @ApiProperty({ type: [String], description: 'Configured header names only; values are never returned.' }) header_names!: string[];
  @ApiProperty({ type: Boolean }) request_payload_configured!: boolean;
  @ApiProperty({ type: 'integer' }) expected_status!: number;
  @ApiProperty({ enum: ['none', 'exact', 'contains', 'json_subset'] }) body_match_mode!: string;
  @ApiProperty({ type: Boolean }) expected_body_configured!: boolean;
  @ApiProperty({ type: 'integer' }) interval_seconds!: number;
  @ApiProperty({ type: 'integer' }) timeout_seconds!: number;
  @ApiProperty({ description: 'New endpoints start false.' }) enabled!: boolean;
  @ApiProperty({ type: Boolean }) destination_verified!: boolean;
  @ApiProperty({ description: 'URL at which the hostname must return the token.' }) verification_url!: string;
  @ApiProperty({ description: '64-character challenge token.' }) verification_token!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) destination_verified_at!: string | null;
  @ApiProperty({ enum: ['auto', 'fixed', 'off'] }) latency_detection_mode!: string;
  @ApiProperty({ type: 'integer', nullable: true, description: 'null unless the mode is fixed.' }) latency_fixed_threshold_ms!: number | null;
  @ApiProperty({ type: 'integer' }) latency_sensitivity!: number;
  @ApiProperty({ type: 'integer' }) latency_min_samples!: number;
  @ApiProperty({ type: 'integer' }) latency_trigger_count!: number;
  @ApiProperty({ type: 'integer' }) latency_trigger_window!: number;
  @ApiProperty({ type: 'integer' }) latency_recovery_count!: number;
  @ApiProperty({ type: 'integer', description: 'Auto mode: a check is anomalous only when also at least this many ms over the baseline median (default 25).' }) latency_min_increase_ms!: number;
  @ApiProperty({ type: 'integer', description: 'Auto mode: a check is anomalous only when also at least this many percent over the baseline median (default 25).' }) latency_min_increase_percent!: number;
  @ApiProperty({ type: 'array', items: { type: 'integer' }, description: 'Endpoints of the same team this one depends on: while one has its availability signal triggered, failing checks of this one are suppressed (default []).' }) depends_on!: number[];
  @ApiProperty({ type: 'integer', description: 'Availability changes of state within flap_window_seconds that make the endpoint flapping (default 6).' }) flap_threshold!: number;
  @ApiProperty({ type: 'integer', description: 'The flapping window, in seconds (default 3600).' }) flap_window_seconds!: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: 365, description: 'https: the certificate signal triggers when the server certificate expires within this many days (default 14; 0: off).' }) certificate_expiry_days!: number;
  @ApiProperty({ type: 'array', items: { type: 'string' }, description: 'Probe regions; empty: the region of whichever prober takes the job.' }) regions!: string[];
  @ApiProperty({ type: 'integer', nullable: true, description: 'Regions that must fail for the endpoint to be down; null when regions is empty.' }) region_quorum!: number | null;
  @ApiProperty({ type: 'integer', description: 'Increases by 1 with every configuration change; each check records the version that produced it.' }) configuration_version!: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Legacy maintenance value.' }) maintenance_until!: string | null;
  @ApiProperty({ description: 'true while a team, project, endpoint or legacy endpoint maintenance window covers the endpoint.' }) under_maintenance!: boolean;
  @ApiProperty({ type: 'array', items: { type: 'integer' }, description: 'Active scheduled-window ids; can be empty (legacy coverage).' }) maintenance_window_ids!: number[];
  @ApiProperty({ format: 'date-time' }) created_at!: string;
  @ApiProperty({ format: 'date-time' }) updated_at!: string;
}

export class CheckDto {
  @ApiProperty({ type: 'integer' }) id!: number;
  @ApiProperty({ type: 'integer' }) endpoint_id!: number;
  @ApiProperty({ type: 'integer' }) configuration_version!: number;
  @ApiProperty({ type: Boolean }) success!: boolean;
  @ApiProperty({ type: 'integer', description: '0 when no response arrived.' }) status_code!: number;
  @ApiProperty({ type: 'integer' }) latency_ms!: number;
  @ApiProperty({ type: 'integer' }) time_to_first_byte_ms!: number;
  @ApiProperty({ type: 'integer' }) duration_ms!: number;
  @ApiProperty({ enum: ['scheduled', 'manual'] }) source!: string;
  @ApiProperty({ type: Boolean }) body_complete!: boolean;
  @ApiProperty({ type: Boolean }) latency_anomaly!: boolean;
  @ApiProperty({ type: 'integer', nullable: true }) latency_threshold_ms!: number | null;
  @ApiProperty({ type: Boolean }) alert_suppressed!: boolean;
  @ApiProperty({ type: String, nullable: true }) failure_reason!: string | null;
  @ApiProperty({ description: 'true when an excerpt was stored internally; it is never returned.' }) response_excerpt_omitted!: boolean;
  @ApiProperty({ type: String, example: 'eu-west', description: 'Region of the prober that took the check (its PROBE_REGION; `local` by default).' }) region!: string;
  @ApiProperty({ format: 'date-time' }) checked_at!: string;
}

export class ProjectResponse extends DataResponse(ProjectDto) {}
export class ProjectListResponse extends ListResponse(ProjectDto) {}
export class EndpointResponse extends DataResponse(EndpointDto) {}
export class EndpointListResponse extends ListResponse(EndpointDto) {}
export class CheckResponse extends DataResponse(CheckDto) {}
export class CheckListResponse extends ListResponse(CheckDto) {}
