/**
 * The views' contract, as a scan of the source: each context defines its views' names and
 * document types (`src/<context>/domain/views.ts`); the projections and every reader import them.
 * So no code outside the composition root (`src/app`) imports `projections/`, and no reader or
 * projection spells a view or collection name as a string literal (a renamed view would leave
 * it reading an empty collection without a type error).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const PROJECTIONS_DIR = join(ROOT, 'projections');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/** Lines of `file` matching `pattern`, as `file:line: text`. */
function offending(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) =>
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .flatMap((text, index) => (pattern.test(text) ? [`${file}:${index + 1}: ${text.trim()}`] : [])),
  );
}

const IMPORT_FROM = /(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

describe('view contracts', () => {
  it('no file under src/ but the composition root (src/app) imports from projections/', () => {
    const importers = sources('src')
      .filter((file) => !file.startsWith('src/app/'))
      .filter((file) => {
        const text = readFileSync(join(ROOT, file), 'utf8');
        return [...text.matchAll(IMPORT_FROM)].some((match) => {
          const target = match[1] ?? match[2];
          return target.startsWith('.') && resolve(ROOT, dirname(file), target).startsWith(PROJECTIONS_DIR + '/');
        });
      });
    expect(importers).toEqual([]);
  });

  it('the composition root lists the projections', () => {
    const root = readFileSync(join(ROOT, 'src/app/contexts.ts'), 'utf8');
    const listed = sources('projections').filter((file) => new RegExp(`from '\\.\\./\\.\\./${file.replace(/\.ts$/, '\\.js')}'`).test(root));
    expect(listed).toEqual(sources('projections'));
  });

  it('no reader or projection names a view or a collection by a string literal', () => {
    const files = [...sources('src'), ...sources('projections')];
    const quote = `['"\`]`;
    const patterns = [
      // A view reader's projection and collection: reader.find('monitoring', 'endpoints', ...).
      new RegExp(`\\breader\\s*\\.\\s*(get|getMany|find|findIds|count|aggregate|stamps|collection|position)\\(\\s*(${quote}|[\\w.]+\\s*,\\s*${quote})`),
      // A projection's batch or the store: views.put('endpoints', ...), store.get('checks', ...).
      new RegExp(`\\b(views|store)\\s*\\.\\s*(get|getMany|find|findIds|count|aggregate|stamps|put|delete)\\(\\s*${quote}`),
      // new ViewCache(reader, 'monitoring', 'endpoints')
      new RegExp(`new View(List)?Cache(<[^>]*>)?\\([^,()]+,\\s*(${quote}|[\\w.]+\\s*,\\s*${quote})`),
      // { projection: 'alerting', collection: 'alert_status' } (view sources of derived caches)
      new RegExp(`\\b(projection|collection):\\s*${quote}`),
    ];
    const found = patterns.flatMap((pattern) => offending(files, pattern));
    // Projections name their projection and collections with the owning context's constants.
    const named = offending(sources('projections'), new RegExp(`\\bname:\\s*${quote}`));
    expect([...found, ...named]).toEqual([]);
  });
});
