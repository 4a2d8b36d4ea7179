import { applyDecorators } from '@nestjs/common';
import { IsInt, IsString, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';
import { isRfc3339 } from '../time/rfc3339.js';
import type { FieldError } from './problem.js';

/** An RFC 3339 timestamp with any offset; anything else is `invalid_value`. */
export function IsRfc3339(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isRfc3339', validator: { validate: (value) => isRfc3339(value), defaultMessage: () => 'must be an RFC 3339 timestamp' } }, options);
}

/** May be omitted; when present, null is not accepted (it fails the property's type rule). */
export const Optional = () => ValidateIf((_object, value) => value !== undefined);

/** Characters as Unicode code points (an emoji counts once, not as two UTF-16 units). */
export function characterCount(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/**
 * A string of `min` to `max` characters (code points). A value that is not a string fails only
 * the type rule (`invalid_type`), not the length rules too.
 */
export function Text(min: number, max: number): PropertyDecorator {
  return applyDecorators(
    IsString(),
    ValidateBy({
      name: 'minLength',
      validator: { validate: (value) => typeof value !== 'string' || characterCount(value) >= min, defaultMessage: () => `must have at least ${min} character${min === 1 ? '' : 's'}` },
    }),
    ValidateBy({
      name: 'maxLength',
      validator: { validate: (value) => typeof value !== 'string' || characterCount(value) <= max, defaultMessage: () => `must have at most ${max} characters` },
    }),
  );
}

/** A positive integer id: `invalid_type` for anything but an integer, `out_of_range` below 1. */
export function PositiveId(): PropertyDecorator {
  return applyDecorators(
    IsInt(),
    ValidateBy({ name: 'min', validator: { validate: (value) => !Number.isInteger(value) || (value as number) >= 1, defaultMessage: () => 'must be a positive integer' } }),
  );
}

/** A JSON object (`invalid_type` otherwise) whose UTF-8 JSON encoding has at most `maxBytes` (`too_long`). */
export function JsonObject(maxBytes: number): PropertyDecorator {
  const isObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value);
  return applyDecorators(
    ValidateBy({ name: 'isObject', validator: { validate: isObject, defaultMessage: () => 'must be a JSON object' } }),
    ValidateBy({
      name: 'maxLength',
      validator: {
        validate: (value) => !isObject(value) || Buffer.byteLength(JSON.stringify(value)) <= maxBytes,
        defaultMessage: () => `must encode to at most ${maxBytes} bytes of JSON`,
      },
    }),
  );
}

/**
 * Element rules of an id array, reported per element (`field[2]`): positive integers, each once.
 * For a DTO's `bodyRules()`; a value that is not an array, or longer than `max` (the property's
 * own too_many), is left to the property's rules: its elements are not examined.
 */
export function idListErrors(field: string, values: unknown, max = Number.MAX_SAFE_INTEGER): FieldError[] {
  if (!Array.isArray(values) || values.length > max) return [];
  const errors: FieldError[] = [];
  const seen = new Set<number>();
  values.forEach((value, index) => {
    const at = `${field}[${index}]`;
    if (!Number.isSafeInteger(value)) errors.push({ field: at, code: 'invalid_type', message: 'must be an integer' });
    else if ((value as number) <= 0) errors.push({ field: at, code: 'out_of_range', message: 'must be a positive integer' });
    else if (seen.has(value as number)) errors.push({ field: at, code: 'not_unique', message: `${value} appears more than once in ${field}` });
    else seen.add(value as number);
  });
  return errors;
}

/** At least one of `fields` is present; the error names the whole body (field ``). */
export function oneOfRequired(body: object, fields: readonly string[]): FieldError[] {
  const present = fields.some((field) => (body as Record<string, unknown>)[field] !== undefined);
  return present ? [] : [{ field: '', code: 'required', message: `at least one of ${fields.join(', ')} is required` }];
}
