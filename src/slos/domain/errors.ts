/**
 * The slos context's refusals. Application code throws them; the HTTP edge maps each class once
 * (`slos/http/slos-errors.ts`, listed at the composition root).
 */
import { type RuleViolation, violationsMessage } from '../../platform/rules/rule-violation.js';

export abstract class SlosDomainError extends Error {}

/** What a command or query names does not exist in the team. The edge answers 404. */
export class SloNotFoundError extends SlosDomainError {
  constructor(readonly subject: 'The SLO' | 'The team') {
    super(`${subject} does not exist`);
    this.name = 'SloNotFoundError';
  }
}

/** The SLO's fields break a rule. The edge answers 400 with the violations. */
export class SloRulesError extends SlosDomainError {
  constructor(readonly violations: RuleViolation[]) {
    super(violationsMessage(violations));
    this.name = 'SloRulesError';
  }
}

/** The SLO's stream was created by a concurrent request meanwhile. The edge answers 409 `concurrent_update`. */
export class SloCreatedConcurrentlyError extends SlosDomainError {
  constructor() {
    super('The SLO was created concurrently; retry.');
    this.name = 'SloCreatedConcurrentlyError';
  }
}
