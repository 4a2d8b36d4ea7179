/**
 * The incident rules that need more than the request body: facts looked up in the team
 * (projects, endpoints and their projects, statuses, merge sources), the stored incident, or the
 * current time. The body's own shape (types, lengths, enums, required fields, id arrays) is
 * checked at the HTTP edge (src/incidents/http/incident.dto.ts); the edge passes on the fields
 * that passed it, so these rules run on typed values and one 400 lists both kinds. An id array
 * may still hold elements the edge refused (`endpoint_ids[2]` not an id, or repeated): they are
 * skipped here. Each function returns EVERY violated rule (empty when none).
 */
import type { IncidentDetails, Severity } from './events.js';
import type { FieldError, FieldErrorCode } from './errors.js';
import type { Incident } from './incident.js';
import { parseRfc3339 } from '../../platform/time/rfc3339.js';

export type { FieldError, FieldErrorCode } from './errors.js';

export const LIMITS = {
  endpointIds: 500,
  /** Not in the spec; bounds the lookups one merge request can cause. */
  mergeSources: 100,
  title: 200,
  type: 80,
  detectionReason: 10_000,
  metadataBytes: 65_536,
  commentBody: 10_000,
  checkpointBody: 10_000,
  /** Not in the spec; chosen so a label fits a status page line. */
  statusLabel: 200,
} as const;

export interface StatusFact {
  id: number;
  name: string;
}

/** What the caller looked up in the token's team. */
export interface IncidentFacts {
  /** Ids of the team's projects among those the body names. */
  projectIds: readonly number[];
  /** Project of each team endpoint the body or the incident names; a missing id is not in the team. */
  endpointProjects: Readonly<Record<number, number>>;
}

/** A create request whose body passed the edge's shape rules. */
export interface CreateIncidentInput {
  project_id?: number;
  endpoint_ids?: number[];
  title: string;
  type?: string;
  severity?: Severity;
  detection_reason?: string;
  metadata?: Record<string, unknown>;
  status_id?: number;
  status?: string;
  auto_resolve?: boolean;
  first_error_at?: string;
  last_error_at?: string;
}

export type IncidentDetailChanges = Partial<IncidentDetails>;

export interface StatusInput {
  status?: string;
  status_id?: number;
  resolved?: boolean;
  auto_resolve?: boolean;
}

/** Each named merge source found in the token's team; a missing id does not exist there. */
export type MergeSources = Readonly<Record<number, { merged_into_id: number | null }>>;

export function createRules(input: CreateIncidentInput, facts: IncidentFacts & { statuses: readonly StatusFact[]; now: string }): FieldError[] {
  const errors: FieldError[] = [];
  const first = input.first_error_at ?? facts.now;
  if (input.last_error_at !== undefined && before(input.last_error_at, first)) {
    const why = input.first_error_at === undefined ? ' (first_error_at defaults to the current time)' : '';
    errors.push(err('last_error_at', 'conflict', `must not precede first_error_at${why}`));
  }
  const projectId = knownProject(errors, input.project_id, facts);
  errors.push(...statusRules(input, facts.statuses));
  const endpoints = knownEndpoints(errors, input.endpoint_ids ?? [], facts.endpointProjects);
  if (projectId !== null) {
    endpoints.filter((e) => e.project !== projectId).forEach((e) => errors.push(wrongProject(e, projectId)));
  } else if (input.project_id === undefined && new Set(endpoints.map((e) => e.project)).size > 1) {
    errors.push(err('endpoint_ids', 'conflict', 'all endpoints must belong to one project'));
  }
  return errors;
}

export type CurrentIncident = Pick<Incident, 'project_id' | 'endpoint_ids' | 'first_error_at' | 'last_error_at'>;

export function updateDetailsRules(changes: IncidentDetailChanges, current: CurrentIncident, facts: IncidentFacts): FieldError[] {
  const errors: FieldError[] = [];
  if (changes.first_error_at !== undefined || changes.last_error_at !== undefined) {
    const first = changes.first_error_at ?? current.first_error_at;
    const last = changes.last_error_at ?? current.last_error_at;
    if (before(last, first)) {
      if (changes.last_error_at !== undefined) errors.push(err('last_error_at', 'conflict', 'must not precede first_error_at'));
      else errors.push(err('first_error_at', 'conflict', `must not be after the incident's last_error_at (${current.last_error_at})`));
    }
  }
  const bodyProject = knownProject(errors, changes.project_id, facts);
  const projectId = changes.project_id === undefined ? current.project_id : bodyProject;
  if (projectId === null) return errors;
  if (changes.endpoint_ids !== undefined) {
    const endpoints = knownEndpoints(errors, changes.endpoint_ids, facts.endpointProjects);
    endpoints.filter((e) => e.project !== projectId).forEach((e) => errors.push(wrongProject(e, projectId)));
  } else if (changes.project_id !== undefined) {
    const strays = current.endpoint_ids.filter((id) => {
      const project = facts.endpointProjects[id];
      return project !== undefined && project !== projectId;
    });
    if (strays.length > 0) errors.push(err('project_id', 'conflict', `the incident's endpoints ${strays.join(', ')} do not belong to project ${projectId}`));
  }
  return errors;
}

/** A status named by name (exact, case-sensitive) or id must be one of the team's. */
export function statusRules(input: Pick<StatusInput, 'status' | 'status_id'>, statuses: readonly StatusFact[]): FieldError[] {
  const errors: FieldError[] = [];
  if (input.status !== undefined && !statuses.some((s) => s.name === input.status)) {
    errors.push(err('status', 'not_found', `no incident status is named "${input.status}" (names match exactly)`));
  }
  if (input.status_id !== undefined && !statuses.some((s) => s.id === input.status_id)) {
    errors.push(err('status_id', 'not_found', `incident status ${input.status_id} does not exist`));
  }
  return errors;
}

/** Every source exists in the team, is not the target, and was not merged before. */
export function mergeRules(sourceIds: readonly number[], targetId: number, sources: MergeSources): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<number>();
  sourceIds.forEach((id, index) => {
    if (!isId(id) || seen.has(id)) return; // reported by the edge
    seen.add(id);
    const field = `source_incident_ids[${index}]`;
    const source = sources[id];
    if (id === targetId) errors.push(err(field, 'conflict', 'the target incident cannot be one of its own sources'));
    else if (!source) errors.push(err(field, 'not_found', `incident ${id} does not exist`));
    else if (source.merged_into_id !== null) errors.push(err(field, 'conflict', `incident ${id} was already merged into incident ${source.merged_into_id}`));
  });
  return errors;
}

// ---------------------------------------------------------------------------------------------

function isId(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

function err(field: string, code: FieldErrorCode, message: string): FieldError {
  return { field, code, message };
}

/** a strictly before b (both RFC 3339; the edge has checked them). */
function before(a: string, b: string): boolean {
  const x = parseRfc3339(a);
  const y = parseRfc3339(b);
  return x !== null && y !== null && x < y;
}

function knownProject(errors: FieldError[], projectId: number | undefined, facts: IncidentFacts): number | null {
  if (projectId === undefined) return null;
  if (!facts.projectIds.includes(projectId)) {
    errors.push(err('project_id', 'not_found', `project ${projectId} does not exist`));
    return null;
  }
  return projectId;
}

interface EndpointRef {
  id: number;
  index: number;
  project: number;
}

/** The named endpoints that exist in the team (first occurrences); reports those that do not. */
function knownEndpoints(errors: FieldError[], ids: readonly number[], endpointProjects: Readonly<Record<number, number>>): EndpointRef[] {
  const found: EndpointRef[] = [];
  const seen = new Set<number>();
  ids.forEach((id, index) => {
    if (!isId(id) || seen.has(id)) return; // reported by the edge
    seen.add(id);
    const project = endpointProjects[id];
    if (project === undefined) errors.push(err(`endpoint_ids[${index}]`, 'not_found', `endpoint ${id} does not exist`));
    else found.push({ id, index, project });
  });
  return found;
}

function wrongProject(endpoint: EndpointRef, projectId: number): FieldError {
  return err(`endpoint_ids[${endpoint.index}]`, 'conflict', `endpoint ${endpoint.id} belongs to project ${endpoint.project}, not project ${projectId}`);
}
