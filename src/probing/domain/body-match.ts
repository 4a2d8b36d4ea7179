import type { BodyMatchMode } from '../../monitoring/domain/endpoint-configuration.js';

export type BodyMatchResult = { ok: true } | { ok: false; reason: string };

const OK: BodyMatchResult = { ok: true };

/**
 * Judges a response body against the configured expectation.
 *
 * Reasons never quote the expected body (a hidden value) or the response body (internal only):
 * they end up in the public `failure_reason`.
 *
 * `expected` null counts as the empty string for `exact` and `contains`; `json_subset` needs one.
 *
 * `json_subset`: the expected JSON must be contained in the actual JSON.
 * - objects: every expected key exists in the actual object and its value matches recursively;
 *   extra actual keys are ignored.
 * - arrays: every expected element matches at least one actual element, in any order (two
 *   expected elements may match the same actual one). `[]` matches any array.
 * - scalars (string, number, boolean, null): strict equality; no type coercion.
 */
export function matchBody(mode: BodyMatchMode, expected: string | null, actual: string): BodyMatchResult {
  switch (mode) {
    case 'none':
      return OK;
    case 'exact':
      return actual === (expected ?? '') ? OK : fail('does not equal the expected body');
    case 'contains':
      return actual.includes(expected ?? '') ? OK : fail('does not contain the expected text');
    case 'json_subset':
      return matchJsonSubset(expected, actual);
  }
}

function matchJsonSubset(expected: string | null, actual: string): BodyMatchResult {
  if (expected === null) return fail('no expected JSON configured');
  const expectedValue = parseJson(expected);
  if (!expectedValue.ok) return fail('expected body is not valid JSON');
  const actualValue = parseJson(actual);
  if (!actualValue.ok) return fail('response is not valid JSON');
  return isJsonSubset(expectedValue.value, actualValue.value)
    ? OK
    : fail('response JSON does not contain the expected subset');
}

/** True when `expected` is contained in `actual` (rules in {@link matchBody}). */
export function isJsonSubset(expected: unknown, actual: unknown): boolean {
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && expected.every((e) => actual.some((a) => isJsonSubset(e, a)));
  }
  if (isObject(expected)) {
    return (
      isObject(actual) &&
      Object.keys(expected).every((key) => Object.hasOwn(actual, key) && isJsonSubset(expected[key], actual[key]))
    );
  }
  return expected === actual;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function fail(reason: string): BodyMatchResult {
  return { ok: false, reason };
}
