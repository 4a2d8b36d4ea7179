import type { RateDecision } from './rate-limiter.js';

/** Name of the one quota policy: requests per API token per fixed window, shared by every API process. */
export const RATE_LIMIT_POLICY = 'per-token';

/**
 * The rate-limit response fields: `RateLimit-Policy` and `RateLimit` as structured fields (RFC 9651
 * Lists of parameterised Strings) in the syntax of draft-ietf-httpapi-ratelimit-headers-11, and
 * the earlier drafts' `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, which clients
 * already read. `q` is the quota, `w` the window in seconds (the default quota unit, requests,
 * goes unsaid); `r` is what is left, `t` the seconds until the window resets.
 */
export function rateLimitFields(decision: RateDecision, resetSeconds: number, windowSeconds: number): Record<string, string> {
  return {
    'ratelimit-policy': `"${RATE_LIMIT_POLICY}";q=${decision.limit};w=${windowSeconds}`,
    ratelimit: `"${RATE_LIMIT_POLICY}";r=${decision.remaining};t=${resetSeconds}`,
    'ratelimit-limit': String(decision.limit),
    'ratelimit-remaining': String(decision.remaining),
    'ratelimit-reset': String(resetSeconds),
  };
}
