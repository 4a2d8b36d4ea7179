/**
 * Tenancy (teams and tokens) is what every other context builds on, so nothing in it imports
 * another context: an arrow from tenancy to, say, monitoring would run back up (issue 30 item 5;
 * `PaginationDto` lived in monitoring and moved down to platform).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  );
}

describe('tenancy imports no other context', () => {
  it.each(sources('src/tenancy'))('%s', (path) => {
    const imported = [...readFileSync(path, 'utf8').matchAll(/from '((?:\.\.\/)+)([a-z-]+)\//g)].filter(([, up]) => up.length / 3 >= path.split('/').length - 2).map(([, , top]) => top);
    expect(imported.filter((top) => top !== 'platform' && top !== 'tenancy')).toEqual([]);
  });
});
