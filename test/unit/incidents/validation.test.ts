import {
  characterCount,
  validateCheckpointCreate,
  validateCheckpointUpdate,
  validateCommentCreate,
  validateCommentUpdate,
  validateCreateIncident,
  validateMerge,
  validateUpdateDetails,
  validateUpdateStatus,
  type FieldError,
} from '../../../src/incidents/domain/validation.js';

/** `[field, code]` pairs: what a client reads to fix its request. */
const rules = (errors: FieldError[]) => errors.map((e) => [e.field, e.code]);

const valid = { project_id: 5, title: 'Checkout failing' };
const create = (overrides: Record<string, unknown>) => rules(validateCreateIncident({ ...valid, ...overrides }));

describe('create incident body', () => {
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
    expect(rules(validateCreateIncident({ title: 't' }))).toEqual([['project_id', 'required']]);
    expect(rules(validateCreateIncident({ title: 't', endpoint_ids: [] }))).toEqual([['project_id', 'required']]);
    expect(rules(validateCreateIncident({ title: 't', endpoint_ids: [3] }))).toEqual([]);
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
    ['last_error_at before first_error_at', { first_error_at: '2026-03-01T10:00:00Z', last_error_at: '2026-03-01T11:59:59+02:00' }, [['last_error_at', 'conflict']]],
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

  it('compares an omitted first_error_at as the current time', () => {
    const facts = { now: '2026-03-01T10:00:00.000Z' };
    expect(rules(validateCreateIncident({ ...valid, last_error_at: '2026-03-01T09:00:00Z' }, facts))).toEqual([['last_error_at', 'conflict']]);
    expect(rules(validateCreateIncident({ ...valid, last_error_at: '2026-03-01T10:00:00Z' }, facts))).toEqual([]);
  });

  it('reports a body that is not an object', () => {
    expect(rules(validateCreateIncident([valid]))).toEqual([['', 'invalid_type']]);
    expect(rules(validateCreateIncident(null))).toEqual([['', 'invalid_type']]);
  });

  it('lists every violation at once', () => {
    const errors = validateCreateIncident({
      endpoint_ids: [1, 1],
      title: '',
      severity: 'low',
      status: 'Identified',
      status_id: 2,
      first_error_at: 'now',
      extra: true,
    });
    expect(rules(errors)).toEqual([
      ['extra', 'unknown_field'],
      ['endpoint_ids[1]', 'not_unique'],
      ['title', 'too_short'],
      ['severity', 'invalid_value'],
      ['first_error_at', 'invalid_value'],
      ['status', 'conflict'],
    ]);
    expect(errors.every((e) => e.message.length > 0)).toBe(true);
  });

  describe('with facts looked up in the team', () => {
    const facts = {
      projectIds: [5, 6],
      endpointProjects: { 1: 5, 2: 5, 3: 6 },
      statuses: [
        { id: 1, name: 'Investigating' },
        { id: 2, name: 'Identified' },
      ],
    };
    const check = (body: Record<string, unknown>) => rules(validateCreateIncident({ title: 't', ...body }, facts));

    it('accepts endpoints of the selected project and a known status', () => {
      expect(check({ project_id: 5, endpoint_ids: [1, 2], status: 'Identified' })).toEqual([]);
      expect(check({ endpoint_ids: [3], status_id: 1 })).toEqual([]);
    });

    it('rejects an endpoint of another project, an unknown endpoint and an unknown project', () => {
      expect(check({ project_id: 5, endpoint_ids: [1, 3, 99] })).toEqual([
        ['endpoint_ids[2]', 'not_found'],
        ['endpoint_ids[1]', 'conflict'],
      ]);
      expect(check({ project_id: 77 })).toEqual([['project_id', 'not_found']]);
    });

    it('rejects endpoints spanning projects when no project is named', () => {
      expect(check({ endpoint_ids: [1, 3] })).toEqual([['endpoint_ids', 'conflict']]);
    });

    it('matches status names exactly and case-sensitively', () => {
      expect(check({ project_id: 5, status: 'identified' })).toEqual([['status', 'not_found']]);
      expect(check({ project_id: 5, status_id: 9 })).toEqual([['status_id', 'not_found']]);
    });

    it('reports lookup failures together with shape errors', () => {
      expect(check({ project_id: 5, endpoint_ids: [3], title: '', status: 'Fixed' })).toEqual([
        ['title', 'too_short'],
        ['status', 'not_found'],
        ['endpoint_ids[0]', 'conflict'],
      ]);
    });
  });
});

describe('update details body', () => {
  const current = { project_id: 5, endpoint_ids: [1, 2], first_error_at: '2026-03-01T10:00:00.000Z', last_error_at: '2026-03-01T12:00:00.000Z' };
  const update = (body: unknown, facts = {}) => rules(validateUpdateDetails(body, current, facts));

  it('requires at least one field', () => {
    expect(update({})).toEqual([['', 'required']]);
  });

  it('applies the create rules to each field it is given', () => {
    expect(update({ title: '' })).toEqual([['title', 'too_short']]);
    expect(update({ type: 'x'.repeat(81), severity: 'high', endpoint_ids: [0] })).toEqual([
      ['endpoint_ids[0]', 'out_of_range'],
      ['type', 'too_long'],
      ['severity', 'invalid_value'],
    ]);
    expect(update({ endpoint_ids: [] })).toEqual([]);
  });

  it('rejects fields that are not details', () => {
    expect(update({ status_id: 2 })).toEqual([
      ['status_id', 'unknown_field'],
      ['', 'required'],
    ]);
  });

  it("checks error times against the incident's stored ones", () => {
    expect(update({ last_error_at: '2026-03-01T09:59:59Z' })).toEqual([['last_error_at', 'conflict']]);
    expect(update({ first_error_at: '2026-03-01T12:00:01Z' })).toEqual([['first_error_at', 'conflict']]);
    expect(update({ first_error_at: '2026-03-01T12:00:01Z', last_error_at: '2026-03-01T13:00:00Z' })).toEqual([]);
  });

  it('checks endpoints against the project, new or current', () => {
    const facts = { projectIds: [5, 6], endpointProjects: { 1: 5, 2: 5, 3: 6 } };
    expect(update({ endpoint_ids: [1, 3] }, facts)).toEqual([['endpoint_ids[1]', 'conflict']]);
    expect(update({ project_id: 6 }, facts)).toEqual([['project_id', 'conflict']]);
    expect(update({ project_id: 6, endpoint_ids: [3] }, facts)).toEqual([]);
    expect(update({ project_id: 8 }, facts)).toEqual([['project_id', 'not_found']]);
  });
});

describe('update status body', () => {
  const statuses = [{ id: 1, name: 'Investigating' }];

  it('accepts each field alone', () => {
    for (const body of [{ status: 'Investigating' }, { status_id: 1 }, { resolved: true }, { auto_resolve: false }]) {
      expect(validateUpdateStatus(body, { statuses })).toEqual([]);
    }
  });

  it('requires one of status, status_id, resolved, auto_resolve', () => {
    expect(rules(validateUpdateStatus({}))).toEqual([['', 'required']]);
  });

  it('rejects status with status_id, wrong types and unknown statuses, all at once', () => {
    expect(rules(validateUpdateStatus({ status: 'Gone', status_id: 1, resolved: 'yes', auto_resolve: 1, note: 'x' }, { statuses }))).toEqual([
      ['note', 'unknown_field'],
      ['status', 'conflict'],
      ['resolved', 'invalid_type'],
      ['auto_resolve', 'invalid_type'],
      ['status', 'not_found'],
    ]);
  });
});

describe('merge body', () => {
  const sources = { 11: { merged_into_id: null }, 12: { merged_into_id: null }, 13: { merged_into_id: 40 } };
  const merge = (body: unknown) => rules(validateMerge(body, 10, { sources }));

  it('accepts unique existing sources', () => {
    expect(merge({ source_incident_ids: [11, 12] })).toEqual([]);
  });

  it.each([
    ['missing', {}, [['source_incident_ids', 'required']]],
    ['not an array', { source_incident_ids: 11 }, [['source_incident_ids', 'invalid_type']]],
    ['empty', { source_incident_ids: [] }, [['source_incident_ids', 'too_short']]],
    ['a non-integer', { source_incident_ids: ['11'] }, [['source_incident_ids[0]', 'invalid_type']]],
    ['a zero id', { source_incident_ids: [0] }, [['source_incident_ids[0]', 'out_of_range']]],
    ['a duplicate', { source_incident_ids: [11, 11] }, [['source_incident_ids[1]', 'not_unique']]],
    ['the target itself', { source_incident_ids: [10] }, [['source_incident_ids[0]', 'conflict']]],
    ['an unknown or other-team incident', { source_incident_ids: [99] }, [['source_incident_ids[0]', 'not_found']]],
    ['an already merged incident', { source_incident_ids: [13] }, [['source_incident_ids[0]', 'conflict']]],
  ])('rejects %s', (_name, body, expected) => {
    expect(merge(body)).toEqual(expected);
  });

  it('lists every bad source at once', () => {
    expect(merge({ source_incident_ids: [10, 11, 11, 99, 13] })).toEqual([
      ['source_incident_ids[2]', 'not_unique'],
      ['source_incident_ids[0]', 'conflict'],
      ['source_incident_ids[3]', 'not_found'],
      ['source_incident_ids[4]', 'conflict'],
    ]);
  });
});

describe('comment bodies', () => {
  it('create: requires a body of 1 to 10,000 characters', () => {
    expect(validateCommentCreate({ body: 'x'.repeat(10_000) })).toEqual([]);
    expect(rules(validateCommentCreate({}))).toEqual([['body', 'required']]);
    expect(rules(validateCommentCreate({ body: '' }))).toEqual([['body', 'too_short']]);
    expect(rules(validateCommentCreate({ body: 'x'.repeat(10_001) }))).toEqual([['body', 'too_long']]);
    expect(rules(validateCommentCreate({ body: 5, pinned: 'no', title: 'x' }))).toEqual([
      ['title', 'unknown_field'],
      ['body', 'invalid_type'],
      ['pinned', 'invalid_type'],
    ]);
  });

  it('update: requires body or pinned, each valid', () => {
    expect(validateCommentUpdate({ pinned: true })).toEqual([]);
    expect(rules(validateCommentUpdate({}))).toEqual([['', 'required']]);
    expect(rules(validateCommentUpdate({ body: '', pinned: null }))).toEqual([
      ['body', 'too_short'],
      ['pinned', 'invalid_type'],
    ]);
  });
});

describe('checkpoint bodies', () => {
  it('create: requires a title of 1 to 200 characters; body up to 10,000; optional label', () => {
    expect(validateCheckpointCreate({ title: 'Fix deployed', body: '', status_label: 'Monitoring' })).toEqual([]);
    expect(rules(validateCheckpointCreate({ body: 'x' }))).toEqual([['title', 'required']]);
    expect(rules(validateCheckpointCreate({ title: 'x'.repeat(201), body: 'x'.repeat(10_001), status_label: 3 }))).toEqual([
      ['title', 'too_long'],
      ['body', 'too_long'],
      ['status_label', 'invalid_type'],
    ]);
  });

  it('update: requires one of status_label, title, body', () => {
    expect(validateCheckpointUpdate({ status_label: 'Resolved' })).toEqual([]);
    expect(rules(validateCheckpointUpdate({}))).toEqual([['', 'required']]);
    expect(rules(validateCheckpointUpdate({ title: '', pinned: true }))).toEqual([
      ['pinned', 'unknown_field'],
      ['title', 'too_short'],
    ]);
  });
});
