import { ValidateBy, type ValidationOptions } from 'class-validator';
import { isRfc3339 } from '../time/rfc3339.js';

/** An RFC 3339 timestamp with any offset; anything else is `invalid_value`. */
export function IsRfc3339(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isRfc3339', validator: { validate: (value) => isRfc3339(value), defaultMessage: () => 'must be an RFC 3339 timestamp' } }, options);
}

/** A JSON object (not an array or null) whose JSON encoding fits in `maxBytes` (UTF-8). */
export function IsJsonObjectWithin(maxBytes: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isJsonObjectWithin',
      validator: {
        validate: (value) => typeof value === 'object' && value !== null && !Array.isArray(value) && Buffer.byteLength(JSON.stringify(value)) <= maxBytes,
        defaultMessage: () => `must be a JSON object of at most ${maxBytes} bytes when encoded`,
      },
    },
    options,
  );
}
