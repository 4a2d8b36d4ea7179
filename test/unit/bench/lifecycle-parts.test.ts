/**
 * LIFECYCLE_PARTS names the lifecycle bench's parts to run; each name is honoured on its own
 * (`steady` alone once never reached the retention part), and a misspelt name fails the run
 * rather than running nothing.
 */
import { LIFECYCLE_PARTS, lifecycleParts } from '../../../bench/lifecycle.bench.js';

describe('lifecycle bench parts', () => {
  it('runs every part when LIFECYCLE_PARTS is unset or empty', () => {
    expect([...lifecycleParts(undefined)]).toEqual([...LIFECYCLE_PARTS]);
    expect([...lifecycleParts('')]).toEqual([...LIFECYCLE_PARTS]);
  });

  it.each(LIFECYCLE_PARTS.map((part) => [part]))('runs %s alone', (part) => {
    expect([...lifecycleParts(part)]).toEqual([part]);
  });

  it('takes a comma-separated subset, spaces allowed', () => {
    expect(lifecycleParts('steady, rebuild')).toEqual(new Set(['steady', 'rebuild']));
  });

  it('refuses a name that is not a part', () => {
    expect(() => lifecycleParts('steady,retention')).toThrow(/unknown part retention/);
  });
});
