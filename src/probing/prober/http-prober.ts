/**
 * Executes checks and destination verifications over one shared undici Agent (keep-alive,
 * one connection pool per origin), behind the address guard.
 */
import { performance } from 'node:perf_hooks';
import { TextDecoder } from 'node:util';
import { Agent } from 'undici';
import type { EndpointConfiguration } from '../../monitoring/domain/endpoint-configuration.js';
import type { ProbeOutcome } from '../../checks/domain/check.js';
import { matchBody } from '../domain/body-match.js';
import { DEFAULT_REGION, PROBE_REGION_HEADER } from '../../platform/config/region.js';
import {
  bodyReason,
  statusReason,
  timeoutReason,
  transportFailureReason,
  type FailureTarget,
} from '../domain/failure-reason.js';
import { createGuardedConnector, type Resolver } from './address-guard.js';
import { exchange, type Exchange, type ExchangeRequest } from './exchange.js';
import { PeerCertificates } from './peer-certificates.js';

export interface HttpProberOptions {
  /** Refuse non-public addresses (see address-guard.ts). */
  blockPrivate: boolean;
  /** Body bytes read for matching; default 1 MiB. */
  maxBodyBytes?: number;
  /** Body bytes kept as the internal response excerpt of a failing check; default 512. */
  excerptBytes?: number;
  /**
   * Body bytes kept as the excerpt of a successful check; default 16 (at most excerptBytes).
   * Every check is stored, and a success's page says nothing a failure needs explaining: 512
   * bytes of it were most of a probed check's disk (docs/decisions.md).
   */
  successExcerptBytes?: number;
  /** DNS resolution; the system resolver by default. */
  resolve?: Resolver;
  /** Sent as X-Probe-Region on every probe request (unless the endpoint configures that header); default `local`. */
  region?: string;
}

export type VerificationResult = { ok: true } | { ok: false; reason: string };

export interface HttpProber {
  probe(config: EndpointConfiguration): Promise<ProbeOutcome>;
  fetchVerification(url: string, expectedToken: string): Promise<VerificationResult>;
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
const DEFAULT_EXCERPT_BYTES = 512;
const DEFAULT_SUCCESS_EXCERPT_BYTES = 16;
const VERIFICATION_TIMEOUT_MS = 10_000;
/** A verification page holds a 64-character token; more than this cannot match. */
const VERIFICATION_MAX_BODY_BYTES = 4096;

export function createHttpProber(options: HttpProberOptions): HttpProber {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const excerptBytes = options.excerptBytes ?? DEFAULT_EXCERPT_BYTES;
  const successExcerptBytes = Math.min(options.successExcerptBytes ?? DEFAULT_SUCCESS_EXCERPT_BYTES, excerptBytes);
  const region = options.region ?? DEFAULT_REGION;
  const certificates = new PeerCertificates();
  const agent = new Agent({
    connect: certificates.observing(createGuardedConnector({ blockPrivate: options.blockPrivate, resolve: options.resolve })),
    keepAliveTimeout: 30_000,
  });

  /**
   * An endpoint's configuration is one object from check to check (its stream's fold), and its
   * parsed URL and request follow from it alone: made once per configuration, not per check.
   */
  const prepared = new WeakMap<EndpointConfiguration, PreparedProbe>();
  const prepare = (config: EndpointConfiguration): PreparedProbe => {
    let probe = prepared.get(config);
    if (probe === undefined) {
      const target = parseTarget(config.url);
      probe = target.ok ? { ...target, request: Object.freeze(buildProbeRequest(config, target.url, maxBodyBytes, region)) } : target;
      prepared.set(config, probe);
    }
    return probe;
  };

  return {
    async probe(config) {
      const checkedAt = new Date().toISOString();
      const startedAt = performance.now();
      const target = prepare(config);
      if (!target.ok) return unsentOutcome(target.reason, checkedAt, startedAt);
      const result = await exchange(agent, target.request);
      const outcome = judgeProbe(config, target.failureTarget, result, { checkedAt, startedAt, excerptBytes, successExcerptBytes });
      // Only a response proves the handshake of this exchange succeeded.
      const expiresAt = result.statusCode === 0 ? null : certificates.expiryOf(target.url);
      return expiresAt === null ? outcome : { ...outcome, certificate_expires_at: expiresAt };
    },

    async fetchVerification(url, expectedToken) {
      const target = parseTarget(url);
      if (!target.ok) return { ok: false, reason: target.reason };
      const result = await exchange(agent, {
        origin: target.url.origin,
        path: target.url.pathname + target.url.search,
        method: 'GET',
        headers: {},
        body: null,
        timeoutMs: VERIFICATION_TIMEOUT_MS,
        maxBodyBytes: VERIFICATION_MAX_BODY_BYTES,
      });
      return judgeVerification(result, expectedToken, target.failureTarget);
    },

    close: () => agent.close(),
  };
}

type ParsedTarget = { ok: true; url: URL; failureTarget: FailureTarget } | { ok: false; reason: string };

/** A configuration's parsed target and, when it can be probed, the request a probe sends. Shared: never changed. */
type PreparedProbe = (ParsedTarget & { ok: false }) | (ParsedTarget & { ok: true; request: Readonly<ExchangeRequest> });

function parseTarget(raw: string): ParsedTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'network: invalid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { ok: false, reason: 'network: unsupported URL scheme' };
  }
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { ok: true, url, failureTarget: { host: url.hostname, port } };
}

function buildProbeRequest(config: EndpointConfiguration, url: URL, maxBodyBytes: number, region: string): ExchangeRequest {
  return {
    origin: url.origin, // URL.origin carries no user-info
    path: url.pathname + url.search,
    method: config.method,
    headers: Object.freeze(requestHeaders(config.headers, url, region)),
    body: config.request_payload,
    timeoutMs: config.timeout_seconds * 1000,
    maxBodyBytes,
  };
}

/**
 * URL user-info becomes Basic auth; X-Probe-Region names the prober's region. An explicitly
 * configured Authorization or X-Probe-Region header wins.
 */
function requestHeaders(configured: Record<string, string>, url: URL, region: string): Record<string, string> {
  const headers: Record<string, string> = { [PROBE_REGION_HEADER.toLowerCase()]: region };
  if (url.username || url.password) {
    const credentials = `${decodeUserInfo(url.username)}:${decodeUserInfo(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
  }
  for (const [name, value] of Object.entries(configured)) headers[name.toLowerCase()] = value;
  return headers;
}

/** URL keeps user-info percent-encoded; a malformed escape is sent as written rather than failing. */
function decodeUserInfo(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

interface ProbeClock {
  checkedAt: string;
  startedAt: number;
  excerptBytes: number;
  successExcerptBytes: number;
}

function judgeProbe(
  config: EndpointConfiguration,
  target: FailureTarget,
  result: Exchange,
  clock: ProbeClock,
): ProbeOutcome {
  const failure = probeFailure(config, target, result);
  const requestStart = result.requestStartedAt ?? clock.startedAt;
  return {
    success: failure === null,
    status_code: result.statusCode,
    latency_ms: ms(result.finishedAt - requestStart),
    time_to_first_byte_ms: result.headersAt === null ? 0 : ms(result.headersAt - requestStart),
    duration_ms: ms(result.finishedAt - clock.startedAt),
    body_complete: result.bodyComplete,
    failure_reason: failure,
    response_excerpt: excerpt(result, failure === null ? clock.successExcerptBytes : clock.excerptBytes),
    checked_at: clock.checkedAt,
    loop_busy_ms: result.loopBusyMs === null ? undefined : ms(result.loopBusyMs),
  };
}

/** First failing cause in order: transport, timeout, status, body. null when the check passed. */
function probeFailure(config: EndpointConfiguration, target: FailureTarget, result: Exchange): string | null {
  if (result.timedOut) return timeoutReason(config.timeout_seconds, result.statusCode === 0 ? 'response' : 'body');
  if (result.error !== null) return transportFailureReason(result.error, target);
  if (result.statusCode !== config.expected_status) return statusReason(config.expected_status, result.statusCode);
  const match = matchBody(config.body_match_mode, config.expected_body, result.body.toString('utf8'));
  if (match.ok) return null;
  const cut = result.cutBy === 'limit' ? ` (body cut at ${result.body.length} bytes)` : '';
  return bodyReason(match.reason + cut);
}

function judgeVerification(result: Exchange, token: string, target: FailureTarget): VerificationResult {
  const seconds = VERIFICATION_TIMEOUT_MS / 1000;
  if (result.timedOut) return fail(timeoutReason(seconds, result.statusCode === 0 ? 'response' : 'body'));
  if (result.error !== null) return fail(transportFailureReason(result.error, target));
  if (result.statusCode < 200 || result.statusCode > 299) return fail(statusReason('2xx', result.statusCode));
  // The reason never carries the token or what the page returned.
  if (!result.bodyComplete || result.body.toString('utf8').trim() !== token) return fail('body: token mismatch');
  return { ok: true };
}

function fail(reason: string): VerificationResult {
  return { ok: false, reason };
}

function unsentOutcome(reason: string, checkedAt: string, startedAt: number): ProbeOutcome {
  const elapsed = ms(performance.now() - startedAt);
  return {
    success: false,
    status_code: 0,
    latency_ms: elapsed,
    time_to_first_byte_ms: 0,
    duration_ms: elapsed,
    body_complete: false,
    failure_reason: reason,
    response_excerpt: null,
    checked_at: checkedAt,
  };
}

/** One decoder for every excerpt: making one per check was a measurable share of a check's CPU. */
const excerptDecoder = new TextDecoder('utf-8');
const REPLACEMENT_CHARACTER = '\uFFFD';

/** Decoded without a trailing partial UTF-8 sequence; null when there is no body. */
function excerpt(result: Exchange, excerptBytes: number): string | null {
  if (result.statusCode === 0 || result.body.length === 0) return null;
  const bytes = result.body.subarray(0, excerptBytes);
  const text = excerptDecoder.decode(bytes);
  // Only a cut sequence (or an invalid one) ends in U+FFFD; a streaming decoder of its own
  // holds a cut sequence back instead of replacing it.
  return text.endsWith(REPLACEMENT_CHARACTER) ? new TextDecoder('utf-8').decode(bytes, { stream: true }) : text;
}

function ms(value: number): number {
  return Math.max(0, Math.round(value));
}
