/** A bench run rewrites its own section of docs/benchmarks.md and nothing written by hand. */
import { mergeSections } from '../../../bench/benchmarks-file.js';

const section = (name: string, body: string) => `<!-- bench:${name} -->\n## ${name}\n\n${body}\n\n<!-- /bench:${name} -->`;

describe('docs/benchmarks.md after a bench run', () => {
  const existing = [
    '# Benchmarks',
    '',
    'Intro.',
    '',
    section('alpha', 'alpha 1'),
    '',
    'A note written by hand between sections.',
    '',
    section('beta', 'beta 1'),
    '',
    '## Before and after (written by hand)',
    '',
    '| figure | before | after |',
    '',
  ].join('\n');

  it('replaces the section of the module that ran and keeps every hand-written paragraph', () => {
    const merged = mergeSections(existing, new Map([['beta', section('beta', 'beta 2')]]));
    expect(merged).toBe(existing.replace('beta 1', 'beta 2'));
  });

  it('adds a module\'s first section after the last section, before the hand-written tail', () => {
    const merged = mergeSections(existing, new Map([['gamma', section('gamma', 'gamma 1')]]));
    expect(merged.indexOf('gamma 1')).toBeGreaterThan(merged.indexOf('beta 1'));
    expect(merged.indexOf('gamma 1')).toBeLessThan(merged.indexOf('## Before and after (written by hand)'));
    expect(merged).toContain('A note written by hand between sections.');
    expect(merged).toContain('| figure | before | after |');
  });

  it('starts a missing file with its header', () => {
    const merged = mergeSections('', new Map([['alpha', section('alpha', 'alpha 1')]]));
    expect(merged.startsWith('# Benchmarks\n')).toBe(true);
    expect(merged).toContain('alpha 1');
  });
});
