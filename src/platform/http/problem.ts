/**
 * RFC 9457 problem details, with the codes decided in api-decisions.md. Every error leaves the
 * service through `ProblemError`, so the shape is the same from every layer.
 */

export interface FieldError {
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
  headers?: Record<string, string>;
}

export class ProblemError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.detail);
    this.name = 'ProblemError';
  }
}

const problem = (status: number, code: string, title: string, detail: string, extra: Partial<Problem> = {}) =>
  new ProblemError({ status, code, title, detail, ...extra });

export const Problems = {
  invalidJson: (detail = 'The request body is not valid JSON.') => problem(400, 'invalid_json', 'Invalid JSON', detail),
  validation: (errors: FieldError[], detail?: string) =>
    problem(400, 'validation_failed', 'Validation failed', detail ?? describeFieldErrors(errors), { errors }),
  invalidCursor: () => problem(400, 'invalid_cursor', 'Invalid cursor', 'The cursor was not issued for this query. Start again without a cursor.'),
  unauthenticated: (tokenSent: boolean) =>
    problem(401, 'unauthenticated', 'Unauthenticated', tokenSent ? 'The access token is invalid, expired or revoked.' : 'An access token is required: Authorization: Bearer <token>.', {
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
  conflict: (code: string, detail: string, headers?: Record<string, string>) => problem(409, code, 'Conflict', detail, { headers }),
  payloadTooLarge: (limit: number) => problem(413, 'payload_too_large', 'Payload too large', `The request body exceeds ${limit} bytes.`),
  unsupportedMediaType: () => problem(415, 'unsupported_media_type', 'Unsupported media type', 'Send the body as application/json.'),
  unprocessable: (code: string, detail: string) => problem(422, code, 'Unprocessable request', detail),
  rateLimited: (retryAfterSeconds: number) =>
    problem(429, 'rate_limited', 'Too many requests', `Rate limit reached; retry in ${retryAfterSeconds} s.`, { headers: { 'retry-after': String(retryAfterSeconds) } }),
  internal: () => problem(500, 'internal_error', 'Internal error', 'Something went wrong on our side. Quote the request id when reporting it.'),
  unavailable: () =>
    problem(503, 'unavailable', 'Service unavailable', 'A backing store is unreachable. Retry shortly.', { headers: { 'retry-after': '5' } }),
};

export function describeFieldErrors(errors: FieldError[]): string {
  if (errors.length === 0) return 'The request is invalid.';
  const first = errors[0];
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
  return `${first.field}: ${first.message}${more}`;
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
  };
}
