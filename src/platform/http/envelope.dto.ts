import type { Type } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { PaginationDto } from './pagination.dto.js';

/**
 * OpenAPI documentation of the two envelopes every answer with a body uses: `{ data }` and, for a
 * page of a list, `{ data, pagination }`. Each resource's response class extends one of these
 * (`class SloResponse extends DataResponse(SloDto) {}`), so the schema keeps its own name.
 */

/** `{ data }`: one resource (`DataResponse(Dto)`), or a whole unpaged list (`DataResponse([Dto])`). */
export function DataResponse<T>(type: Type<T>): Type<{ data: T }>;
export function DataResponse<T>(type: [Type<T>]): Type<{ data: T[] }>;
export function DataResponse<T>(type: Type<T> | [Type<T>]): Type<{ data: T | T[] }> {
  class Data {
    @ApiProperty({ type }) data!: T | T[];
  }
  return Data;
}

/** `{ data, pagination }`: a page of a list; `description` says what `data` holds and in which order. */
export function ListResponse<T>(type: Type<T>, description?: string): Type<{ data: T[]; pagination: PaginationDto }> {
  class List {
    @ApiProperty({ type: [type], ...(description ? { description } : {}) }) data!: T[];
    @ApiProperty({ type: PaginationDto }) pagination!: PaginationDto;
  }
  return List;
}
