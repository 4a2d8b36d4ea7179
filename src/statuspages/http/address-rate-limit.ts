import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Problems } from '../../platform/http/problem.js';
import { RateLimiter } from '../../platform/http/rate-limiter.js';
import { PLATFORM, type Platform } from '../../platform/platform.js';

/**
 * The public status routes have no token: they are limited per client address
 * (`STATUS_PAGE_RATE_LIMIT_PER_MINUTE`), with the platform's shared fixed-window limiter, so every
 * API process counts against one window per address. The address is the socket's peer (Fastify's
 * `request.ip`; behind a proxy that is the proxy). Runs before the handler: a refused request
 * reads no view.
 */
@Injectable()
export class AddressRateLimitGuard implements CanActivate {
  private readonly limiter: RateLimiter;

  constructor(@Inject(PLATFORM) platform: Platform) {
    this.limiter = new RateLimiter(platform.coordination, platform.config.statusPageRateLimitPerMinute);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    const now = Date.now();
    const decision = await this.limiter.take(`rate:address:${request.ip}`, now);
    const resetSeconds = Math.max(1, Math.ceil((decision.resetAt - now) / 1000));
    reply.header('ratelimit-limit', String(decision.limit));
    reply.header('ratelimit-remaining', String(decision.remaining));
    reply.header('ratelimit-reset', String(resetSeconds));
    if (!decision.allowed) throw Problems.rateLimited(resetSeconds);
    return true;
  }
}
