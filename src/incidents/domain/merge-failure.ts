import { DomainNotFoundError, IncidentMergedError, IncidentValidationError, type RuleViolation } from './errors.js';

/**
 * The `reason` an IncidentMergeReleased event stores: why the merge that marked the source
 * failed. Stored events are kept forever, so for the same failure this text must never change.
 * It reads "<code>: <what happened>", in the words the merge's answer used when the reasons were
 * first written; it is built here from the domain errors so that rewording an HTTP answer (or
 * the validation summary) cannot change what new events store.
 */
export function mergeFailureReason(error: unknown): string {
  if (error instanceof IncidentMergedError) return `incident_merged: ${error.message}; write to incident ${error.mergedIntoId} instead.`;
  if (error instanceof DomainNotFoundError) return `not_found: ${error.subject} does not exist.`;
  if (error instanceof IncidentValidationError) return `validation_failed: ${firstViolation(error.errors)}`;
  // A store failure, a stream busy beyond the retries, a bug: nothing the requester can act on.
  return 'internal_error: the merge could not be completed';
}

/** The first broken rule ("field: message"), and how many more there are. */
function firstViolation(violations: readonly RuleViolation[]): string {
  if (violations.length === 0) return 'The request is invalid.';
  const { field, message } = violations[0];
  // A message that starts with its field's name does not repeat it.
  const said = field && message.startsWith(`${field} `) ? message.slice(field.length + 1) : message;
  const more = violations.length > 1 ? ` (and ${violations.length - 1} more)` : '';
  return `${field ? `${field}: ` : ''}${said}${more}`;
}
