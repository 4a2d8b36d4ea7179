/**
 * The incidents context's refusals. The domain and the application layer throw them (no HTTP
 * types there); the HTTP edge maps each class once (`incidents/http/incidents-errors.ts`,
 * listed at the composition root, src/app/contexts.ts): IncidentMergedError -> 409 `incident_merged`; the
 * NotFound errors -> 404; IncidentValidationError -> 400 `validation_failed` with its `errors`;
 * IncidentAlreadyExistsError is a programming error (ids are allocated once) -> 500.
 */

export type FieldErrorCode =
  | 'required'
  | 'too_long'
  | 'too_short'
  | 'out_of_range'
  | 'invalid_type'
  | 'invalid_value'
  | 'not_unique'
  | 'too_many'
  | 'conflict'
  | 'not_found'
  | 'unknown_field';

/** One violated rule. `field` is the body field (`endpoint_ids[2]` for an element, `` for the whole body). */
export interface FieldError {
  field: string;
  code: FieldErrorCode;
  message: string;
}

import { type RuleViolation, violationsMessage } from '../../platform/rules/rule-violation.js';
export type { RuleViolation };

export abstract class IncidentDomainError extends Error {
  abstract readonly code: string;
}

export class IncidentMergedError extends IncidentDomainError {
  readonly code = 'incident_merged';
  constructor(
    readonly incidentId: number,
    readonly mergedIntoId: number,
  ) {
    super(`Incident ${incidentId} was merged into incident ${mergedIntoId} and accepts no further changes`);
    this.name = 'IncidentMergedError';
  }
}

export abstract class DomainNotFoundError extends IncidentDomainError {
  readonly code = 'not_found';
  /** How the answer names what is missing: "<subject> does not exist." */
  abstract readonly subject: string;
}

export class IncidentNotFoundError extends DomainNotFoundError {
  readonly subject: string;
  constructor(readonly incidentId: number | null) {
    super(incidentId === null ? 'Incident not found' : `Incident ${incidentId} not found`);
    this.name = 'IncidentNotFoundError';
    this.subject = incidentId === null ? 'Incident' : `Incident ${incidentId}`;
  }
}

/**
 * A request names an incident its team does not have, or a comment or checkpoint its incident
 * does not have. Another team's incident is reported the same way, so the answer never tells
 * that it exists (nor its id: "The incident does not exist.").
 */
export class UnknownIdError extends DomainNotFoundError {
  readonly subject: string;
  constructor(readonly what: 'incident' | 'comment' | 'checkpoint') {
    super(`No such ${what}`);
    this.name = 'UnknownIdError';
    this.subject = `The ${what}`;
  }
}

export class CommentNotFoundError extends DomainNotFoundError {
  readonly subject: string;
  constructor(
    readonly incidentId: number,
    readonly commentId: number,
  ) {
    super(`Comment ${commentId} not found on incident ${incidentId}`);
    this.name = 'CommentNotFoundError';
    this.subject = `Comment ${commentId}`;
  }
}

export class CheckpointNotFoundError extends DomainNotFoundError {
  readonly subject: string;
  constructor(
    readonly incidentId: number,
    readonly checkpointId: number,
  ) {
    super(`Checkpoint ${checkpointId} not found on incident ${incidentId}`);
    this.name = 'CheckpointNotFoundError';
    this.subject = `Checkpoint ${checkpointId}`;
  }
}

export class IncidentAlreadyExistsError extends IncidentDomainError {
  readonly code = 'already_exists';
  constructor(readonly incidentId: number) {
    super(`Incident ${incidentId} already exists`);
    this.name = 'IncidentAlreadyExistsError';
  }
}

/**
 * Broken rules: one found at decide time (validation normally catches it first), or those the
 * application found before deciding, with the edge's errors about the body (one 400 for all).
 */
export class IncidentValidationError extends IncidentDomainError {
  readonly code = 'validation_failed';
  constructor(readonly errors: RuleViolation[]) {
    super(violationsMessage(errors));
    this.name = 'IncidentValidationError';
  }
}
