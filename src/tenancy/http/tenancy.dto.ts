/** Application API bodies and answers of the tenancy context (validated and documented by these classes). */
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMinSize, ArrayUnique, IsArray, IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { DataResponse, ListResponse } from '../../platform/http/envelope.dto.js';
import { SCOPES, type Role, type Scope } from '../../platform/http/route-auth.js';
import { IsRfc3339 } from '../../platform/http/validators.js';

export class CreateTeamBody {
  @ApiProperty({ type: String, minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;
}

export class IssueTokenBody {
  @ApiProperty({ type: String, minLength: 1, maxLength: 200 })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name!: string;

  @ApiProperty({ type: 'array', items: { enum: [...SCOPES] }, minItems: 1, uniqueItems: true })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayUnique()
  @IsIn(SCOPES, { each: true })
  scopes!: Scope[];

  @ApiProperty({ enum: ['editor', 'viewer'], description: 'Incident writes need an editor.' })
  @IsIn(['editor', 'viewer'])
  role!: Role;

  @ApiPropertyOptional({ type: String, format: 'date-time', nullable: true, description: 'In the future; null or absent: never expires.' })
  @IsOptional()
  @IsRfc3339()
  expires_at?: string | null;
}

export class TeamDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) id!: number;
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ type: String, format: 'date-time' }) created_at!: string;
}

export class TeamResponse extends DataResponse(TeamDto) {}

export class TeamListResponse extends ListResponse(TeamDto) {}

export class IssuedTokenDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) id!: number;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'mon_pat_ and 43 characters. Shown only in this answer (the service keeps its SHA-256): null in a replayed answer, absent when a retried keyed request finds the token already issued.' }) token?: string | null;
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ type: 'array', items: { enum: [...SCOPES] } }) scopes!: Scope[];
  @ApiProperty({ enum: ['editor', 'viewer'] }) role!: Role;
  @ApiProperty({ type: String, format: 'date-time' }) created_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expires_at!: string | null;
}

export class IssuedTokenResponse extends DataResponse(IssuedTokenDto) {}

export class TokenSummaryDto {
  @ApiProperty({ type: 'integer', minimum: 1 }) id!: number;
  @ApiProperty({ type: 'integer', minimum: 1 }) team_id!: number;
  @ApiProperty({ type: String }) name!: string;
  @ApiProperty({ type: 'array', items: { enum: [...SCOPES] } }) scopes!: Scope[];
  @ApiProperty({ enum: ['editor', 'viewer'] }) role!: Role;
  @ApiProperty({ type: String, format: 'date-time' }) created_at!: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expires_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) revoked_at!: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Recorded at most once a minute.' }) last_used_at!: string | null;
}

export class TokenListResponse extends ListResponse(TokenSummaryDto, 'By id ascending, revoked and expired ones included; never the token.') {}
