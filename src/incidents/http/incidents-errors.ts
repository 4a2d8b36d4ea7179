import { Problems, type ProblemError } from '../../platform/http/problem.js';
import { DomainNotFoundError, IncidentMergedError, IncidentValidationError } from '../domain/errors.js';

/** The incidents domain's errors at the HTTP edge (IncidentAlreadyExistsError, a bug, stays a 500). */
export function incidentsProblems(error: unknown): ProblemError | null {
  if (error instanceof IncidentMergedError) {
    return Problems.conflict('incident_merged', `${error.message}; write to incident ${error.mergedIntoId} instead.`);
  }
  if (error instanceof DomainNotFoundError) return Problems.notFound(error.subject);
  if (error instanceof IncidentValidationError) return Problems.validation(error.errors);
  return null;
}
