/**
 * The status pages context's refusals. Application code throws them; the HTTP edge maps each
 * class once (`statuspages/http/status-pages-errors.ts`, listed at the composition root).
 */

import { type RuleViolation, violationsMessage } from '../../platform/rules/rule-violation.js';
export type { RuleViolation };

export abstract class StatusPagesDomainError extends Error {}

/** What a command or query names does not exist in the team. The edge answers 404. */
export class StatusPagesNotFoundError extends StatusPagesDomainError {
  /** How the edge names it: "The status page" does not exist. */
  constructor(readonly subject: 'The status page' | 'The team') {
    super(`${subject} does not exist`);
    this.name = 'StatusPagesNotFoundError';
  }
}

/** The page's fields break a rule. The edge answers 400 with the violations. */
export class StatusPageRulesError extends StatusPagesDomainError {
  constructor(readonly violations: RuleViolation[]) {
    super(violationsMessage(violations));
    this.name = 'StatusPageRulesError';
  }
}

/** Another status page holds the slug. The edge answers 409 `slug_taken`. */
export class SlugTakenError extends StatusPagesDomainError {
  constructor(readonly slug: string) {
    super('Another status page already uses this slug.');
    this.name = 'SlugTakenError';
  }
}

/** The page's stream was created by a concurrent request meanwhile. The edge answers 409 `concurrent_update`. */
export class StatusPageCreatedConcurrentlyError extends StatusPagesDomainError {
  constructor() {
    super('The status page was created concurrently; retry.');
    this.name = 'StatusPageCreatedConcurrentlyError';
  }
}
