import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs on stdout; every HTTP log line carries the request id (see http/). */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: { pid: process.pid, ...bindings }, timestamp: pino.stdTimeFunctions.isoTime });
}

export const silentLogger: Logger = pino({ level: 'silent' });
