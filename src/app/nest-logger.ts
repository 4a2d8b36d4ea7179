import type { LoggerService } from '@nestjs/common';
import type { Logger } from '../platform/logging/logger.js';

/**
 * Nest's own messages go through the same JSON logger. Its chatter (a line per module and per
 * mapped route at start-up) is framework internals: trace, so `debug` stays readable.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
