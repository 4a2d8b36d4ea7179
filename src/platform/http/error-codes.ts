/**
 * The one list of error codes the service answers with, documented in docs/architecture.md
 * (HTTP: errors). A test holds the documentation and this list equal, and the fuzz test checks
 * that every answer uses only these.
 */

/** `code` of a problem document, with its HTTP status. */
export const PROBLEM_CODES = {
  bad_request: 400,
  invalid_url: 400,
  invalid_json: 400,
  json_too_deep: 400,
  validation_failed: 400,
  invalid_cursor: 400,
  unauthenticated: 401,
  insufficient_scope: 403,
  editor_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_key_in_progress: 409,
  incident_merged: 409,
  concurrent_update: 409,
  destination_not_verified: 409,
  project_not_empty: 409,
  channel_has_no_secret: 409,
  slug_taken: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  verification_failed: 422,
  rate_limited: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  unavailable: 503,
} as const;

/** `code` of one entry of a validation answer's `errors`. */
export const FIELD_CODES = [
  'required',
  'unknown_field',
  'invalid_type',
  'invalid_value',
  'too_short',
  'too_long',
  'too_many',
  'not_unique',
  'out_of_range',
  'not_found',
  'conflict',
] as const;

export type ProblemCode = keyof typeof PROBLEM_CODES;
export type FieldCode = (typeof FIELD_CODES)[number];
