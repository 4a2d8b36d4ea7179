import type { FastifyBaseLogger } from 'fastify';

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
