import type { ProblemCode } from './error-codes.js';

/**
 * RFC 9457 problem details, with the codes decided in api-decisions.md. Every error leaves the
 * service through `ProblemError`, so the shape is the same from every layer.
 */

export interface FieldError {
  /** Where the rule applies (`checks[3].checked_at`); empty or absent for the whole body. */
  field: string;
  code: string;
  message: string;
}

export interface Problem {
  status: number;
  code: string;
  title: string;
  detail: string;
  errors?: FieldError[];
  /** Violations found but not listed in `errors` (which holds at most MAX_LISTED_ERRORS). */
  errorsOmitted?: number;
  headers?: Record<string, string>;
}

/** A validation answer lists at most this many violations and counts the rest. */
export const MAX_LISTED_ERRORS = 50;

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
    this.name = 'ProblemError';
  }
}

const problem = (status: number, code: ProblemCode, title: string, detail: string, extra: Partial<Problem> = {}) =>
  new ProblemError({ status, code, title, detail, ...extra });

/** Why a sent credential was refused. */
export type UnauthenticatedReason = 'invalid' | 'malformed' | 'expired' | 'revoked' | 'admin_token_on_developer_api' | 'developer_token_on_admin_api';

const UNAUTHENTICATED_DETAILS: Record<UnauthenticatedReason, string> = {
  invalid: 'The access token is invalid, expired or revoked.',
  malformed: 'The Authorization header must be `Bearer <token>`: the word Bearer, a space, then the token.',
  expired: 'The access token has expired. Issue a new one.',
  revoked: 'The access token has been revoked. Issue a new one.',
  admin_token_on_developer_api:
    "This is the application API's admin token; the Developer API (/api/public/...) takes team tokens (mon_pat_...), issued with POST /api/v2/teams/{teamID}/tokens.",
  developer_token_on_admin_api:
    'This is a team token for the Developer API (/api/public/...); the application API (/api/v2/...) takes the admin token (ADMIN_TOKEN or data/admin-token).',
};

export const Problems = {
  invalidJson: (detail = 'The request body is not valid JSON.') => problem(400, 'invalid_json', 'Invalid JSON', detail),
  jsonTooDeep: (maxDepth: number) =>
    problem(400, 'json_too_deep', 'JSON nested too deeply', `The request body nests arrays and objects more than ${maxDepth} levels deep.`),
  forbiddenJsonKey: () =>
    problem(400, 'invalid_json', 'Invalid JSON', 'The request body must not contain "__proto__" keys or "constructor" objects with a "prototype" key.'),
  validation: (errors: FieldError[], detail?: string, omitted = 0) => {
    const listed = errors.slice(0, MAX_LISTED_ERRORS);
    const errorsOmitted = omitted + errors.length - listed.length;
    return problem(400, 'validation_failed', 'Validation failed', detail ?? describeFieldErrors(listed, errorsOmitted), {
      errors: listed.map(styled),
      ...(errorsOmitted > 0 ? { errorsOmitted } : {}),
    });
  },
  badRequest: (detail = 'The request is not valid HTTP.') => problem(400, 'bad_request', 'Bad request', detail),
  invalidUrl: () => problem(400, 'invalid_url', 'Invalid URL', 'The request path is not a valid percent-encoded URL.'),
  headersTooLarge: () =>
    problem(431, 'request_header_fields_too_large', 'Request header fields too large', 'The request line and headers exceed the server limit.'),
  requestTimeout: () => problem(408, 'request_timeout', 'Request timeout', 'The request was not received in time.'),
  invalidCursor: () => problem(400, 'invalid_cursor', 'Invalid cursor', 'The cursor was not issued for this query. Start again without a cursor.'),
  /** `why`: which credential is wrong, when the service can tell (the detail names it; the rest is fixed). */
  unauthenticated: (tokenSent: boolean, why: UnauthenticatedReason = 'invalid') =>
    problem(401, 'unauthenticated', 'Unauthenticated', tokenSent ? UNAUTHENTICATED_DETAILS[why] : 'An access token is required: Authorization: Bearer <token>.', {
      headers: { 'www-authenticate': tokenSent ? 'Bearer realm="monitoring", error="invalid_token"' : 'Bearer realm="monitoring"' },
    }),
  insufficientScope: (scope: string) =>
    problem(403, 'insufficient_scope', 'Insufficient scope', `This route needs a token with the ${scope} scope.`, {
      headers: { 'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"` },
    }),
  editorRequired: () => problem(403, 'editor_required', 'Editor required', 'This route needs a token owned by an editor.'),
  notFound: (what = 'The resource') => problem(404, 'not_found', 'Not found', `${what} does not exist.`),
  methodNotAllowed: (allow: string[]) =>
    problem(405, 'method_not_allowed', 'Method not allowed', `Allowed methods: ${allow.join(', ')}.`, { headers: { allow: allow.join(', ') } }),
  conflict: (code: ProblemCode, detail: string, headers?: Record<string, string>) => problem(409, code, 'Conflict', detail, { headers }),
  payloadTooLarge: (limit: number) => problem(413, 'payload_too_large', 'Payload too large', `The request body exceeds ${limit} bytes.`),
  unsupportedMediaType: () => problem(415, 'unsupported_media_type', 'Unsupported media type', 'Send the body as application/json.'),
  unprocessable: (code: ProblemCode, detail: string) => problem(422, code, 'Unprocessable request', detail),
  rateLimited: (retryAfterSeconds: number) =>
    problem(429, 'rate_limited', 'Too many requests', `Rate limit reached; retry in ${retryAfterSeconds} s.`, { headers: { 'retry-after': String(retryAfterSeconds) } }),
  internal: () => problem(500, 'internal_error', 'Internal error', 'Something went wrong on our side. Quote the request id when reporting it.'),
  unavailable: (detail = 'A backing store is unreachable. Retry shortly.', retryAfterSeconds = 5) =>
    problem(503, 'unavailable', 'Service unavailable', detail, { headers: { 'retry-after': String(retryAfterSeconds) } }),
};

/**
 * One message style: `field` names where the rule applies (absent for a rule about the whole
 * body, never empty) and `message` says what is wrong without repeating the field's name.
 */
function styled(error: FieldError): FieldError {
  const message = error.field && error.message.startsWith(`${error.field} `) ? error.message.slice(error.field.length + 1) : error.message;
  if (!error.field) return { code: error.code, message } as FieldError;
  return message === error.message ? error : { ...error, message };
}

export function describeFieldErrors(errors: FieldError[], omitted = 0): string {
  if (errors.length === 0) return 'The request is invalid.';
  const first = styled(errors[0]);
  const others = errors.length - 1 + omitted;
  const more = others > 0 ? ` (and ${others} more)` : '';
  return `${first.field ? `${first.field}: ` : ''}${first.message}${more}`;
}

export function problemBody(problem: Problem, requestId: string): Record<string, unknown> {
  return {
    type: 'about:blank',
    title: problem.title,
    status: problem.status,
    code: problem.code,
    detail: problem.detail,
    request_id: requestId,
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...(problem.errorsOmitted ? { errors_omitted: problem.errorsOmitted } : {}),
  };
}
