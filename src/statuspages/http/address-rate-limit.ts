import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problems, type Problem } from '../../platform/http/problem.js';
import { RateLimiter } from '../../platform/http/rate-limiter.js';
import type { CoordinationStore } from '../../platform/coordination/coordination.port.js';

/**
 * The public status routes have no token: they are limited per client address
 * (`STATUS_PAGE_RATE_LIMIT_PER_MINUTE`), with the platform's shared fixed-window limiter, so every
 * API process counts against one window per address. The address is the socket's peer (Fastify's
 * `request.ip`; behind a proxy that is the proxy). Runs before the handler reads anything: a
 * refused request reads no view.
 */
export class AddressRateLimit {
  private readonly limiter: RateLimiter;

  constructor(coordination: CoordinationStore, perMinute: number) {
    this.limiter = new RateLimiter(coordination, perMinute);
  }

  /** Counts the request and sets the RateLimit headers; the 429 to answer when it is refused. */
  async refusal(request: FastifyRequest, reply: FastifyReply): Promise<Problem | null> {
    const now = Date.now();
    const decision = await this.limiter.take(`rate:address:${request.ip}`, now);
    const resetSeconds = Math.max(1, Math.ceil((decision.resetAt - now) / 1000));
    reply.header('ratelimit-limit', String(decision.limit));
    reply.header('ratelimit-remaining', String(decision.remaining));
    reply.header('ratelimit-reset', String(resetSeconds));
    return decision.allowed ? null : Problems.rateLimited(resetSeconds).problem;
  }
}
