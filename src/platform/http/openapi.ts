/**
 * The parts of an OpenAPI document that follow from the HTTP conventions rather than from one
 * route: problem details on every error a route can answer, the headers every answer carries,
 * integer path ids, the bearer scheme, servers. `completeDocument` derives them from each
 * operation as Nest generated it from the controllers and DTOs (a path parameter means a 404,
 * a body means 400/413/415, an Idempotency-Key header means 409/422, ...), so the document
 * follows the code. It also writes OpenAPI 3.1 (JSON Schema: `type: [x, "null"]`, not `nullable`).
 */
import type { OpenAPIObject } from '@nestjs/swagger';

type Json = Record<string, any>;

export const OPENAPI_VERSION = '3.1.0';

const PROBLEM = 'application/problem+json';

const schemas: Json = {
  FieldError: {
    type: 'object',
    required: ['code', 'message'],
    properties: {
      field: { type: 'string', description: 'The body field, `ids[2]` for an element, or the query parameter; absent for the body as a whole.' },
      code: { type: 'string', description: 'required, unknown_field, invalid_type, invalid_value, too_short, too_long, too_many, not_unique, out_of_range, not_found, conflict' },
      message: { type: 'string' },
    },
  },
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details. `code` is stable and machine-readable; `detail` is for people.',
    required: ['type', 'title', 'status', 'code', 'detail', 'request_id'],
    properties: {
      type: { type: 'string', description: 'Always about:blank.' },
      title: { type: 'string' },
      status: { type: 'integer', minimum: 400, maximum: 599 },
      code: { type: 'string' },
      detail: { type: 'string' },
      request_id: { type: 'string', description: 'The X-Request-Id of the request.' },
      errors: { type: 'array', items: { $ref: '#/components/schemas/FieldError' }, description: 'Validation failures: every violated rule.' },
    },
  },
  ViewsBehind: {
    type: 'object',
    description: 'The write was recorded but the views did not show it in time: read it again shortly, do not repeat it.',
    required: ['status', 'code', 'detail', 'request_id'],
    properties: {
      status: { type: 'string', enum: ['accepted'] },
      code: { type: 'string', enum: ['views_behind'] },
      detail: { type: 'string' },
      request_id: { type: 'string' },
    },
  },
};

const integerHeader = (description: string) => ({ description, schema: { type: 'integer', minimum: 0 } });
const stringHeader = (description: string) => ({ description, schema: { type: 'string' } });

const headers: Json = {
  'X-Request-Id': stringHeader('The request id: the client value when it is 1-128 characters of [A-Za-z0-9._-], generated otherwise. Also in every error body and log line.'),
  'RateLimit-Policy': stringHeader('draft-ietf-httpapi-ratelimit-headers-11: `"per-token";q=<quota>;w=60`.'),
  RateLimit: stringHeader('draft-ietf-httpapi-ratelimit-headers-11: `"per-token";r=<remaining>;t=<seconds to reset>`.'),
  'RateLimit-Limit': integerHeader("Requests the token may make in the current one-minute window."),
  'RateLimit-Remaining': integerHeader('Requests left in the current window.'),
  'RateLimit-Reset': integerHeader('Seconds until the window resets.'),
  'Retry-After': integerHeader('Seconds to wait before retrying.'),
  'Idempotent-Replayed': { description: 'true when this answer replays the first request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
  Location: stringHeader('Where the created resource can be read.'),
  Allow: stringHeader('The methods the path accepts.'),
  'WWW-Authenticate': stringHeader('Bearer challenge (RFC 6750).'),
  Deprecation: { description: 'This version is deprecated.', schema: { type: 'string', enum: ['true'] } },
  Link: stringHeader('The successor version: `<...>; rel="successor-version"`.'),
  Sunset: stringHeader('When this version stops answering (HTTP date), once decided.'),
};

const ERROR_DESCRIPTIONS: Record<string, string> = {
  '400': 'validation_failed (every violated rule in errors), invalid_json, invalid_cursor.',
  '401': 'unauthenticated: no, unknown, expired or revoked token.',
  '403': 'insufficient_scope (the token lacks the scope), editor_required (writes need an editor).',
  '404': 'not_found: the resource the path names does not exist or belongs to another team.',
  '405': 'method_not_allowed: the path exists with other methods (Allow).',
  '409': 'idempotency_key_in_progress: the first request with this key is still running (Retry-After).',
  '413': 'payload_too_large: the body exceeds the route limit.',
  '415': 'unsupported_media_type: the body is not application/json.',
  '422': 'idempotency_key_reused: the key was used with another method, path or body.',
  '429': 'rate_limited: the token spent its window (Retry-After).',
  '503': 'unavailable: a backing store is unreachable (Retry-After).',
};

export interface DocumentOptions {
  /** Developer tokens are rate limited and scoped (429, 403, RateLimit headers); the admin token is not. */
  tokens: 'developer' | 'admin';
  servers: Array<{ url: string; description: string }>;
  tags: Array<{ name: string; description: string }>;
}

function ref(kind: 'schemas' | 'headers', name: string): Json {
  return { $ref: `#/components/${kind}/${name}` };
}

function problemResponse(status: string, extra?: string): Json {
  return { description: [ERROR_DESCRIPTIONS[status], extra].filter(Boolean).join(' '), content: { [PROBLEM]: { schema: ref('schemas', 'Problem') } } };
}

/** OpenAPI 3.0 `nullable` to 3.1 JSON Schema types, everywhere in a schema tree. */
function toJsonSchemaNulls(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(toJsonSchemaNulls);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as Json;
  for (const value of Object.values(schema)) toJsonSchemaNulls(value);
  if (schema.nullable === true) {
    delete schema.nullable;
    if (schema.$ref || schema.allOf) {
      // A nullable reference: the referenced schema, or null.
      const inner = schema.$ref ? { $ref: schema.$ref } : schema.allOf.length === 1 ? schema.allOf[0] : { allOf: schema.allOf };
      delete schema.$ref;
      delete schema.allOf;
      delete schema.type;
      schema.oneOf = [inner, { type: 'null' }];
    } else if (typeof schema.type === 'string') schema.type = [schema.type, 'null'];
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) schema.enum.push(null);
  }
  if (schema.nullable === false) delete schema.nullable;
}

function isWrite(method: string): boolean {
  return ['post', 'put', 'patch', 'delete'].includes(method);
}

function completeOperation(path: string, method: string, operation: Json, options: DocumentOptions): void {
  const parameters: Json[] = (operation.parameters ??= []);
  if (method === 'post' && !parameters.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key')) {
    // Honoured on every POST (http-conventions): documented on every POST.
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: '1-255 printable ASCII characters; for 24 hours the same key with the same body replays the first answer.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }
  const pathParams = parameters.filter((p) => p.in === 'path');
  const queryParams = parameters.filter((p) => p.in === 'query');
  const idempotent = parameters.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'idempotency-key');
  for (const param of pathParams) {
    // Every path parameter is an id (pathId): a positive base-10 integer; anything else is 404.
    param.schema = { type: 'integer', minimum: 1 };
    param.description ??= `Id of the ${String(param.name).replace(/ID$/, '')}; anything but a positive integer is 404.`;
  }
  for (const param of queryParams) {
    // QueryReader reads numbers as base-10 integers only.
    if (param.schema?.type === 'number') param.schema.type = 'integer';
  }

  const responses: Json = (operation.responses ??= {});
  const errors: Array<[string, string?]> = [];
  if (operation.requestBody || queryParams.length > 0 || idempotent) errors.push(['400']);
  errors.push(['401']);
  if (options.tokens === 'developer') errors.push(['403']);
  if (pathParams.length > 0) errors.push(['404']);
  if (idempotent) errors.push(['409'], ['422']);
  if (operation.requestBody) errors.push(['413'], ['415']);
  if (options.tokens === 'developer') errors.push(['429']);
  errors.push(['503']);
  for (const [status] of errors) {
    const declared = responses[status];
    if (!declared) responses[status] = problemResponse(status);
    else if (!declared.content) responses[status] = { ...problemResponse(status, declared.description), description: [ERROR_DESCRIPTIONS[status], declared.description].filter(Boolean).join(' ') };
  }
  for (const [status, response] of Object.entries(responses)) {
    const code = Number(status);
    if (code >= 400 && !response.content) response.content = { [PROBLEM]: { schema: ref('schemas', 'Problem') } };
    if (code >= 400 && !response.description) response.description = ERROR_DESCRIPTIONS[status] ?? 'Problem details.';
  }
  if (isWrite(method) && !responses['202']) {
    responses['202'] = { description: 'views_behind: recorded, but the views did not show it within the read-your-writes bound.', content: { 'application/json': { schema: ref('schemas', 'ViewsBehind') } } };
  }

  for (const [status, response] of Object.entries(responses) as Array<[string, Json]>) {
    const code = Number(status);
    const answerHeaders: Json = { 'X-Request-Id': ref('headers', 'X-Request-Id') };
    if (options.tokens === 'developer') {
      for (const name of ['RateLimit-Policy', 'RateLimit', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) answerHeaders[name] = ref('headers', name);
    }
    if (code >= 200 && code < 300 && idempotent) answerHeaders['Idempotent-Replayed'] = ref('headers', 'Idempotent-Replayed');
    if (code === 201) answerHeaders.Location = ref('headers', 'Location');
    if ([409, 429, 503].includes(code)) answerHeaders['Retry-After'] = ref('headers', 'Retry-After');
    if (code === 401 || code === 403) answerHeaders['WWW-Authenticate'] = ref('headers', 'WWW-Authenticate');
    if (operation.deprecated && code >= 200 && code < 300) {
      for (const name of ['Deprecation', 'Link', 'Sunset']) answerHeaders[name] = ref('headers', name);
    }
    response.headers = { ...answerHeaders, ...(response.headers ?? {}) };
    response.description ||= code === 204 ? 'Done; no body.' : 'OK.';
  }
  operation.summary ??= `${method.toUpperCase()} ${path}`;
}

/** Completes a document Nest generated from the controllers; see the file comment. */
export function completeDocument(document: OpenAPIObject, options: DocumentOptions): OpenAPIObject {
  const doc = document as unknown as Json;
  doc.openapi = OPENAPI_VERSION;
  doc.servers = options.servers;
  doc.tags = options.tags;
  doc.components ??= {};
  doc.components.schemas = { ...(doc.components.schemas ?? {}), ...schemas };
  doc.components.headers = { ...headers };
  for (const [path, item] of Object.entries(doc.paths ?? {}) as Array<[string, Json]>) {
    for (const [method, operation] of Object.entries(item)) completeOperation(path, method, operation as Json, options);
  }
  doc.info.license ??= { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' };
  toJsonSchemaNulls(doc.components.schemas);
  toJsonSchemaNulls(doc.paths);
  dropUnusedComponents(doc);
  return document;
}

/** Nest puts every DTO of the application in each document: keep those this one's paths reach. */
function dropUnusedComponents(doc: Json): void {
  const used = new Set<string>();
  const visit = (node: unknown): void => {
    const text = JSON.stringify(node);
    for (const match of text.matchAll(/"#\/components\/(schemas|headers)\/([^"]+)"/g)) {
      const key = `${match[1]}/${match[2]}`;
      if (used.has(key)) continue;
      used.add(key);
      visit(doc.components[match[1]]?.[match[2]]);
    }
  };
  visit(doc.paths);
  for (const kind of ['schemas', 'headers']) {
    for (const name of Object.keys(doc.components[kind] ?? {})) if (!used.has(`${kind}/${name}`)) delete doc.components[kind][name];
  }
}
