import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Problems } from './problem.js';

/**
 * The team of the developer token that authenticated the request, as a handler parameter:
 * `list(@TokenTeam() teamId: number)`. Only routes declared with `RequiresScope` have one (the
 * auth hook refused the request otherwise); elsewhere the request names nothing of a team: 404.
 */
export const TokenTeam = createParamDecorator((_data: unknown, context: ExecutionContext): number => {
  const principal = context.switchToHttp().getRequest<FastifyRequest>().principal;
  if (principal?.kind !== 'token') throw Problems.notFound('The resource');
  return principal.teamId;
});
