/**
 * Pure validators for incident request bodies. Each returns EVERY violated rule as
 * `{ field, code, message }` (an empty array when the body is valid), so one 400 lists them all.
 *
 * - Lengths count characters as Unicode code points: an emoji is one character, not two
 *   UTF-16 units. `metadata` is measured differently: bytes of its UTF-8 JSON encoding.
 * - `field` names the body field; `endpoint_ids[2]` names one element; `` names the whole body.
 * - `null` is not "absent": a field sent as null is `invalid_type`.
 * - Unknown body fields are `unknown_field`.
 * - Rules that need lookups (a project in the team, an endpoint's project, a status name, a
 *   merge source) run only when the caller passes the matching facts, so the HTTP layer can
 *   check shape and lookups in one pass and answer with one list.
 */
import { DETAIL_FIELDS, SEVERITIES, type JsonObject } from './events.js';
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

/** What the caller looked up in the token's team. Omit a fact to skip the rules that need it. */
export interface IncidentFacts {
  /** Ids of the team's projects (or at least those the body names). */
  projectIds?: readonly number[];
  /** Project of each team endpoint the body or the incident names; a missing id is not in the team. */
  endpointProjects?: Readonly<Record<number, number>>;
  /** The team's incident statuses. */
  statuses?: readonly StatusFact[];
  /** Current time: on create, an omitted first_error_at defaults to it. */
  now?: string;
}

export interface MergeFacts {
  /** Each named source found in the token's team; a missing id does not exist there. */
  sources?: Readonly<Record<number, { merged_into_id: number | null }>>;
}

type Body = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Public validators
// ---------------------------------------------------------------------------------------------

const CREATE_FIELDS = [
  'project_id',
  'endpoint_ids',
  'title',
  'type',
  'severity',
  'detection_reason',
  'metadata',
  'status_id',
  'status',
  'auto_resolve',
  'first_error_at',
  'last_error_at',
] as const;

export function validateCreateIncident(body: unknown, facts: IncidentFacts = {}): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, CREATE_FIELDS);
  checkDetailShapes(errors, body);
  if (body.title === undefined) errors.push(err('title', 'required', 'title is required'));
  const noEndpoints = body.endpoint_ids === undefined || (Array.isArray(body.endpoint_ids) && body.endpoint_ids.length === 0);
  if (body.project_id === undefined && noEndpoints) {
    errors.push(err('project_id', 'required', 'project_id is required when endpoint_ids is empty or missing'));
  }
  checkStatusShapes(errors, body);
  checkBoolean(errors, body, 'auto_resolve');
  checkCreateErrorTimes(errors, body, facts.now);
  checkCreateLookups(errors, body, facts);
  return errors;
}

export type CurrentIncident = Pick<Incident, 'project_id' | 'endpoint_ids' | 'first_error_at' | 'last_error_at'>;

export function validateUpdateDetails(body: unknown, current: CurrentIncident, facts: IncidentFacts = {}): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, DETAIL_FIELDS);
  requireOneOf(errors, body, DETAIL_FIELDS);
  checkDetailShapes(errors, body);
  checkUpdatedErrorTimes(errors, body, current);
  checkUpdateLookups(errors, body, current, facts);
  return errors;
}

const STATUS_FIELDS = ['status', 'status_id', 'resolved', 'auto_resolve'] as const;

export function validateUpdateStatus(body: unknown, facts: Pick<IncidentFacts, 'statuses'> = {}): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, STATUS_FIELDS);
  requireOneOf(errors, body, STATUS_FIELDS);
  checkStatusShapes(errors, body);
  checkBoolean(errors, body, 'resolved');
  checkBoolean(errors, body, 'auto_resolve');
  checkStatusLookup(errors, body, facts.statuses);
  return errors;
}

export function validateMerge(body: unknown, targetId: number, facts: MergeFacts = {}): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, ['source_incident_ids']);
  const ids = body.source_incident_ids;
  if (ids === undefined) return [...errors, err('source_incident_ids', 'required', 'source_incident_ids is required')];
  if (!Array.isArray(ids)) return [...errors, err('source_incident_ids', 'invalid_type', 'source_incident_ids must be an array of integers')];
  if (ids.length === 0) errors.push(err('source_incident_ids', 'too_short', 'source_incident_ids must name at least one incident'));
  if (ids.length > LIMITS.mergeSources) {
    return [...errors, err('source_incident_ids', 'too_many', `source_incident_ids may name at most ${LIMITS.mergeSources} incidents`)];
  }
  const valid = checkIdElements(errors, 'source_incident_ids', ids);
  valid.forEach(({ id, index }) => {
    const field = `source_incident_ids[${index}]`;
    const source = facts.sources?.[id];
    if (id === targetId) errors.push(err(field, 'conflict', 'the target incident cannot be one of its own sources'));
    else if (facts.sources && !source) errors.push(err(field, 'not_found', `incident ${id} does not exist`));
    else if (source && source.merged_into_id !== null) errors.push(err(field, 'conflict', `incident ${id} was already merged into incident ${source.merged_into_id}`));
  });
  return errors;
}

export function validateCommentCreate(body: unknown): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, ['body', 'pinned']);
  if (body.body === undefined) errors.push(err('body', 'required', 'body is required'));
  checkString(errors, body, 'body', 1, LIMITS.commentBody);
  checkBoolean(errors, body, 'pinned');
  return errors;
}

export function validateCommentUpdate(body: unknown): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, ['body', 'pinned']);
  requireOneOf(errors, body, ['body', 'pinned']);
  checkString(errors, body, 'body', 1, LIMITS.commentBody);
  checkBoolean(errors, body, 'pinned');
  return errors;
}

const CHECKPOINT_FIELDS = ['title', 'body', 'status_label'] as const;

export function validateCheckpointCreate(body: unknown): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, CHECKPOINT_FIELDS);
  if (body.title === undefined) errors.push(err('title', 'required', 'title is required'));
  checkCheckpointShapes(errors, body);
  return errors;
}

export function validateCheckpointUpdate(body: unknown): FieldError[] {
  if (!isPlainObject(body)) return [notAnObject()];
  const errors = unknownFields(body, CHECKPOINT_FIELDS);
  requireOneOf(errors, body, CHECKPOINT_FIELDS);
  checkCheckpointShapes(errors, body);
  return errors;
}

/** Characters as Unicode code points (a surrogate pair counts once). */
export function characterCount(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/** Bytes of the UTF-8 JSON encoding. */
export function encodedSize(value: JsonObject): number {
  return new TextEncoder().encode(JSON.stringify(value)).length;
}

// ---------------------------------------------------------------------------------------------
// Shared rule groups
// ---------------------------------------------------------------------------------------------

function checkDetailShapes(errors: FieldError[], body: Body): void {
  checkPositiveInteger(errors, body, 'project_id');
  checkEndpointIds(errors, body);
  checkString(errors, body, 'title', 1, LIMITS.title);
  checkString(errors, body, 'type', 0, LIMITS.type);
  checkEnum(errors, body, 'severity', SEVERITIES);
  checkString(errors, body, 'detection_reason', 0, LIMITS.detectionReason);
  checkMetadata(errors, body);
  checkTimestamp(errors, body, 'first_error_at');
  checkTimestamp(errors, body, 'last_error_at');
}

function checkStatusShapes(errors: FieldError[], body: Body): void {
  checkString(errors, body, 'status', 1, Number.MAX_SAFE_INTEGER);
  checkPositiveInteger(errors, body, 'status_id');
  if (body.status !== undefined && body.status_id !== undefined) {
    errors.push(err('status', 'conflict', 'use either status or status_id, not both'));
  }
}

function checkCheckpointShapes(errors: FieldError[], body: Body): void {
  checkString(errors, body, 'title', 1, LIMITS.title);
  checkString(errors, body, 'body', 0, LIMITS.checkpointBody);
  checkString(errors, body, 'status_label', 1, LIMITS.statusLabel);
}

function checkCreateErrorTimes(errors: FieldError[], body: Body, now: string | undefined): void {
  const last = timeOf(body.last_error_at);
  if (last === null) return;
  const first = body.first_error_at === undefined ? timeOf(now) : timeOf(body.first_error_at);
  if (first === null || last >= first) return;
  const why = body.first_error_at === undefined ? ' (first_error_at defaults to the current time)' : '';
  errors.push(err('last_error_at', 'conflict', `last_error_at must not precede first_error_at${why}`));
}

function checkUpdatedErrorTimes(errors: FieldError[], body: Body, current: CurrentIncident): void {
  if (body.first_error_at === undefined && body.last_error_at === undefined) return;
  const first = timeOf(body.first_error_at ?? current.first_error_at);
  const last = timeOf(body.last_error_at ?? current.last_error_at);
  if (first === null || last === null || last >= first) return;
  if (body.last_error_at !== undefined) {
    errors.push(err('last_error_at', 'conflict', 'last_error_at must not precede first_error_at'));
  } else {
    errors.push(err('first_error_at', 'conflict', `first_error_at must not be after the incident's last_error_at (${current.last_error_at})`));
  }
}

function checkCreateLookups(errors: FieldError[], body: Body, facts: IncidentFacts): void {
  const projectId = validProjectId(errors, body, facts);
  checkStatusLookup(errors, body, facts.statuses);
  if (!facts.endpointProjects) return;
  const endpoints = endpointsWithProject(errors, body, facts.endpointProjects);
  if (projectId !== null) {
    endpoints.filter((e) => e.project !== projectId).forEach((e) => errors.push(wrongProject(e, projectId)));
  } else if (body.project_id === undefined && new Set(endpoints.map((e) => e.project)).size > 1) {
    errors.push(err('endpoint_ids', 'conflict', 'all endpoints must belong to one project'));
  }
}

function checkUpdateLookups(errors: FieldError[], body: Body, current: CurrentIncident, facts: IncidentFacts): void {
  const bodyProject = validProjectId(errors, body, facts);
  if (!facts.endpointProjects) return;
  const projectId = body.project_id === undefined ? current.project_id : bodyProject;
  if (projectId === null) return;
  if (body.endpoint_ids !== undefined) {
    const endpoints = endpointsWithProject(errors, body, facts.endpointProjects);
    endpoints.filter((e) => e.project !== projectId).forEach((e) => errors.push(wrongProject(e, projectId)));
  } else if (body.project_id !== undefined) {
    const strays = current.endpoint_ids.filter((id) => {
      const project = facts.endpointProjects?.[id];
      return project !== undefined && project !== projectId;
    });
    if (strays.length > 0) {
      errors.push(err('project_id', 'conflict', `the incident's endpoints ${strays.join(', ')} do not belong to project ${projectId}`));
    }
  }
}

/** The body's project id when it is well-formed and (if facts allow) in the team. */
function validProjectId(errors: FieldError[], body: Body, facts: IncidentFacts): number | null {
  if (!isPositiveInteger(body.project_id)) return null;
  if (facts.projectIds && !facts.projectIds.includes(body.project_id)) {
    errors.push(err('project_id', 'not_found', `project ${body.project_id} does not exist`));
    return null;
  }
  return body.project_id;
}

interface EndpointRef {
  id: number;
  index: number;
  project: number;
}

/** Well-formed endpoint ids of the body that exist; reports those that do not. */
function endpointsWithProject(errors: FieldError[], body: Body, endpointProjects: Readonly<Record<number, number>>): EndpointRef[] {
  if (!Array.isArray(body.endpoint_ids) || body.endpoint_ids.length > LIMITS.endpointIds) return [];
  const found: EndpointRef[] = [];
  body.endpoint_ids.forEach((id: unknown, index) => {
    if (!isPositiveInteger(id)) return;
    const project = endpointProjects[id];
    if (project === undefined) errors.push(err(`endpoint_ids[${index}]`, 'not_found', `endpoint ${id} does not exist`));
    else found.push({ id, index, project });
  });
  return found;
}

function wrongProject(endpoint: EndpointRef, projectId: number): FieldError {
  return err(`endpoint_ids[${endpoint.index}]`, 'conflict', `endpoint ${endpoint.id} belongs to project ${endpoint.project}, not project ${projectId}`);
}

function checkStatusLookup(errors: FieldError[], body: Body, statuses: readonly StatusFact[] | undefined): void {
  if (!statuses) return;
  if (typeof body.status === 'string' && body.status.length > 0 && !statuses.some((s) => s.name === body.status)) {
    errors.push(err('status', 'not_found', `no incident status is named "${body.status}" (names match exactly)`));
  }
  if (isPositiveInteger(body.status_id) && !statuses.some((s) => s.id === body.status_id)) {
    errors.push(err('status_id', 'not_found', `incident status ${body.status_id} does not exist`));
  }
}

// ---------------------------------------------------------------------------------------------
// Single-field rules
// ---------------------------------------------------------------------------------------------

function err(field: string, code: FieldErrorCode, message: string): FieldError {
  return { field, code, message };
}

function notAnObject(): FieldError {
  return err('', 'invalid_type', 'the body must be a JSON object');
}

function isPlainObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPositiveInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

function timeOf(value: unknown): number | null {
  return typeof value === 'string' ? parseRfc3339(value) : null;
}

function unknownFields(body: Body, allowed: readonly string[]): FieldError[] {
  return Object.keys(body)
    .filter((key) => !allowed.includes(key))
    .map((key) => err(key, 'unknown_field', `${key} is not a field of this request`));
}

function requireOneOf(errors: FieldError[], body: Body, fields: readonly string[]): void {
  if (fields.every((field) => body[field] === undefined)) {
    errors.push(err('', 'required', `at least one of ${fields.join(', ')} is required`));
  }
}

function checkString(errors: FieldError[], body: Body, field: string, min: number, max: number): void {
  const value = body[field];
  if (value === undefined) return;
  if (typeof value !== 'string') {
    errors.push(err(field, 'invalid_type', `${field} must be a string`));
    return;
  }
  const count = characterCount(value);
  if (count < min) errors.push(err(field, 'too_short', `${field} must have at least ${min} character${min === 1 ? '' : 's'}`));
  else if (count > max) errors.push(err(field, 'too_long', `${field} must have at most ${max} characters`));
}

function checkBoolean(errors: FieldError[], body: Body, field: string): void {
  if (body[field] !== undefined && typeof body[field] !== 'boolean') {
    errors.push(err(field, 'invalid_type', `${field} must be true or false`));
  }
}

function checkPositiveInteger(errors: FieldError[], body: Body, field: string): void {
  const value = body[field];
  if (value === undefined) return;
  if (!Number.isSafeInteger(value)) errors.push(err(field, 'invalid_type', `${field} must be an integer`));
  else if ((value as number) <= 0) errors.push(err(field, 'out_of_range', `${field} must be a positive integer`));
}

function checkEnum(errors: FieldError[], body: Body, field: string, allowed: readonly string[]): void {
  const value = body[field];
  if (value === undefined) return;
  if (typeof value !== 'string') errors.push(err(field, 'invalid_type', `${field} must be a string`));
  else if (!allowed.includes(value)) errors.push(err(field, 'invalid_value', `${field} must be one of ${allowed.join(', ')}`));
}

function checkTimestamp(errors: FieldError[], body: Body, field: string): void {
  const value = body[field];
  if (value === undefined) return;
  if (typeof value !== 'string') errors.push(err(field, 'invalid_type', `${field} must be an RFC 3339 date-time string`));
  else if (parseRfc3339(value) === null) errors.push(err(field, 'invalid_value', `${field} must be an RFC 3339 date-time such as 2026-11-21T15:04:05Z`));
}

function checkMetadata(errors: FieldError[], body: Body): void {
  const value = body.metadata;
  if (value === undefined) return;
  if (!isPlainObject(value)) errors.push(err('metadata', 'invalid_type', 'metadata must be a JSON object'));
  else if (encodedSize(value) > LIMITS.metadataBytes) {
    errors.push(err('metadata', 'too_long', `metadata must encode to at most ${LIMITS.metadataBytes} bytes of JSON (64 KiB)`));
  }
}

function checkEndpointIds(errors: FieldError[], body: Body): void {
  const value = body.endpoint_ids;
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    errors.push(err('endpoint_ids', 'invalid_type', 'endpoint_ids must be an array of integers'));
    return;
  }
  if (value.length > LIMITS.endpointIds) {
    // Past the documented limit the elements are not examined: one error, in bounded time.
    errors.push(err('endpoint_ids', 'too_many', `endpoint_ids may hold at most ${LIMITS.endpointIds} ids`));
    return;
  }
  checkIdElements(errors, 'endpoint_ids', value);
}

/** Element rules of an id array: positive integers, each once. Returns the well-formed first occurrences. */
function checkIdElements(errors: FieldError[], field: string, values: unknown[]): { id: number; index: number }[] {
  const seen = new Set<number>();
  const valid: { id: number; index: number }[] = [];
  values.forEach((value, index) => {
    const at = `${field}[${index}]`;
    if (!Number.isSafeInteger(value)) errors.push(err(at, 'invalid_type', `${at} must be an integer`));
    else if ((value as number) <= 0) errors.push(err(at, 'out_of_range', `${at} must be a positive integer`));
    else if (seen.has(value as number)) errors.push(err(at, 'not_unique', `${value} appears more than once in ${field}`));
    else {
      seen.add(value as number);
      valid.push({ id: value as number, index });
    }
  });
  return valid;
}
