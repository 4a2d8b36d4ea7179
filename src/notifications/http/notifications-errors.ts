import { Problems, type ProblemError } from '../../platform/http/problem.js';
import { ChannelHasNoSecretError, ChannelRulesError, NotificationsNotFoundError } from '../domain/errors.js';

/** The notifications context's errors at the HTTP edge. */
export function notificationsProblems(error: unknown): ProblemError | null {
  if (error instanceof NotificationsNotFoundError) return Problems.notFound(error.subject);
  if (error instanceof ChannelRulesError) return Problems.validation(error.violations);
  if (error instanceof ChannelHasNoSecretError) return Problems.conflict('channel_has_no_secret', error.message);
  return null;
}
