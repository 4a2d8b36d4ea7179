/**
 * Short public texts for why a check failed, each with a stable prefix that callers may match on.
 * They name the cause and the public host, never the path, query, headers, bodies or tokens, and
 * never copy a library error message (those can quote request details).
 */

export const FAILURE_PREFIXES = ['dns', 'refused', 'timeout', 'tls', 'blocked', 'status', 'body', 'network'] as const;
export type FailurePrefix = (typeof FAILURE_PREFIXES)[number];

export interface FailureTarget {
  host: string;
  port: number;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA', 'ESERVFAIL']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
const CLOSED_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const UNREACHABLE_CODES = new Set(['EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN']);
/** OpenSSL verification codes too: an untrusted chain is UNABLE_TO_VERIFY_LEAF_SIGNATURE. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|UNABLE_TO_)|CERT|EPROTO/;

export function timeoutReason(seconds: number, phase: 'response' | 'body'): string {
  return phase === 'response'
    ? `timeout: no response within ${seconds} s`
    : `timeout: body not complete within ${seconds} s`;
}

export function statusReason(expected: number | string, actual: number): string {
  return `status: expected ${expected}, got ${actual}`;
}

export function bodyReason(reason: string): string {
  return `body: ${reason}`;
}

/** Names the cause of a transport error (no response, or the response broke off). */
export function transportFailureReason(error: unknown, target: FailureTarget): string {
  const code = errorCode(error);
  const where = `${target.host}:${target.port}`;
  if (code === 'E_PROBE_BLOCKED_ADDRESS') {
    const range = (error as { range?: unknown }).range;
    return `blocked: ${target.host} resolves to a non-public address (${String(range)})`;
  }
  if (code === undefined) return 'network: request failed';
  if (code === 'UND_ERR_INVALID_ARG') return 'network: request not sent (invalid header, method or payload)';
  if (DNS_CODES.has(code)) return `dns: ${target.host} could not be resolved (${code})`;
  if (code === 'ECONNREFUSED') return `refused: ${where} refused the connection`;
  if (TIMEOUT_CODES.has(code)) return `timeout: ${where} did not answer in time (${code})`;
  if (TLS_CODE.test(code)) return `tls: handshake with ${where} failed (${code})`;
  if (CLOSED_CODES.has(code)) return `network: connection to ${where} closed unexpectedly (${code})`;
  if (UNREACHABLE_CODES.has(code)) return `network: ${where} is unreachable (${code})`;
  return `network: request to ${where} failed (${code})`;
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
