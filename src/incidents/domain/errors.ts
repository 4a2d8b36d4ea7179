/**
 * Typed domain errors. The HTTP layer maps them by class: IncidentMergedError -> 409
 * `incident_merged`; the NotFound errors -> 404; IncidentValidationError -> 400
 * `validation_failed` with its `errors`; IncidentAlreadyExistsError is a programming error
 * (ids are allocated once) -> 500.
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
}

export class IncidentNotFoundError extends DomainNotFoundError {
  constructor(readonly incidentId: number | null) {
    super(incidentId === null ? 'Incident not found' : `Incident ${incidentId} not found`);
    this.name = 'IncidentNotFoundError';
  }
}

export class CommentNotFoundError extends DomainNotFoundError {
  constructor(
    readonly incidentId: number,
    readonly commentId: number,
  ) {
    super(`Comment ${commentId} not found on incident ${incidentId}`);
    this.name = 'CommentNotFoundError';
  }
}

export class CheckpointNotFoundError extends DomainNotFoundError {
  constructor(
    readonly incidentId: number,
    readonly checkpointId: number,
  ) {
    super(`Checkpoint ${checkpointId} not found on incident ${incidentId}`);
    this.name = 'CheckpointNotFoundError';
  }
}

export class IncidentAlreadyExistsError extends IncidentDomainError {
  readonly code = 'already_exists';
  constructor(readonly incidentId: number) {
    super(`Incident ${incidentId} already exists`);
    this.name = 'IncidentAlreadyExistsError';
  }
}

/** A rule broken at decide time (validation normally catches it first). */
export class IncidentValidationError extends IncidentDomainError {
  readonly code = 'validation_failed';
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    this.name = 'IncidentValidationError';
  }
}
