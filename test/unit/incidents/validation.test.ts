/**
 * Incident bodies: the shape rules at the HTTP edge (the DTOs, through the same checkBody every
 * body goes through) and the domain rules that need lookups or the stored incident.
 */
import {
  AddCheckpointBody,
  AddCommentBody,
  CreateIncidentBody,
  EditCheckpointBody,
  EditCommentBody,
  MergeIncidentsBody,
  UpdateIncidentBody,
  UpdateIncidentStatusBody,
} from '../../../src/incidents/http/incident.dto.js';
import { createRules, mergeRules, statusRules, updateDetailsRules, type FieldError } from '../../../src/incidents/domain/validation.js';
import { characterCount } from '../../../src/platform/http/validators.js';
import { checkBody } from '../../../src/platform/http/validation.js';
import { ProblemError } from '../../../src/platform/http/problem.js';

/** `[field, code]` pairs, sorted: what a client reads to fix its request. */
const rules = (errors: FieldError[] | Array<{ field: string; code: string }>) => errors.map((e) => [e.field, e.code]).sort((a, b) => `${a}`.localeCompare(`${b}`));
const edge = (dto: new () => object, body: unknown) => rules(checkBody(dto, body).errors);

const valid = { project_id: 5, title: 'Checkout failing' };
const create = (overrides: Record<string, unknown>) => edge(CreateIncidentBody, { ...valid, ...overrides });

describe('create incident body (edge)', () => {
  it('accepts a minimal body and a full one', () => {
    expect(create({})).toEqual([]);
    expect(
      create({
        endpoint_ids: [1, 2],
        type: 'deploy',
        severity: 'critical',
        detection_reason: 'error rate',
        metadata: { region: 'eu' },
        status: 'Identified',
        auto_resolve: true,
        first_error_at: '2026-03-01T10:00:00+02:00',
        last_error_at: '2026-03-01T08:00:00.123456Z',
      }),
    ).toEqual([]);
  });

  it('requires project_id when endpoint_ids is missing or empty, not otherwise', () => {
    expect(edge(CreateIncidentBody, { title: 't' })).toEqual([['project_id', 'required']]);
    expect(edge(CreateIncidentBody, { title: 't', endpoint_ids: [] })).toEqual([['project_id', 'required']]);
    expect(edge(CreateIncidentBody, { title: 't', endpoint_ids: [3] })).toEqual([]);
  });

  it.each([
    ['project_id as text', { project_id: '5' }, [['project_id', 'invalid_type']]],
    ['project_id zero', { project_id: 0 }, [['project_id', 'out_of_range']]],
    ['project_id fractional', { project_id: 1.5 }, [['project_id', 'invalid_type']]],
    ['endpoint_ids not an array', { endpoint_ids: 3 }, [['endpoint_ids', 'invalid_type']]],
    ['endpoint_ids with a negative id', { endpoint_ids: [1, -2] }, [['endpoint_ids[1]', 'out_of_range']]],
    ['endpoint_ids with a string', { endpoint_ids: ['1'] }, [['endpoint_ids[0]', 'invalid_type']]],
    ['endpoint_ids duplicated', { endpoint_ids: [4, 5, 4] }, [['endpoint_ids[2]', 'not_unique']]],
    ['title missing', { title: undefined }, [['title', 'required']]],
    ['title empty', { title: '' }, [['title', 'too_short']]],
    ['title of 201 characters', { title: 'x'.repeat(201) }, [['title', 'too_long']]],
    ['title not a string', { title: 7 }, [['title', 'invalid_type']]],
    ['type of 81 characters', { type: 'x'.repeat(81) }, [['type', 'too_long']]],
    ['severity unknown', { severity: 'major' }, [['severity', 'invalid_value']]],
    ['detection_reason of 10,001 characters', { detection_reason: 'x'.repeat(10_001) }, [['detection_reason', 'too_long']]],
    ['metadata an array', { metadata: [1] }, [['metadata', 'invalid_type']]],
    ['metadata null', { metadata: null }, [['metadata', 'invalid_type']]],
    ['status empty', { status: '' }, [['status', 'too_short']]],
    ['status_id negative', { status_id: -1 }, [['status_id', 'out_of_range']]],
    ['status with status_id', { status: 'Identified', status_id: 2 }, [['status', 'conflict']]],
    ['auto_resolve as text', { auto_resolve: 'true' }, [['auto_resolve', 'invalid_type']]],
    ['first_error_at without offset', { first_error_at: '2026-03-01T10:00:00' }, [['first_error_at', 'invalid_value']]],
    ['first_error_at as a date only', { first_error_at: '2026-03-01' }, [['first_error_at', 'invalid_value']]],
    ['last_error_at as epoch millis', { last_error_at: 1767225600000 }, [['last_error_at', 'invalid_type']]],
    ['last_error_at on 30 February', { last_error_at: '2026-02-30T10:00:00Z' }, [['last_error_at', 'invalid_value']]],
    ['last_error_at at 24:00', { last_error_at: '2026-03-01T24:00:00Z' }, [['last_error_at', 'invalid_value']]],
    ['an unknown field', { colour: 'red' }, [['colour', 'unknown_field']]],
  ])('rejects %s', (_name, overrides, expected) => {
    expect(create(overrides)).toEqual(expected);
  });

  it('accepts the limits themselves', () => {
    expect(
      create({
        endpoint_ids: Array.from({ length: 500 }, (_, i) => i + 1),
        title: 'x'.repeat(200),
        type: 'x'.repeat(80),
        detection_reason: 'x'.repeat(10_000),
        first_error_at: '2026-03-01T10:00:00Z',
        last_error_at: '2026-03-01T10:00:00Z',
      }),
    ).toEqual([]);
  });

  it('rejects more than 500 endpoint ids', () => {
    expect(create({ endpoint_ids: Array.from({ length: 501 }, (_, i) => i + 1) })).toEqual([['endpoint_ids', 'too_many']]);
  });

  it('counts characters as code points, not UTF-16 units', () => {
    const emoji = '🚨';
    expect(characterCount(emoji.repeat(200))).toBe(200);
    expect(create({ title: emoji.repeat(200) })).toEqual([]);
    expect(create({ title: emoji.repeat(201) })).toEqual([['title', 'too_long']]);
  });

  it('limits metadata to 65,536 bytes of UTF-8 JSON', () => {
    const overhead = JSON.stringify({ k: '' }).length;
    expect(create({ metadata: { k: 'x'.repeat(65_536 - overhead) } })).toEqual([]);
    expect(create({ metadata: { k: 'x'.repeat(65_537 - overhead) } })).toEqual([['metadata', 'too_long']]);
    expect(create({ metadata: { k: 'é'.repeat(40_000) } })).toEqual([['metadata', 'too_long']]);
  });

  it('refuses a body that is not an object', () => {
    for (const body of [[valid], null, 'text']) {
      expect(() => checkBody(CreateIncidentBody, body)).toThrow(ProblemError);
    }
  });

  it('lists every violation at once, each with a message, and passes on only the fields that passed', () => {
    const checked = checkBody(CreateIncidentBody, { endpoint_ids: [1, 1], title: '', severity: 'low', status: 'Identified', status_id: 2, first_error_at: 'now', extra: true });
    expect(rules(checked.errors)).toEqual(
      rules([
        { field: 'extra', code: 'unknown_field' },
        { field: 'endpoint_ids[1]', code: 'not_unique' },
        { field: 'title', code: 'too_short' },
        { field: 'severity', code: 'invalid_value' },
        { field: 'first_error_at', code: 'invalid_value' },
        { field: 'status', code: 'conflict' },
      ]),
    );
    expect(checked.errors.every((e) => e.message.length > 0)).toBe(true);
    expect({ ...checked.value }).toEqual({ endpoint_ids: [1, 1], status_id: 2 });
  });
});

describe('create incident (domain rules)', () => {
  const facts = {
    projectIds: [5],
    endpointProjects: { 1: 5, 2: 5, 3: 6 },
    statuses: [
      { id: 1, name: 'Investigating' },
      { id: 2, name: 'Identified' },
    ],
    now: '2026-03-01T10:00:00.000Z',
  };
  const check = (body: Record<string, unknown>) => rules(createRules({ title: 't', ...body }, facts));

  it('accepts endpoints of the selected project and a known status', () => {
    expect(check({ project_id: 5, endpoint_ids: [1, 2], status: 'Identified' })).toEqual([]);
    expect(check({ endpoint_ids: [3], status_id: 1 })).toEqual([]);
  });

  it('rejects an endpoint of another project, an unknown endpoint and an unknown project', () => {
    expect(check({ project_id: 5, endpoint_ids: [1, 3, 99] })).toEqual([
      ['endpoint_ids[1]', 'conflict'],
      ['endpoint_ids[2]', 'not_found'],
    ]);
    expect(check({ project_id: 77 })).toEqual([['project_id', 'not_found']]);
  });

  it('skips the elements the edge refused', () => {
    expect(check({ project_id: 5, endpoint_ids: [1, 1, -4, '2'] })).toEqual([]);
  });

  it('rejects endpoints spanning projects when no project is named', () => {
    expect(check({ endpoint_ids: [1, 3] })).toEqual([['endpoint_ids', 'conflict']]);
  });

  it('matches status names exactly and case-sensitively', () => {
    expect(check({ project_id: 5, status: 'identified' })).toEqual([['status', 'not_found']]);
    expect(check({ project_id: 5, status_id: 9 })).toEqual([['status_id', 'not_found']]);
  });

  it('compares last_error_at with first_error_at, an omitted one being the current time', () => {
    expect(check({ project_id: 5, last_error_at: '2026-03-01T09:00:00Z' })).toEqual([['last_error_at', 'conflict']]);
    expect(check({ project_id: 5, last_error_at: '2026-03-01T10:00:00Z' })).toEqual([]);
    expect(check({ project_id: 5, first_error_at: '2026-03-01T10:00:00Z', last_error_at: '2026-03-01T11:59:59+02:00' })).toEqual([['last_error_at', 'conflict']]);
  });
});

describe('update details', () => {
  const current = { project_id: 5, endpoint_ids: [1, 2], first_error_at: '2026-03-01T10:00:00.000Z', last_error_at: '2026-03-01T12:00:00.000Z' };
  const facts = { projectIds: [5, 6], endpointProjects: { 1: 5, 2: 5, 3: 6 } };
  const domain = (changes: Record<string, unknown>, known = facts) => rules(updateDetailsRules(changes, current, known));

  it('requires at least one field (edge)', () => {
    expect(edge(UpdateIncidentBody, {})).toEqual([['', 'required']]);
  });

  it('applies the create rules to each field it is given (edge)', () => {
    expect(edge(UpdateIncidentBody, { title: '' })).toEqual([['title', 'too_short']]);
    expect(edge(UpdateIncidentBody, { type: 'x'.repeat(81), severity: 'high', endpoint_ids: [0] })).toEqual([
      ['endpoint_ids[0]', 'out_of_range'],
      ['severity', 'invalid_value'],
      ['type', 'too_long'],
    ]);
    expect(edge(UpdateIncidentBody, { endpoint_ids: [] })).toEqual([]);
  });

  it('rejects fields that are not details (edge)', () => {
    expect(edge(UpdateIncidentBody, { status_id: 2 })).toEqual([
      ['', 'required'],
      ['status_id', 'unknown_field'],
    ]);
  });

  it("checks error times against the incident's stored ones", () => {
    expect(domain({ last_error_at: '2026-03-01T09:59:59Z' })).toEqual([['last_error_at', 'conflict']]);
    expect(domain({ first_error_at: '2026-03-01T12:00:01Z' })).toEqual([['first_error_at', 'conflict']]);
    expect(domain({ first_error_at: '2026-03-01T12:00:01Z', last_error_at: '2026-03-01T13:00:00Z' })).toEqual([]);
  });

  it('checks endpoints against the project, new or current', () => {
    expect(domain({ endpoint_ids: [1, 3] })).toEqual([['endpoint_ids[1]', 'conflict']]);
    expect(domain({ project_id: 6 })).toEqual([['project_id', 'conflict']]);
    expect(domain({ project_id: 6, endpoint_ids: [3] })).toEqual([]);
    expect(domain({ project_id: 8 })).toEqual([['project_id', 'not_found']]);
  });
});

describe('update status', () => {
  const statuses = [{ id: 1, name: 'Investigating' }];

  it('accepts each field alone', () => {
    for (const body of [{ status: 'Investigating' }, { status_id: 1 }, { resolved: true }, { auto_resolve: false }]) {
      expect(edge(UpdateIncidentStatusBody, body)).toEqual([]);
      expect(statusRules(body, statuses)).toEqual([]);
    }
  });

  it('requires one of status, status_id, resolved, auto_resolve', () => {
    expect(edge(UpdateIncidentStatusBody, {})).toEqual([['', 'required']]);
  });

  it('rejects status with status_id, wrong types and unknown fields at the edge, unknown statuses in the domain', () => {
    expect(edge(UpdateIncidentStatusBody, { status: 'Gone', status_id: 1, resolved: 'yes', auto_resolve: 1, note: 'x' })).toEqual([
      ['auto_resolve', 'invalid_type'],
      ['note', 'unknown_field'],
      ['resolved', 'invalid_type'],
      ['status', 'conflict'],
    ]);
    expect(rules(statusRules({ status: 'Gone' }, statuses))).toEqual([['status', 'not_found']]);
    expect(rules(statusRules({ status_id: 4 }, statuses))).toEqual([['status_id', 'not_found']]);
  });
});

describe('merge', () => {
  const sources = { 11: { merged_into_id: null }, 12: { merged_into_id: null }, 13: { merged_into_id: 40 } };
  const merge = (ids: number[]) => rules(mergeRules(ids, 10, sources));

  it('accepts unique existing sources', () => {
    expect(edge(MergeIncidentsBody, { source_incident_ids: [11, 12] })).toEqual([]);
    expect(merge([11, 12])).toEqual([]);
  });

  it.each([
    ['missing', {}, [['source_incident_ids', 'required']]],
    ['not an array', { source_incident_ids: 11 }, [['source_incident_ids', 'invalid_type']]],
    ['empty', { source_incident_ids: [] }, [['source_incident_ids', 'too_short']]],
    ['a non-integer', { source_incident_ids: ['11'] }, [['source_incident_ids[0]', 'invalid_type']]],
    ['a zero id', { source_incident_ids: [0] }, [['source_incident_ids[0]', 'out_of_range']]],
    ['a duplicate', { source_incident_ids: [11, 11] }, [['source_incident_ids[1]', 'not_unique']]],
  ])('rejects %s at the edge', (_name, body, expected) => {
    expect(edge(MergeIncidentsBody, body)).toEqual(expected);
  });

  it.each([
    ['the target itself', [10], [['source_incident_ids[0]', 'conflict']]],
    ['an unknown or other-team incident', [99], [['source_incident_ids[0]', 'not_found']]],
    ['an already merged incident', [13], [['source_incident_ids[0]', 'conflict']]],
  ])('rejects %s in the domain', (_name, ids, expected) => {
    expect(merge(ids)).toEqual(expected);
  });

  it('lists every bad source at once', () => {
    expect(merge([10, 11, 11, 99, 13])).toEqual([
      ['source_incident_ids[0]', 'conflict'],
      ['source_incident_ids[3]', 'not_found'],
      ['source_incident_ids[4]', 'conflict'],
    ]);
  });
});

describe('comment bodies', () => {
  it('add: requires a body of 1 to 10,000 characters', () => {
    expect(edge(AddCommentBody, { body: 'x'.repeat(10_000) })).toEqual([]);
    expect(edge(AddCommentBody, {})).toEqual([['body', 'required']]);
    expect(edge(AddCommentBody, { body: '' })).toEqual([['body', 'too_short']]);
    expect(edge(AddCommentBody, { body: 'x'.repeat(10_001) })).toEqual([['body', 'too_long']]);
    expect(edge(AddCommentBody, { body: 5, pinned: 'no', title: 'x' })).toEqual([
      ['body', 'invalid_type'],
      ['pinned', 'invalid_type'],
      ['title', 'unknown_field'],
    ]);
  });

  it('edit: requires body or pinned, each valid', () => {
    expect(edge(EditCommentBody, { pinned: true })).toEqual([]);
    expect(edge(EditCommentBody, {})).toEqual([['', 'required']]);
    expect(edge(EditCommentBody, { body: '', pinned: null })).toEqual([
      ['body', 'too_short'],
      ['pinned', 'invalid_type'],
    ]);
  });
});

describe('checkpoint bodies', () => {
  it('add: requires a title of 1 to 200 characters; body up to 10,000; optional label', () => {
    expect(edge(AddCheckpointBody, { title: 'Fix deployed', body: '', status_label: 'Monitoring' })).toEqual([]);
    expect(edge(AddCheckpointBody, { body: 'x' })).toEqual([['title', 'required']]);
    expect(edge(AddCheckpointBody, { title: 'x'.repeat(201), body: 'x'.repeat(10_001), status_label: 3 })).toEqual([
      ['body', 'too_long'],
      ['status_label', 'invalid_type'],
      ['title', 'too_long'],
    ]);
  });

  it('edit: requires one of status_label, title, body', () => {
    expect(edge(EditCheckpointBody, { status_label: 'Resolved' })).toEqual([]);
    expect(edge(EditCheckpointBody, {})).toEqual([['', 'required']]);
    expect(edge(EditCheckpointBody, { title: '', pinned: true })).toEqual([
      ['pinned', 'unknown_field'],
      ['title', 'too_short'],
    ]);
  });
});
