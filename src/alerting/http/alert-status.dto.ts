/** OpenAPI documentation of the alert status resource (api-decisions: Alerting). */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { DataResponse } from '../../platform/http/envelope.dto.js';

export class LatencyBaselineDto {
  @ApiProperty({ type: 'integer', description: 'Successful checks in the baseline window.' }) samples!: number;
  @ApiProperty({ type: Number }) median_ms!: number;
  @ApiProperty({ type: Number, description: 'Median absolute deviation, scaled.' }) mad_ms!: number;
  @ApiProperty({ type: Number, description: 'Fixed threshold, or median + sensitivity x MAD respecting the materiality floors.' }) threshold_ms!: number;
  @ApiProperty({ type: String, format: 'date-time', description: 'checked_at of the newest sample.' }) computed_at!: string;
  @ApiProperty({ type: Number }) min_increase_ms!: number;
  @ApiProperty({ type: Number }) min_increase_percent!: number;
}

export class AlertSignalDto {
  @ApiProperty({ enum: ['availability', 'latency', 'certificate'] }) type!: string;
  @ApiProperty({ enum: ['ok', 'triggered'] }) state!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'When it triggered; null while ok.' }) since!: string | null;
  @ApiProperty({ type: 'integer', minimum: 1, nullable: true, description: 'The automatic incident it opened or joined.' }) incident_id!: number | null;
  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'Certificate signal only: notAfter of the certificate the newest https check saw.' }) expires_at?: string | null;
}

export class RegionStatusDto {
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ enum: ['known', 'unknown'], description: 'unknown: no scheduled check of the region in the last three intervals; it counts neither way.' }) state!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_checked_at!: string | null;
  @ApiProperty({ type: LatencyBaselineDto, nullable: true, description: "The region's own baseline." }) latency_baseline!: LatencyBaselineDto | null;
  @ApiProperty({ type: [AlertSignalDto], description: "The region's signals by its own rule (incident_id always null)." }) signals!: AlertSignalDto[];
}

export class QuorumSignalDto {
  @ApiProperty({ type: [String] }) failing!: string[];
  @ApiProperty({ type: [String] }) up!: string[];
  @ApiProperty({ type: [String] }) unknown!: string[];
  @ApiProperty({ type: 'integer' }) quorum!: number;
  @ApiProperty({ type: 'integer' }) failing_count!: number;
  @ApiProperty({ type: Boolean, description: 'At least quorum regions failing now.' }) triggered!: boolean;
}

export class QuorumDto {
  @ApiProperty({ type: 'integer', description: 'region_quorum.' }) required!: number;
  @ApiProperty({ type: QuorumSignalDto }) availability!: QuorumSignalDto;
  @ApiProperty({ type: QuorumSignalDto }) latency!: QuorumSignalDto;
}

export class AlertStatusDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) team_id!: number;
  @ApiProperty({ type: 'integer', minimum: 1 }) endpoint_id!: number;
  @ApiProperty({ type: LatencyBaselineDto, nullable: true, description: 'null until latency_min_samples successful checks (auto mode).' }) latency_baseline!: LatencyBaselineDto | null;
  @ApiProperty({ type: [AlertSignalDto], description: 'availability, then latency, then (once an https check has seen a certificate) certificate.' }) signals!: AlertSignalDto[];
  @ApiProperty({
    type: 'array',
    items: { type: 'integer' },
    description: 'Endpoints in depends_on whose availability signal is triggered now (unless the checks their maintenance window hid have recovered by their rule since), or that fail during their maintenance window (suppressed_by_maintenance): failing checks are recorded with alert_suppressed true meanwhile. Empty when none.',
  })
  suppressed_by!: number[];
  @ApiProperty({
    type: 'array',
    items: { type: 'integer' },
    description:
      'Those of suppressed_by that suppress because they fail during their maintenance window: their own availability signal stays ok (maintenance hides their checks), but the checks it hid fail by the same rule. They stay here after the window until their signal triggers or they recover. Empty when none.',
  })
  suppressed_by_maintenance!: number[];
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Since when the checks its maintenance window hid fail by its availability rule (its own availability signal stays ok meanwhile): while it is enabled, its dependents list it in suppressed_by_maintenance. It stays set after the window until its signal triggers or it recovers. null when not.',
  })
  failing_in_maintenance_since!: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description:
      'Its availability triggered before its maintenance window: since when the checks the window hid have recovered by its rule. It then suppresses nothing, though its signal stays triggered (and its incident open) until the window is over. null when not.',
  })
  recovered_in_maintenance_since!: string | null;
  @ApiProperty({
    type: Boolean,
    description: 'The availability signal changed state at least flap_threshold times within flap_window_seconds and has not stayed recovered for a whole window since: its automatic incident stays open through recoveries.',
  })
  flapping!: boolean;
  @ApiPropertyOptional({ type: [RegionStatusDto], description: 'Only for an endpoint with regions: each region, in the endpoint\'s order.' }) regions?: RegionStatusDto[];
  @ApiPropertyOptional({ type: QuorumDto, description: 'Only for an endpoint with regions: the quorum decision as the regions stand now.' }) quorum?: QuorumDto;
}

export class AlertStatusResponse extends DataResponse(AlertStatusDto) {}
