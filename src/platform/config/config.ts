import { resolve } from 'node:path';

export const PROCESS_ROLES = ['all', 'api', 'projector', 'scheduler', 'prober'] as const;
export type ProcessRole = (typeof PROCESS_ROLES)[number];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  /** null: generated on first start and kept under DATA_DIR. */
  adminToken: string | null;
  eventStoreUrl: string | null;
  mongodbUrl: string | null;
  natsUrl: string | null;
  role: ProcessRole;
  logLevel: LogLevel;
  rateLimitPerMinute: number;
  probeBlockPrivate: boolean;
  /** Probe jobs one prober process runs at once (its share of the shared queue). */
  proberMaxInFlight: number;
  /**
   * How long an Idempotency-Key claim may stay unfinished before a retry may run the request
   * again (its owner died). Safe at any value: the retry finds what the first attempt appended.
   */
  idempotencyStaleSeconds: number;
  /** v1 analytics `Sunset` header value (RFC 9110 HTTP-date source), null while no date is set. */
  v1SunsetAt: string | null;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Reads and validates the environment; every problem is reported at once. */
export function loadConfig(env: Env = process.env): AppConfig {
  const problems: string[] = [];
  const text = (name: string): string | null => {
    const value = env[name]?.trim();
    return value ? value : null;
  };
  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = text(name);
    if (raw === null) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
      return fallback;
    }
    return Number(raw);
  };
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = text(name);
    if (raw === null) return fallback;
    if (!(allowed as readonly string[]).includes(raw)) {
      problems.push(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
      return fallback;
    }
    return raw as T;
  };
  const url = (name: string, schemes: string[]): string | null => {
    const raw = text(name);
    if (raw === null) return null;
    try {
      const parsed = new URL(raw);
      if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) throw new Error('scheme');
    } catch {
      problems.push(`${name} must be a ${schemes.join(' or ')} URL, got "${raw}"`);
    }
    return raw;
  };
  const bool = (name: string, fallback: boolean): boolean => {
    const raw = text(name);
    if (raw === null) return fallback;
    if (raw !== 'true' && raw !== 'false') {
      problems.push(`${name} must be true or false, got "${raw}"`);
      return fallback;
    }
    return raw === 'true';
  };

  const adminToken = text('ADMIN_TOKEN');
  if (adminToken !== null && adminToken.length < 16) problems.push('ADMIN_TOKEN must be at least 16 characters');
  const sunset = text('V1_SUNSET_AT');
  if (sunset !== null && Number.isNaN(Date.parse(sunset))) problems.push(`V1_SUNSET_AT must be a date, got "${sunset}"`);

  const config: AppConfig = {
    port: integer('PORT', 3000, 0, 65535),
    host: text('HOST') ?? '127.0.0.1',
    dataDir: resolve(text('DATA_DIR') ?? './data'),
    adminToken,
    eventStoreUrl: url('EVENTSTORE_URL', ['esdb', 'esdb+discover', 'kurrentdb', 'kurrentdb+discover']),
    mongodbUrl: url('MONGODB_URL', ['mongodb', 'mongodb+srv']),
    natsUrl: url('NATS_URL', ['nats', 'tls', 'ws', 'wss']),
    role: oneOf('ROLE', PROCESS_ROLES, 'all'),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 1200, 1, 1_000_000),
    probeBlockPrivate: bool('PROBE_BLOCK_PRIVATE', false),
    proberMaxInFlight: integer('PROBER_MAX_IN_FLIGHT', 256, 1, 10_000),
    idempotencyStaleSeconds: integer('IDEMPOTENCY_STALE_SECONDS', 60, 1, 86_400),
    v1SunsetAt: sunset,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
