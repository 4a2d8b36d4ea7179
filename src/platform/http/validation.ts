import { plainToInstance } from 'class-transformer';
import { type ValidationError, validateSync } from 'class-validator';
import { Problems, type FieldError } from './problem.js';

/** class-validator constraint names -> the stable codes of api-decisions.md. */
const CODES: Record<string, string> = {
  isDefined: 'required',
  isNotEmpty: 'required',
  whitelistValidation: 'unknown_field',
  maxLength: 'too_long',
  minLength: 'too_short',
  arrayMaxSize: 'too_many',
  arrayMinSize: 'too_short',
  arrayNotEmpty: 'too_short',
  arrayUnique: 'not_unique',
  min: 'out_of_range',
  max: 'out_of_range',
  isPositive: 'out_of_range',
  isIn: 'invalid_value',
  isEnum: 'invalid_value',
  isRfc3339: 'invalid_value',
  isUrl: 'invalid_value',
  isInt: 'invalid_type',
  isString: 'invalid_type',
  isBoolean: 'invalid_type',
  isArray: 'invalid_type',
  isObject: 'invalid_type',
  isHeaderMap: 'invalid_value',
  isJsonObjectWithin: 'invalid_value',
};

/** A missing required field is one `required` error, not one per rule its absent value fails. */
function missingField(error: ValidationError, field: string): FieldError[] | null {
  if (error.value !== undefined || !error.constraints || error.constraints.whitelistValidation) return null;
  return [{ field, code: 'required', message: 'is required' }];
}

function flatten(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const missing = missingField(error, field);
    if (missing) return missing;
    const own = Object.entries(error.constraints ?? {}).map(([constraint, message]) => ({
      field,
      code: CODES[constraint] ?? constraint,
      message: constraint === 'whitelistValidation' ? 'is not a known field' : message.replace(new RegExp(`^${error.property} `), ''),
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Validates a JSON body against a DTO class, listing every violated rule. Unknown fields are
 * errors; values are not coerced (a string is never accepted for an integer).
 */
export function validateBody<T extends object>(dto: new () => T, body: unknown, extra: FieldError[] = []): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw Problems.validation([{ field: 'body', code: 'invalid_type', message: 'must be a JSON object' }, ...extra]);
  }
  const instance = plainToInstance(dto, body, { enableImplicitConversion: false });
  const errors = [...flatten(validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false })), ...extra];
  if (errors.length > 0) throw Problems.validation(errors);
  return instance;
}

/** A path id that is not a positive integer names nothing: 404, as for an unknown id. */
export function pathId(value: string, what = 'The resource'): number {
  if (!/^[1-9]\d{0,15}$/.test(value)) throw Problems.notFound(what);
  return Number(value);
}
