/**
 * The reason stored in IncidentMergeReleased, for every error a merge can fail with, including
 * those no request can provoke today (test/http/incidents-merge-release-reasons.test.ts drives
 * the reachable ones through the API). These are the texts written since releases exist: stored
 * events are kept forever, so a change here is a change to history.
 */
import { ConcurrencyError } from '../../../src/platform/es/stream-command.js';
import {
  CheckpointNotFoundError,
  CommentNotFoundError,
  IncidentAlreadyExistsError,
  IncidentMergedError,
  IncidentNotFoundError,
  IncidentValidationError,
  UnknownIdError,
} from '../../../src/incidents/domain/errors.js';
import { mergeFailureReason } from '../../../src/incidents/domain/merge-failure.js';

describe('the reason a failed merge stores', () => {
  it.each<[string, unknown, string]>([
    ['target merged away', new IncidentMergedError(7, 9), 'incident_merged: Incident 7 was merged into incident 9 and accepts no further changes; write to incident 9 instead.'],
    ['source merged concurrently', new IncidentValidationError([{ field: 'source_incident_ids[1]', code: 'conflict', message: 'incident 12 was merged by a concurrent request' }]), 'validation_failed: source_incident_ids[1]: incident 12 was merged by a concurrent request'],
    [
      'several merge rules broken',
      new IncidentValidationError([
        { field: 'source_incident_ids[0]', code: 'conflict', message: 'incident 3 was already merged into this incident' },
        { field: 'source_incident_ids[2]', code: 'not_found', message: 'incident 5 not found' },
        { field: 'source_incident_ids[3]', code: 'not_unique', message: 'incident 5 is listed more than once' },
      ]),
      'validation_failed: source_incident_ids[0]: incident 3 was already merged into this incident (and 2 more)',
    ],
    ['a rule about the whole body', new IncidentValidationError([{ field: '', code: 'required', message: 'at least one source incident is required' }]), 'validation_failed: at least one source incident is required'],
    ['a message naming its field', new IncidentValidationError([{ field: 'last_error_at', code: 'conflict', message: 'last_error_at must not precede first_error_at' }]), 'validation_failed: last_error_at: must not precede first_error_at'],
    ['no rule listed', new IncidentValidationError([]), 'validation_failed: The request is invalid.'],
    [
      'more than one answer lists (50)',
      new IncidentValidationError(Array.from({ length: 60 }, (_, i) => ({ field: `source_incident_ids[${i}]`, code: 'conflict', message: `incident ${i} was already merged` }))),
      'validation_failed: source_incident_ids[0]: incident 0 was already merged (and 59 more)',
    ],
    ['a source gone from the team', new UnknownIdError('incident'), 'not_found: The incident does not exist.'],
    ['an incident stream gone', new IncidentNotFoundError(null), 'not_found: Incident does not exist.'],
    ['an incident gone, by id', new IncidentNotFoundError(4), 'not_found: Incident 4 does not exist.'],
    ['a comment gone', new CommentNotFoundError(4, 8), 'not_found: Comment 8 does not exist.'],
    ['a checkpoint gone', new CheckpointNotFoundError(4, 2), 'not_found: Checkpoint 2 does not exist.'],
    ['an id allocated twice (a bug)', new IncidentAlreadyExistsError(4), 'internal_error: the merge could not be completed'],
    ['a stream busy beyond the retries', new ConcurrencyError('incident-4', 8), 'internal_error: the merge could not be completed'],
    ['a store failure', new Error('disk I/O error'), 'internal_error: the merge could not be completed'],
  ])('%s', (_kind, error, reason) => {
    expect(mergeFailureReason(error)).toBe(reason);
  });
});
