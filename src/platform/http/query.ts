import { isRfc3339, toUtcMillis } from '../time/rfc3339.js';
import { Problems, type FieldError } from './problem.js';

/** RFC 3339 UTC with milliseconds and Z; a string must be a valid RFC 3339 date-time (validate first). */
export function toTimestamp(value: string | number | Date): string {
  return typeof value === 'string' ? toUtcMillis(value) : new Date(value).toISOString();
}

function rangeMessage({ min, max }: { min?: number; max?: number }): string {
  if (max === undefined) return `must be at least ${min}`;
  if (min === undefined) return `must be at most ${max}`;
  return `must be from ${min} to ${max}`;
}

/**
 * Strict query-string reading: booleans are exactly `true`/`false`, integers are plain base-10
 * digits; every problem is collected and reported together. Unknown parameters are ignored.
 */
export class QueryReader {
  private readonly errors: FieldError[] = [];

  constructor(private readonly query: Record<string, unknown>) {}

  private raw(name: string): string | undefined {
    const value = this.query[name];
    if (value === undefined) return undefined;
    return Array.isArray(value) ? String(value[value.length - 1]) : String(value);
  }

  fail(field: string, code: string, message: string): void {
    this.errors.push({ field, code, message });
  }

  integer(name: string, options: { min?: number; max?: number } = {}): number | undefined {
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    if (!/^\d{1,15}$/.test(raw)) {
      this.fail(name, 'invalid_type', 'must be a base-10 integer');
      return undefined;
    }
    const value = Number(raw);
    if ((options.min !== undefined && value < options.min) || (options.max !== undefined && value > options.max)) {
      this.fail(name, 'out_of_range', rangeMessage(options));
      return undefined;
    }
    return value;
  }

  boolean(name: string): boolean | undefined {
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    if (raw !== 'true' && raw !== 'false') {
      this.fail(name, 'invalid_value', 'must be true or false');
      return undefined;
    }
    return raw === 'true';
  }

  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(raw)) {
      this.fail(name, 'invalid_value', `must be one of ${allowed.join(', ')}`);
      return undefined;
    }
    return raw as T;
  }

  timestamp(name: string): string | undefined {
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    if (!isRfc3339(raw)) {
      this.fail(name, 'invalid_value', 'must be an RFC 3339 timestamp');
      return undefined;
    }
    return toTimestamp(raw);
  }

  string(name: string, options: { maxLength?: number } = {}): string | undefined {
    const raw = this.raw(name);
    if (raw === undefined) return undefined;
    if (options.maxLength !== undefined && [...raw].length > options.maxLength) {
      this.fail(name, 'too_long', `must be at most ${options.maxLength} characters`);
      return undefined;
    }
    return raw;
  }

  /** Common list parameters: limit 1-100 (default 50) and the raw cursor. */
  page(): { limit: number; cursor: string | undefined } {
    return { limit: this.integer('limit', { min: 1, max: 100 }) ?? 50, cursor: this.raw('cursor') };
  }

  /** Throws one 400 listing every problem found so far. */
  done(): void {
    if (this.errors.length > 0) throw Problems.validation(this.errors);
  }
}
