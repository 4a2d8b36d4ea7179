import { Problems, type ProblemError } from '../../platform/http/problem.js';
import { TeamNotFoundError, TokenNotFoundError } from '../domain/team.js';

/** The tenancy domain's errors at the HTTP edge. */
export function tenancyProblems(error: unknown): ProblemError | null {
  if (error instanceof TeamNotFoundError) return Problems.notFound('The team');
  if (error instanceof TokenNotFoundError) return Problems.notFound('The token');
  return null;
}
