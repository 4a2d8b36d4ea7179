import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Inject } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PLATFORM, type Platform } from '../platform.js';
import { sendProblem, toProblem } from './http-conventions.js';
import { Problems, ProblemError, type Problem } from './problem.js';
import type { RouteTable } from './route-table.js';

export const ROUTE_TABLE = Symbol('ROUTE_TABLE');

/** Every error from the Nest pipeline leaves as problem details (see api-decisions.md). */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  constructor(
    @Inject(PLATFORM) private readonly platform: Platform,
    @Inject(ROUTE_TABLE) private readonly routes: RouteTable,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const context = host.switchToHttp();
    const reply = context.getResponse<FastifyReply>();
    const request = context.getRequest<FastifyRequest>();
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
      if (status === 413) return Problems.payloadTooLarge(0).problem;
      if (status === 415) return Problems.unsupportedMediaType().problem;
      if (status < 500) return Problems.validation([], exception.message).problem;
    }
    return toProblem(exception, this.platform.logger, String(request.id));
  }
}
