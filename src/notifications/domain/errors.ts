/**
 * The notifications context's refusals. Application code throws them; the HTTP edge maps each
 * class once (`notifications/http/notifications-errors.ts`, listed at the composition root).
 */

import { type RuleViolation, violationsMessage } from '../../platform/rules/rule-violation.js';
export type { RuleViolation };

export abstract class NotificationsDomainError extends Error {}

/** What a command or query names does not exist in the team. The edge answers 404. */
export class NotificationsNotFoundError extends NotificationsDomainError {
  /** How the edge names it: "The notification channel" does not exist. */
  constructor(readonly subject: 'The notification channel' | 'The team') {
    super(`${subject} does not exist`);
    this.name = 'NotificationsNotFoundError';
  }
}

/** The channel's settings break a rule. The edge answers 400 with the violations. */
export class ChannelRulesError extends NotificationsDomainError {
  constructor(readonly violations: RuleViolation[]) {
    super(violationsMessage(violations));
    this.name = 'ChannelRulesError';
  }
}

/** A secret rotation asked of a channel that signs nothing (only webhooks do). The edge answers 409. */
export class ChannelHasNoSecretError extends NotificationsDomainError {
  constructor() {
    super('Only webhook channels sign their deliveries with a secret.');
    this.name = 'ChannelHasNoSecretError';
  }
}
