/**
 * The monitoring domain's refusals. Deciders throw them; the HTTP edge maps each class once
 * (`monitoring/http/monitoring-errors.ts`, listed at the composition root, src/app/contexts.ts).
 */

import { type RuleViolation, violationsMessage } from '../../platform/rules/rule-violation.js';
export type { RuleViolation };

export abstract class MonitoringDomainError extends Error {}

/** The thing a command names does not exist in the team (or no longer does). The edge answers 404. */
export abstract class MonitoringNotFoundError extends MonitoringDomainError {
  /** How the edge names it: "The project" does not exist. */
  abstract readonly subject: string;
}

export class TeamNotFoundError extends MonitoringNotFoundError {
  readonly subject = 'The team';
  constructor(readonly teamId: number) {
    super(`Team ${teamId} not found`);
    this.name = 'TeamNotFoundError';
  }
}

export class ProjectNotFoundError extends MonitoringNotFoundError {
  readonly subject = 'The project';
  constructor(readonly projectId: number) {
    super(`Project ${projectId} not found`);
    this.name = 'ProjectNotFoundError';
  }
}

export class EndpointNotFoundError extends MonitoringNotFoundError {
  readonly subject = 'The endpoint';
  constructor(readonly endpointId: number) {
    super(`Endpoint ${endpointId} not found`);
    this.name = 'EndpointNotFoundError';
  }
}

export class MaintenanceWindowNotFoundError extends MonitoringNotFoundError {
  readonly subject = 'The maintenance window';
  constructor(readonly windowId: number) {
    super(`Maintenance window ${windowId} not found`);
    this.name = 'MaintenanceWindowNotFoundError';
  }
}

export class CheckNotFoundError extends MonitoringNotFoundError {
  readonly subject = 'The check';
  constructor(readonly checkId: number) {
    super(`Check ${checkId} not found`);
    this.name = 'CheckNotFoundError';
  }
}

/** Rules across fields (or against other streams) that the request breaks. The edge answers 400. */
export class MonitoringRulesError extends MonitoringDomainError {
  constructor(readonly violations: RuleViolation[]) {
    super(violationsMessage(violations));
    this.name = 'MonitoringRulesError';
  }

  /** Refuses with every violation at once, or returns when there is none. */
  static throwIfAny(violations: RuleViolation[]): void {
    if (violations.length > 0) throw new MonitoringRulesError(violations);
  }
}

/** A project is deleted only once no endpoint is left in it. The edge answers 409 `project_not_empty`. */
export class ProjectNotEmptyError extends MonitoringDomainError {
  constructor(readonly projectId: number) {
    super(`Project ${projectId} still has endpoints`);
    this.name = 'ProjectNotEmptyError';
  }
}

/** An endpoint is enabled only once its destination is verified. The edge answers 409 `destination_not_verified`. */
export class DestinationNotVerifiedError extends MonitoringDomainError {
  constructor(readonly endpointId: number) {
    super(`Endpoint ${endpointId} has no verified destination`);
    this.name = 'DestinationNotVerifiedError';
  }
}

/** A stream for a freshly allocated id already holds events: ids are handed out once, so a bug (500). */
export class AlreadyExistsError extends MonitoringDomainError {
  constructor(readonly streamId: string) {
    super(`${streamId} already exists`);
    this.name = 'AlreadyExistsError';
  }
}
