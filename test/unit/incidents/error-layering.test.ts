/**
 * Every context's domain, application, view and reactor code throws domain errors only; its HTTP edge maps them
 * (`<context>/http/<context>-errors.ts`, listed at the composition root). A problem thrown from
 * below the edge would bypass that one mapping, and text built from one (like the reason a
 * released merge stores) would change whenever an answer is reworded.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

describe('contexts below the HTTP edge', () => {
  const contexts = readdirSync('src', { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !['app', 'cli', 'platform'].includes(entry.name))
    .map((entry) => entry.name);
  // Views (`views/<view>/`: definitions, projection, queries) and reactors sit below the edge too.
  const sources = contexts
    .flatMap((context) => ['domain', 'application', 'views', 'reactors'].map((layer) => `src/${context}/${layer}`))
    .filter(existsSync)
    .flatMap((dir) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.ts')).map((name) => `${dir}/${name}`));

  it.each(sources)('%s does not use HTTP problems', (path) => {
    expect(readFileSync(path, 'utf8')).not.toMatch(/platform\/http\/problem\.js|\bProblems\.|\bProblemError\b/);
  });
});
