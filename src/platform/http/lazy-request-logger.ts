import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';

type Bindings = Record<string, unknown>;
type Log = (...args: unknown[]) => void;

/** A request's logger that makes its pino child (bound to the request id) on first use. */
class LazyRequestLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: object,
  ) {}

  private real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.real().level;
  }

  set level(level: string) {
    this.real().level = level;
  }

  child(bindings: Bindings, options?: object): FastifyBaseLogger {
    return this.real().child(bindings, options);
  }

  fatal(...args: unknown[]): void {
    (this.real().fatal as Log)(...args);
  }

  error(...args: unknown[]): void {
    (this.real().error as Log)(...args);
  }

  warn(...args: unknown[]): void {
    (this.real().warn as Log)(...args);
  }

  info(...args: unknown[]): void {
    (this.real().info as Log)(...args);
  }

  debug(...args: unknown[]): void {
    (this.real().debug as Log)(...args);
  }

  trace(...args: unknown[]): void {
    (this.real().trace as Log)(...args);
  }

  silent(...args: unknown[]): void {
    (this.real().silent as Log)(...args);
  }
}

/**
 * Fastify's `childLoggerFactory`: each request's `request.log` is made only when something logs
 * through it. At the usual levels most requests never log, and a pino child per request is a
 * measurable share of a cheap read.
 */
export function lazyRequestLogger(this: unknown, logger: FastifyBaseLogger, bindings: Bindings, options: object): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}

/** The route's team: the token's own team, else the `:teamID` of an admin route. */
function teamOf(request: FastifyRequest): number | undefined {
  if (request.principal?.kind === 'token') return request.principal.teamId;
  const params = (request.params ?? {}) as Record<string, unknown>;
  const team = Number(params.teamID ?? params.teamId);
  return Number.isSafeInteger(team) && team > 0 ? team : undefined;
}

/**
 * One JSON line per request, after the response: method, route template (never the raw URL, whose
 * query could carry anything), status, duration, request id, team and token id. Never a token,
 * header or body. Health probes and metrics scrapes log at debug so a load balancer or a scraper
 * does not fill the log.
 */
export function logEachRequest(fastify: FastifyInstance): void {
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions?.url ?? null;
    const line = {
      request_id: request.id,
      method: request.method,
      route,
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 10) / 10,
      team_id: teamOf(request),
      token_id: request.principal?.kind === 'token' ? request.principal.tokenId : undefined,
      admin: request.principal?.kind === 'admin' ? true : undefined,
    };
    if (route?.startsWith('/health/') || route === '/metrics') fastify.log.debug(line, 'request');
    else fastify.log.info(line, 'request');
    done();
  });
}
