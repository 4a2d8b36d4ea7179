/**
 * The incidents domain and command handlers throw domain errors only; the HTTP edge maps them
 * (incidents/http/incidents-errors.ts, registered with registerDomainErrors). A problem thrown
 * from below the edge would bypass that one mapping, and text built from one (like the reason a
 * released merge stores) would change whenever an answer is reworded.
 */
import { readdirSync, readFileSync } from 'node:fs';

describe('incidents below the HTTP edge', () => {
  const sources = ['src/incidents/domain', 'src/incidents/application'].flatMap((dir) => readdirSync(dir).filter((name) => name.endsWith('.ts')).map((name) => `${dir}/${name}`));

  it.each(sources)('%s does not use HTTP problems', (path) => {
    expect(readFileSync(path, 'utf8')).not.toMatch(/platform\/http\/problem\.js|\bProblems\.|\bProblemError\b/);
  });
});
