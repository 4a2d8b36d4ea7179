import { ConcurrencyError } from '../es/stream-command.js';
import type { DomainErrors } from './domain-errors.js';
import { runIdempotent } from '../es/idempotency-scope.js';
import { hash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CoordinationStore, IdempotencyClaim } from '../coordination/coordination.port.js';
import { StoreUnavailableError } from '../event-store/event-store.port.js';
import { ViewRebuildingError } from '../projections/views.js';
import type { Logger } from '../logging/logger.js';
import type { AppConfig } from '../config/config.js';
import { canonicalJson } from '../canonical-json.js';
import { lingerBeforeClose } from './lingering-close.js';
import { MAX_JSON_DEPTH, parseJsonBody } from './json-body.js';
import { Problems, ProblemError, problemBody, type Problem } from './problem.js';
import { RateLimiter, WINDOW_MS } from './rate-limiter.js';
import { rateLimitFields } from './ratelimit-fields.js';
import type { Principal, RouteAuth, RouteOptions, TokenVerifier } from './route-auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
    idempotencyKey?: string;
    /** Where a 201 answer's resource lives, when not `<request path>/<data.id>` (see createdAt). */
    createdLocation?: string;
  }
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;
/** Hard ceiling for routes that raise their limit (check import). */
export const MAX_BODY_LIMIT = 32 * 1024 * 1024;
const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** An in-progress key whose request died (process crash) may be taken over after this, or at once once its process is shown gone. */
const IDEMPOTENCY_STALE_MS = 60 * 1000;
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

export interface HttpConventionsDeps {
  adminToken: string;
  tokens: () => TokenVerifier;
  coordination: CoordinationStore;
  rateLimitPerMinute: number;
  logger: Logger;
  /** An unfinished Idempotency-Key claim older than this may be run again (default 60 s). */
  idempotencyStaleMs?: number;
  /**
   * This process's instance id (platform.instanceId): recorded with each claim, so a claim left
   * by a process that is gone is run again at once where the store can tell (SQLite).
   */
  instanceId?: string;
  /** What a route's own answer headers are made from (RouteOptions.headers). */
  config: AppConfig;
}

export function sha256(text: string): string {
  return hash('sha256', text, 'hex');
}

function routeOptions(request: FastifyRequest): RouteOptions | undefined {
  return (request.routeOptions?.config as unknown as Partial<RouteOptions> | undefined)?.auth
    ? (request.routeOptions.config as unknown as RouteOptions)
    : undefined;
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  reply.header('x-request-id', reply.request.id);
  for (const [name, value] of Object.entries(problem.headers ?? {})) reply.header(name, value);
  return reply.code(problem.status).type('application/problem+json').send(problemBody(problem, String(reply.request.id)));
}

/** The body limit of the route a request matched (the default when it matched none). */
export function bodyLimitOf(request: FastifyRequest | undefined): number {
  return (request && routeOptions(request)?.bodyLimit) ?? DEFAULT_BODY_LIMIT;
}

/**
 * A body over the route's limit. Reading stopped there, so the rest of it is still on the
 * connection: the answer closes it (`Connection: close`) rather than read an unbounded body to
 * keep the connection, and the close lingers (lingering-close.ts) so the client reads the 413.
 */
export function payloadTooLarge(request: FastifyRequest | undefined): Problem {
  return { ...Problems.payloadTooLarge(bodyLimitOf(request)).problem, headers: { connection: 'close' } };
}

/** The client went away before its request was read: nothing to answer, nothing wrong here. */
function isClientAbort(error: unknown, request: FastifyRequest | undefined): boolean {
  const code = (error as { code?: string })?.code;
  const message = (error as { message?: string })?.message;
  return code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || message === 'aborted' || request?.raw.destroyed === true;
}

/**
 * Maps anything thrown to a problem; unknown errors never leak their message. Domain errors read
 * as their context maps them (`domainErrors`, given where route handlers' errors arrive);
 * framework errors (body reading, URL decoding, router limits) get their own codes; anything
 * else is a 500.
 */
export function toProblem(error: unknown, logger: Logger, requestId: string, request?: FastifyRequest, domainErrors?: DomainErrors): Problem {
  if (error instanceof ProblemError) return error.problem;
  const fromDomain = domainErrors?.problem(error);
  if (fromDomain) return fromDomain;
  if (error instanceof ConcurrencyError) {
    return Problems.conflict('concurrent_update', 'The resource was changed by concurrent requests; retry.').problem;
  }
  if (error instanceof ViewRebuildingError) {
    logger.warn({ projection: error.projection, reqId: requestId }, error.message);
    return Problems.unavailable('A view this route reads is being rebuilt after an upgrade. Retry shortly.', 30).problem;
  }
  if (error instanceof StoreUnavailableError) {
    logger.error({ err: error, reqId: requestId }, 'backing store unavailable');
    return Problems.unavailable().problem;
  }
  const code = (error as { code?: string })?.code;
  const status = (error as { statusCode?: number })?.statusCode;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || status === 413) return payloadTooLarge(request);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || status === 415) return Problems.unsupportedMediaType().problem;
  if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return Problems.invalidJson('The body length does not match Content-Length.').problem;
  if (code === 'FST_ERR_BAD_URL') return Problems.invalidUrl().problem;
  if (code === 'FST_ERR_MAX_PARAM_LENGTH') return Problems.notFound().problem;
  if (isClientAbort(error, request)) {
    logger.info({ request_id: requestId, code }, 'client closed the connection before the request was read');
    return { ...Problems.badRequest('The client closed the connection before the request was read.').problem, headers: { connection: 'close' } };
  }
  if (typeof status === 'number' && status >= 400 && status < 500) return Problems.badRequest().problem;
  logger.error({ err: error, reqId: requestId }, 'unhandled error');
  return Problems.internal().problem;
}

function bearerToken(request: FastifyRequest): { sent: boolean; token: string | null } {
  const header = request.headers.authorization;
  if (!header) return { sent: false, token: null };
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(header);
  return { sent: true, token: match ? match[1] : null };
}

function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(sha256(a));
  const right = Buffer.from(sha256(b));
  return timingSafeEqual(left, right);
}

async function authenticate(request: FastifyRequest, auth: RouteAuth, deps: HttpConventionsDeps): Promise<Principal | null> {
  const { sent, token } = bearerToken(request);
  if (!token) throw Problems.unauthenticated(sent, 'malformed');
  if (auth.kind === 'admin') {
    if (safeEqual(token, deps.adminToken)) return { kind: 'admin' };
    // A team token sent to the application API: say so (the caller holds it; nothing leaks).
    const record = await deps.tokens().findByHash(sha256(token), request);
    throw Problems.unauthenticated(true, record ? 'developer_token_on_admin_api' : 'invalid');
  }
  if (auth.kind !== 'token') return null;
  const record = await deps.tokens().findByHash(sha256(token), request);
  const now = Date.now();
  if (!record) throw Problems.unauthenticated(true, safeEqual(token, deps.adminToken) ? 'admin_token_on_developer_api' : 'invalid');
  if (record.revokedAt !== null) throw Problems.unauthenticated(true, 'revoked');
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now) throw Problems.unauthenticated(true, 'expired');
  deps.tokens().touched(record.tokenId, record.teamId);
  return { kind: 'token', tokenId: record.tokenId, teamId: record.teamId, scopes: record.scopes, role: record.role };
}

function checkScope(principal: Principal, auth: RouteAuth): void {
  if (principal.kind !== 'token' || auth.kind !== 'token') return;
  if (!principal.scopes.includes(auth.scope)) throw Problems.insufficientScope(auth.scope);
  if (auth.editor && principal.role !== 'editor') throw Problems.editorRequired();
}

/** A developer token sent to a path no route matches: counted, so the 404/405 carries RateLimit headers. */
async function optionalToken(request: FastifyRequest, deps: HttpConventionsDeps): Promise<Principal | null> {
  const { token } = bearerToken(request);
  if (!token) return null;
  return authenticate(request, { kind: 'token', scope: 'monitoring:read' }, deps).catch((error: unknown) => {
    if (error instanceof ProblemError) return null;
    throw error;
  });
}

/** Counts the request and sets the RateLimit headers; the 429 itself is the caller's (after scope). */
async function applyRateLimit(reply: FastifyReply, principal: Principal, limiter: RateLimiter): Promise<ProblemError | null> {
  if (principal.kind !== 'token') return null;
  const now = Date.now();
  const decision = await limiter.take(`rate:token:${principal.tokenId}`, now);
  const resetSeconds = Math.max(1, Math.ceil((decision.resetAt - now) / 1000));
  // Set now, so that every response (problem details included) carries them.
  for (const [name, value] of Object.entries(rateLimitFields(decision, resetSeconds, WINDOW_MS / 1000))) reply.header(name, value);
  return decision.allowed ? null : Problems.rateLimited(resetSeconds);
}

function idempotencyScope(principal: Principal | undefined): string {
  return principal?.kind === 'token' ? `team:${principal.teamId}` : 'admin';
}

async function claimIdempotencyKey(request: FastifyRequest, reply: FastifyReply, deps: HttpConventionsDeps): Promise<boolean> {
  const header = request.headers['idempotency-key'];
  if (request.method !== 'POST' || header === undefined) return false;
  // Already claimed by this request: Nest hands a route match with an empty path parameter to
  // the not-found handler, which runs the hooks a second time.
  if (request.idempotencyKey) return false;
  const key = Array.isArray(header) ? header[0] : header;
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw Problems.validation([{ field: 'Idempotency-Key', code: 'invalid_value', message: 'must be 1 to 255 printable ASCII characters' }]);
  }
  const path = request.url.split('?')[0];
  const fingerprint = sha256(`${request.method} ${path} ${canonicalJson(request.body ?? null)}`);
  const scopedKey = `${idempotencyScope(request.principal)}:${key}`;
  const claim: IdempotencyClaim = await deps.coordination.claimIdempotency(scopedKey, fingerprint, {
    retentionMs: IDEMPOTENCY_RETENTION_MS,
    staleAfterMs: deps.idempotencyStaleMs ?? IDEMPOTENCY_STALE_MS,
    owner: deps.instanceId,
  });
  switch (claim.outcome) {
    case 'claimed':
      request.idempotencyKey = scopedKey;
      return false;
    case 'in_progress':
      throw Problems.conflict('idempotency_key_in_progress', 'A request with this Idempotency-Key is still being processed.', { 'retry-after': '1' });
    case 'fingerprint_mismatch':
      throw Problems.unprocessable('idempotency_key_reused', 'This Idempotency-Key was used with another method, path or body.');
    case 'completed': {
      for (const [name, value] of Object.entries(claim.response.headers ?? {})) reply.header(name, value);
      reply.header('idempotent-replayed', 'true').code(claim.response.status).send(claim.response.body as string);
      return true;
    }
  }
}

/**
 * Kept with a stored answer and set again on its replay. `x-request-id` included: a replay is
 * the first request's answer, so its header names the request its body names.
 */
const REPLAYED_HEADERS = ['content-type', 'location', 'x-request-id'];

async function settleIdempotencyKey(request: FastifyRequest, reply: FastifyReply, payload: unknown, deps: HttpConventionsDeps) {
  const key = request.idempotencyKey;
  if (!key) return;
  request.idempotencyKey = undefined;
  if (reply.statusCode >= 500) {
    await deps.coordination.releaseIdempotency(key);
    return;
  }
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  const body = typeof payload === 'string' ? payload : '';
  await deps.coordination.completeIdempotency(key, { status: reply.statusCode, body: withoutSecrets(body, routeOptions(request)?.secretFields), headers });
}

/** The response as a replay may show it: the route's once-only secrets set to null in `data`. */
function withoutSecrets(body: string, secretFields: string[] | undefined): string {
  if (!secretFields?.length || body === '') return body;
  const document = JSON.parse(body) as { data?: Record<string, unknown> };
  if (document.data === null || typeof document.data !== 'object') return body;
  for (const field of secretFields) if (field in document.data) document.data[field] = null;
  return JSON.stringify(document);
}

/** A body whose resource starts with its id (as every created resource here does): read without parsing the rest. */
const LEADING_ID = /^\{"data":\{"id":(\d{1,16})[,}]/;

/** `<collection path>/<data.id>` for a 201 whose body names the created resource's id. */
function createdLocation(path: string, payload: unknown): string | null {
  if (typeof payload !== 'string' || !payload.startsWith('{"data":{')) return null;
  const leading = LEADING_ID.exec(payload);
  const id = leading ? Number(leading[1]) : (JSON.parse(payload) as { data?: { id?: unknown } }).data?.id;
  return Number.isSafeInteger(id) ? `${path.replace(/\/+$/, '')}/${id as number}` : null;
}

/** For a route whose created resource is not `<request path>/<id>`: where the 201's Location points. */
export function createdAt(request: FastifyRequest, location: string): void {
  request.createdLocation = location;
}

/**
 * HTTP/1.1 requires a Host header (RFC 9112 section 3.2). Node's parser would answer a bare 400
 * itself (`requireHostHeader`, turned off in http-app.ts), so the refusal is made here and
 * leaves as problem details with a request id like every other error. The connection is closed
 * after it, as Node did.
 */
function refuseWithoutHost(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void {
  const raw = request.raw;
  if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1 && !raw.headers.host) {
    reply.header('x-request-id', request.id);
    done(new ProblemError({ ...Problems.badRequest('An HTTP/1.1 request must carry a Host header.').problem, headers: { connection: 'close' } }));
    return;
  }
  done();
}

/**
 * The HTTP conventions every route shares, as Fastify hooks so their order is exact:
 * authentication, scope/role and rate limit before the body is read; idempotency replay before
 * the handler; request id, rate-limit headers and problem details on every response.
 */
export function installHttpConventions(fastify: FastifyInstance, deps: HttpConventionsDeps): void {
  const limiter = new RateLimiter(deps.coordination, deps.rateLimitPerMinute);
  fastify.addHook('onRequest', refuseWithoutHost);
  fastify.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const options = routeOptions(request);
    if (!options) {
      // No route: the answer is 404 or 405, but a developer token's request still counts (once:
      // a route that hands the request to the not-found handler has counted it already).
      if (request.principal) return;
      // The answer stays 404/405 even when the quota is spent: only routes are refused with 429.
      const principal = await optionalToken(request, deps);
      if (principal) await applyRateLimit(reply, principal, limiter);
      return;
    }
    if (options.headers) for (const [name, value] of Object.entries(options.headers(deps.config))) reply.header(name, value);
    if (options.auth.kind === 'public') return;
    const principal = await authenticate(request, options.auth, deps);
    if (principal) {
      request.principal = principal;
      // Counted before the scope check so a 403 carries the RateLimit headers too; the order of
      // answers stays authentication, scope and role, then 429.
      const refused = await applyRateLimit(reply, principal, limiter);
      checkScope(principal, options.auth);
      if (refused) throw refused;
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
    if (declared > limit) throw new ProblemError(payloadTooLarge(request));
  });

  // Idempotency only concerns POSTs that carry a key: the other requests pass without a promise.
  // A claimed request's handler runs inside its idempotency scope, so every event it appends
  // carries the key and a retry finds in the log what an earlier attempt did (platform/es).
  fastify.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST' || request.headers['idempotency-key'] === undefined) return done();
    claimIdempotencyKey(request, reply, deps).then(
      (replayed) => {
        if (!replayed) runIdempotent(request.idempotencyKey!, () => done());
      },
      (error: Error) => done(error),
    );
  });

  // An answer that closes the connection while the request is still arriving (a 413 during the
  // upload) lets the client finish reading it before the socket goes (lingering-close.ts).
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && String(reply.getHeader('connection')).toLowerCase() === 'close') lingerBeforeClose(request.raw.socket);
    done(null, payload);
  });

  // A 201 names what it created; registered before the idempotency hook so replays keep it.
  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 201 && reply.getHeader('location') === undefined) {
      const location = request.createdLocation ?? createdLocation(request.url.split('?')[0], payload);
      if (location) reply.header('location', location);
    }
    done(null, payload);
  });

  fastify.addHook('onSend', (request, reply, payload, done) => {
    if (!request.idempotencyKey) return done(null, payload);
    settleIdempotencyKey(request, reply, payload, deps).then(() => done(null, payload), done);
  });

  const releaseAbandoned = async (key: string) => {
    await deps.coordination.releaseIdempotency(key).catch(() => undefined);
  };
  fastify.addHook('onResponse', (request, reply, done) => {
    if (!request.idempotencyKey) return done();
    return releaseAbandoned(request.idempotencyKey);
  });

  // Each route's body limit is Fastify's own, so bytes are counted as they arrive (chunked bodies
  // included) and reading stops at the limit instead of after the whole stream.
  fastify.addHook('onRoute', (route) => {
    const options = (route.config as unknown as Partial<RouteOptions> | undefined) ?? {};
    route.bodyLimit = Math.min(options.bodyLimit ?? DEFAULT_BODY_LIMIT, MAX_BODY_LIMIT);
  });

  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: DEFAULT_BODY_LIMIT }, (request, body, done) => {
    const text = body as string;
    if (text.trim() === '') return done(null, undefined);
    const parsed = parseJsonBody(text);
    if (parsed.ok) return done(null, parsed.value);
    if (parsed.reason === 'too_deep') return done(Problems.jsonTooDeep(MAX_JSON_DEPTH), undefined);
    return done(parsed.reason === 'forbidden_key' ? Problems.forbiddenJsonKey() : Problems.invalidJson(), undefined);
  });
}
