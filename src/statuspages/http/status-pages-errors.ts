import { Problems, type ProblemError } from '../../platform/http/problem.js';
import { SlugTakenError, StatusPageCreatedConcurrentlyError, StatusPageRulesError, StatusPagesNotFoundError } from '../domain/errors.js';

/** The status pages context's errors at the HTTP edge. */
export function statusPagesProblems(error: unknown): ProblemError | null {
  if (error instanceof StatusPagesNotFoundError) return Problems.notFound(error.subject);
  if (error instanceof StatusPageRulesError) return Problems.validation(error.violations);
  if (error instanceof SlugTakenError) return Problems.conflict('slug_taken', error.message);
  if (error instanceof StatusPageCreatedConcurrentlyError) return Problems.conflict('concurrent_update', error.message);
  return null;
}
