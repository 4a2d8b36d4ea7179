import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { sendProblem } from '../http/http-conventions.js';
import { Problems } from '../http/problem.js';
import type { Metrics } from './metrics.js';

export const METRICS_PATH = '/metrics';
/** Label of requests no route matched: their raw paths would make the label unbounded. */
export const UNMATCHED_ROUTE = '(unmatched)';

function sameSecret(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * `GET /metrics` in the Prometheus text format (behind `METRICS_TOKEN` as a bearer token when
 * set), and an onResponse hook counting and timing every request by its route template.
 */
export function installMetrics(fastify: FastifyInstance, metrics: Metrics, options: { token: string | null }): void {
  // The series of each (method, route, status), resolved once: label hashing per request would
  // cost more than the counting. Bounded like the labels themselves.
  const series = new Map<string, { requests: { inc(): void }; duration: { observe(value: number): void } }>();
  fastify.addHook('onResponse', (request, reply, done) => {
    const method = request.method;
    const route = request.routeOptions?.url ?? UNMATCHED_ROUTE;
    const status = reply.statusCode;
    const key = `${method} ${status} ${route}`;
    let one = series.get(key);
    if (one === undefined) {
      const labels = { method, route, status: String(status) };
      one = { requests: metrics.httpRequests.labels(labels), duration: metrics.httpDuration.labels(labels) };
      series.set(key, one);
    }
    one.requests.inc();
    one.duration.observe(reply.elapsedTime / 1000);
    // 429 is the rate limiter's answer and only its answer.
    if (reply.statusCode === 429) metrics.rateLimitRefusals.inc();
    done();
  });

  fastify.get(METRICS_PATH, async (request, reply) => {
    if (options.token !== null) {
      const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(request.headers.authorization ?? '');
      if (!match || !sameSecret(match[1], options.token)) {
        return sendProblem(reply, Problems.unauthenticated(request.headers.authorization !== undefined).problem);
      }
    }
    const text = await metrics.scrape();
    return reply.header('cache-control', 'no-store').type(metrics.registry.contentType).send(text);
  });
}
