import { Problems, type ProblemError } from '../../platform/http/problem.js';
import { SloCreatedConcurrentlyError, SloNotFoundError, SloRulesError } from '../domain/errors.js';

/** The slos context's errors at the HTTP edge. */
export function slosProblems(error: unknown): ProblemError | null {
  if (error instanceof SloNotFoundError) return Problems.notFound(error.subject);
  if (error instanceof SloRulesError) return Problems.validation(error.violations);
  if (error instanceof SloCreatedConcurrentlyError) return Problems.conflict('concurrent_update', error.message);
  return null;
}
