import { resolve } from 'node:path';
import { pemText, readEd25519Pem } from '../ed25519-pem.js';
import { esdbUrlProblem } from '../event-store/eventstoredb/esdb-connection.js';
import { mongoUrlProblem } from '../read-store/mongodb/mongo-connection.js';
import { parseRfc3339 } from '../time/rfc3339.js';
import { DEFAULT_REGION, isRegionName } from './region.js';

export const PROCESS_ROLES = ['all', 'api', 'projector', 'scheduler', 'prober'] as const;
export type ProcessRole = (typeof PROCESS_ROLES)[number];
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** SQLITE_SYNCHRONOUS: the event log's `PRAGMA synchronous` (`applySqliteEventLogPragmas`). */
const SQLITE_SYNCHRONOUS_MODES = ['NORMAL', 'FULL'] as const;

export interface AppConfig {
  port: number;
  host: string;
  dataDir: string;
  /** null: generated on first start and kept under DATA_DIR. */
  adminToken: string | null;
  eventStoreUrl: string | null;
  mongodbUrl: string | null;
  natsUrl: string | null;
  /** Probe queue: JetStream stream replicas (1 on one server, 3 in a cluster). */
  natsStreamReplicas: number;
  /** Probe queue: a job is handed out at most this many times (both adapters). */
  natsMaxDeliver: number;
  /** Probe queue: jobs handed out and unacknowledged across all probers (NATS consumer). */
  natsMaxAckPending: number;
  role: ProcessRole;
  logLevel: LogLevel;
  rateLimitPerMinute: number;
  probeBlockPrivate: boolean;
  /** Probe jobs one prober process runs at once (its share of the shared queue). */
  proberMaxInFlight: number;
  /** Region this process probes from (PROBE_REGION): recorded on its checks, sent as X-Probe-Region. */
  probeRegion: string;
  /**
   * How long an Idempotency-Key claim may stay unfinished before a retry may run the request
   * again (its owner died). Safe at any value: the retry finds what the first attempt appended.
   */
  idempotencyStaleSeconds: number;
  /**
   * How long a write's answer waits for the views that show it (read-your-writes) before it
   * answers 202 `views_behind` instead; an import adds 2 ms per check on top.
   */
  readYourWritesMs: number;
  /** Raw checks older than this many days (from the start of that UTC day) are summarized and removed. */
  checkRetentionDays: number;
  /** v1 analytics `Sunset` header value (RFC 9110 HTTP-date source), null while no date is set. */
  v1SunsetAt: string | null;
  /** Key signing pagination cursors; null derives one from the admin token (embedded only). */
  cursorSigningKey: string | null;
  /** Bearer token `GET /metrics` asks for; null serves it to anyone who can reach it. */
  metricsToken: string | null;
  /** Export `monitor_endpoint_up` and a latency histogram per monitored endpoint. */
  metricsPerEndpoint: boolean;
  /** Notifications: mail server (`smtp://` or `smtps://` URL) and sender; retry delays after each failed attempt. */
  smtpUrl: string | null;
  emailFrom: string;
  notifyRetryScheduleMs: number[] | null;
  /** Absolute base of public links (status pages), without a trailing slash. */
  publicBaseUrl: string;
  /** Public status-page routes: requests per client address per minute. */
  statusPageRateLimitPerMinute: number;
  /** Ed25519 private key (PEM) signing audit exports (docs/audit.md); null: exports are unsigned. Never logged. */
  auditSigningKey: string | null;
}

/** Placeholder values that examples and templates use: they must never guard a real deployment. */
const PLACEHOLDER = /change[-_ ]?me|replace[-_ ]?me|your[-_ ]?(admin[-_ ]?)?(token|secret|key)|^(secret|password|changeit|admin|token|test|example)$/i;

export function isPlaceholderSecret(value: string): boolean {
  return PLACEHOLDER.test(value.trim());
}

/** Credentials in a URL never reach a message. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/?#]*@/i, '$1***@');
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
  /** One URL, or several separated by commas (a cluster's seed servers). */
  const urls = (name: string, schemes: string[]): string | null => {
    const raw = text(name);
    if (raw === null) return null;
    for (const one of raw.split(',').map((part) => part.trim())) {
      try {
        const parsed = new URL(one);
        if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) throw new Error('scheme');
      } catch {
        problems.push(`${name} must be ${schemes.join(' or ')} URLs separated by commas, got "${withoutCredentials(one)}"`);
      }
    }
    return raw;
  };
  /** A connection string judged by the client that will use it; its message is reported as is. */
  const connectionString = (name: string, client: string, problem: (raw: string) => string | null): string | null => {
    const raw = text(name);
    if (raw === null) return null;
    const message = problem(raw);
    if (message !== null) problems.push(`${name} is refused by the ${client} client: ${message}`);
    return raw;
  };
  const secret = (name: string, minLength: number): string | null => {
    const value = text(name);
    if (value === null) return null;
    if (value.length < minLength) problems.push(`${name} must be at least ${minLength} characters`);
    else if (isPlaceholderSecret(value)) problems.push(`${name} is a placeholder value from an example; set a long random secret`);
    return value;
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

  const region = (name: string): string => {
    const raw = text(name);
    if (raw === null) return DEFAULT_REGION;
    if (!isRegionName(raw)) {
      problems.push(`${name} must be 1 to 32 characters of a-z, 0-9 and -, got "${raw}"`);
      return DEFAULT_REGION;
    }
    return raw;
  };

  const adminToken = secret('ADMIN_TOKEN', 16);
  const cursorSigningKey = secret('CURSOR_SIGNING_KEY', 32);
  const metricsToken = secret('METRICS_TOKEN', 16);
  const auditSigningKey = ed25519PrivateKey(text('AUDIT_SIGNING_KEY'), problems);
  const sunset = text('V1_SUNSET_AT');
  if (sunset !== null && parseRfc3339(sunset) === null) problems.push(`V1_SUNSET_AT must be an RFC 3339 date-time, got "${sunset}"`);

  // Checked here only: the event log applies it where it is opened (the service and the CLI
  // tools alike). Any other value used to mean NORMAL without a word, so `full` (lower case)
  // left an operator who asked for fsync on every append without it.
  oneOf('SQLITE_SYNCHRONOUS', SQLITE_SYNCHRONOUS_MODES, 'NORMAL');

  const schedule = text('NOTIFY_RETRY_SCHEDULE_MS');
  if (schedule !== null && !/^\d{1,10}(,\d{1,10}){0,19}$/.test(schedule)) problems.push(`NOTIFY_RETRY_SCHEDULE_MS must be 1 to 20 comma-separated milliseconds, got "${schedule}"`);

  const config: AppConfig = {
    port: integer('PORT', 3000, 0, 65535),
    host: text('HOST') ?? '127.0.0.1',
    dataDir: resolve(text('DATA_DIR') ?? './data'),
    adminToken,
    eventStoreUrl: connectionString('EVENTSTORE_URL', 'EventStoreDB', esdbUrlProblem),
    mongodbUrl: connectionString('MONGODB_URL', 'MongoDB', mongoUrlProblem),
    natsUrl: urls('NATS_URL', ['nats', 'tls', 'ws', 'wss']),
    natsStreamReplicas: integer('NATS_STREAM_REPLICAS', 1, 1, 5),
    natsMaxDeliver: integer('NATS_MAX_DELIVER', 5, 1, 100),
    natsMaxAckPending: integer('NATS_MAX_ACK_PENDING', 10_000, 1, 1_000_000),
    role: oneOf('ROLE', PROCESS_ROLES, 'all'),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    rateLimitPerMinute: integer('RATE_LIMIT_PER_MINUTE', 1200, 1, 1_000_000),
    probeBlockPrivate: bool('PROBE_BLOCK_PRIVATE', false),
    proberMaxInFlight: integer('PROBER_MAX_IN_FLIGHT', 256, 1, 10_000),
    probeRegion: region('PROBE_REGION'),
    idempotencyStaleSeconds: integer('IDEMPOTENCY_STALE_SECONDS', 60, 1, 86_400),
    readYourWritesMs: integer('READ_YOUR_WRITES_TIMEOUT_MS', 5000, 100, 600_000),
    checkRetentionDays: integer('CHECK_RETENTION_DAYS', 90, 1, 3650),
    v1SunsetAt: sunset,
    cursorSigningKey,
    metricsToken,
    metricsPerEndpoint: bool('METRICS_PER_ENDPOINT', false),
    smtpUrl: urls('SMTP_URL', ['smtp', 'smtps']),
    emailFrom: text('EMAIL_FROM') ?? 'monitor@localhost',
    notifyRetryScheduleMs: schedule === null ? null : schedule.split(',').map(Number),
    publicBaseUrl: '',
    statusPageRateLimitPerMinute: integer('STATUS_PAGE_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    auditSigningKey,
  };
  const base = text('PUBLIC_BASE_URL');
  if (base !== null && !(URL.canParse(base) && /^https?:$/.test(new URL(base).protocol))) {
    problems.push(`PUBLIC_BASE_URL must be an http or https URL, got "${withoutCredentials(base)}"`);
  }
  config.publicBaseUrl = (base ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`).replace(/\/+$/, '');
  // Shared stores mean processes on several hosts: a token or key each one generated for itself
  // would make admin calls and pagination cursors work on one API process and fail on the next.
  if (config.eventStoreUrl !== null || config.mongodbUrl !== null) {
    const shared = 'must be set, the same in every process, when EVENTSTORE_URL or MONGODB_URL is set';
    if (adminToken === null) problems.push(`ADMIN_TOKEN ${shared}`);
    if (cursorSigningKey === null) problems.push(`CURSOR_SIGNING_KEY ${shared}`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * AUDIT_SIGNING_KEY: an Ed25519 private key in PEM, with real newlines or `\n` escapes on one
 * line. A problem names the variable, never the value.
 */
function ed25519PrivateKey(pem: string | null, problems: string[]): string | null {
  if (pem === null) return null;
  const read = readEd25519Pem(pem, 'private');
  if ('key' in read) return pemText(pem);
  problems.push(
    read.problem === 'not_pem'
      ? 'AUDIT_SIGNING_KEY must be an Ed25519 private key in PEM (openssl genpkey -algorithm ed25519)'
      : `AUDIT_SIGNING_KEY must be an Ed25519 private key (openssl genpkey -algorithm ed25519), got a ${read.type ?? 'different'} key`,
  );
  return null;
}
