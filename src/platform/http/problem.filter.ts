import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PLATFORM, type Platform } from '../platform.js';
import { payloadTooLarge, sendProblem, toProblem } from './http-conventions.js';
import { Problems, ProblemError, type Problem } from './problem.js';
import type { RouteTable } from './route-table.js';
import { ViewsBehindError } from '../projections/views.js';
import type { DomainErrors } from './domain-errors.js';

export const ROUTE_TABLE = Symbol('ROUTE_TABLE');

/**
 * A write whose views did not catch up within the read-your-writes bound: it is recorded and will
 * show, but this answer cannot show it. 202, so the client neither takes the answer for the result
 * nor repeats the write (with an Idempotency-Key, a retry replays this answer).
 */
function sendViewsBehind(reply: FastifyReply, error: ViewsBehindError, requestId: string): void {
  reply
    .code(202)
    .header('content-type', 'application/json; charset=utf-8')
    .send({
      status: 'accepted',
      code: 'views_behind',
      detail: `The change was recorded, but the views did not show it within ${error.waitedMs / 1000} s. Read it with GET in a moment; do not repeat the request.`,
      request_id: requestId,
      ...(error.data === undefined ? {} : { data: error.data }),
    });
}

/** Every error from the Nest pipeline leaves as problem details (see api-decisions.md). */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    @Inject(ROUTE_TABLE) private readonly routes: RouteTable,
    private readonly domainErrors: DomainErrors,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const reply = context.getResponse<FastifyReply>();
    const request = context.getRequest<FastifyRequest>();
    if (exception instanceof ViewsBehindError) {
      sendViewsBehind(reply, exception, String(request.id));
      return;
    }
    sendProblem(reply, this.toProblem(exception, request));
  }

  private toProblem(exception: unknown, request: FastifyRequest): Problem {
    if (exception instanceof ProblemError) return exception.problem;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        const allowed = this.routes.allowedMethods(request.url.split('?')[0]);
        return allowed.length > 0 ? Problems.methodNotAllowed(allowed).problem : Problems.notFound('The route').problem;
      }
      if (status === 413) return payloadTooLarge(request);
      if (status === 415) return Problems.unsupportedMediaType().problem;
      if (status < 500) return Problems.validation([], exception.message).problem;
    }
    return toProblem(exception, this.platform.logger, String(request.id), request, this.domainErrors);
  }
}
