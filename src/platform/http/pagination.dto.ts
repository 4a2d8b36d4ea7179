import { ApiProperty } from '@nestjs/swagger';

/** OpenAPI documentation of every list's `pagination` member (see pagination.ts for the cursors). */
export class PaginationDto {
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` to continue; null when no more results.' }) next_cursor!: string | null;
  @ApiProperty({ description: 'true exactly when next_cursor is non-null.' }) has_more!: boolean;
}
