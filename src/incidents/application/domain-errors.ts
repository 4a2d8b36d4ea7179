import { Problems, ProblemError } from '../../platform/http/problem.js';
import { DomainNotFoundError, IncidentMergedError, IncidentValidationError } from '../domain/errors.js';

/** Domain errors -> problem details (api-decisions: Errors). Anything else passes through. */
export function asProblem(error: unknown): unknown {
  if (error instanceof ProblemError) return error;
  if (error instanceof IncidentMergedError) {
    return Problems.conflict('incident_merged', `${error.message}; write to incident ${error.mergedIntoId} instead.`);
  }
  if (error instanceof DomainNotFoundError) return Problems.notFound(error.message.replace(/ not found.*$/, ''));
  if (error instanceof IncidentValidationError) return Problems.validation(error.errors);
  return error;
}

export async function mapDomainErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asProblem(error);
  }
}
