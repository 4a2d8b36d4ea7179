import { IncidentValidationError } from '../../../src/incidents/domain/errors.js';
import { MonitoringRulesError } from '../../../src/monitoring/domain/errors.js';
import { ChannelRulesError } from '../../../src/notifications/domain/errors.js';
import { type RuleViolation, violationsMessage } from '../../../src/platform/rules/rule-violation.js';
import { SloRulesError } from '../../../src/slos/domain/errors.js';
import { StatusPageRulesError } from '../../../src/statuspages/domain/errors.js';

const violations: RuleViolation[] = [
  { field: 'name', code: 'required', message: 'is required' },
  { field: 'window_days', code: 'out_of_range', message: 'must be at most 90' },
];

describe('violationsMessage', () => {
  it('puts every violation on one line, field first, in the order given', () => {
    expect(violationsMessage(violations)).toBe('name: is required; window_days: must be at most 90');
    expect(violationsMessage([])).toBe('');
  });

  it('is the message of every context rules error, which keeps the violations for the edge', () => {
    const errors = [new MonitoringRulesError(violations), new ChannelRulesError(violations), new SloRulesError(violations), new StatusPageRulesError(violations)];
    for (const error of errors) {
      expect(error.message).toBe(violationsMessage(violations));
      expect(error.violations).toBe(violations);
    }
    const incident = new IncidentValidationError(violations);
    expect(incident.message).toBe(violationsMessage(violations));
    expect(incident.errors).toBe(violations);
  });
});
