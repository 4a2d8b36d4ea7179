import { Problems, type ProblemError } from '../../platform/http/problem.js';
import { DestinationNotVerifiedError, MonitoringNotFoundError, MonitoringRulesError, ProjectNotEmptyError } from '../domain/errors.js';

/** The monitoring domain's errors at the HTTP edge (AlreadyExistsError, a bug, stays a 500). */
export function monitoringProblems(error: unknown): ProblemError | null {
  if (error instanceof MonitoringNotFoundError) return Problems.notFound(error.subject);
  if (error instanceof MonitoringRulesError) return Problems.validation(error.violations);
  if (error instanceof ProjectNotEmptyError) {
    return Problems.conflict('project_not_empty', 'The project still has endpoints: delete them or move them to another project first.');
  }
  if (error instanceof DestinationNotVerifiedError) {
    return Problems.conflict('destination_not_verified', 'Verify the destination (verify-destination) before enabling the endpoint.');
  }
  return null;
}
