/**
 * The views' contract, as a scan of the source. A view is one slice,
 * `src/<owning context>/views/<view>/`: `view.ts` (its projection and collection names, document
 * types and pure builders), `projection.ts` (its handlers) and `queries.ts` (its reads). Reactors
 * live in `src/<context>/reactors/`. `projections/index.ts` is the catalogue of the processors
 * the runner keeps, imported by the composition root (`src/app/contexts.ts`) and nothing else.
 * No reader or projection spells a view or collection name as a string literal (a renamed view
 * would leave it reading an empty collection without a type error).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projections as catalogued } from '../../../src/app/contexts.js';
import type { Projection } from '../../../src/platform/projections/projection.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const PROJECTIONS_DIR = join(ROOT, 'projections');
const CATALOGUE = 'projections/index.ts';
const SLICE_FILES = ['projection.ts', 'queries.ts', 'view.ts'];

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

/** The files `file` imports by a relative path, as paths from the root (`.js` read as `.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT_FROM)]
    .map((match) => match[1] ?? match[2])
    .filter((target) => target.startsWith('.'))
    .map((target) => relative(ROOT, resolve(ROOT, dirname(file), target)).replace(/\.js$/, '.ts'));
}

const contexts = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** Every view slice folder: `src/<context>/views/<view>`. */
const slices = contexts.flatMap((context) => {
  const dir = join(ROOT, 'src', context, 'views');
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).map((entry) => `src/${context}/views/${entry.name}`);
});

describe('view contracts', () => {
  it('no file but the composition root (src/app/contexts.ts) imports from projections/', () => {
    const importers = [...sources('src'), ...sources('test'), ...sources('bench')]
      .filter((file) => file !== 'src/app/contexts.ts')
      .filter((file) => importsOf(file).some((target) => join(ROOT, target).startsWith(PROJECTIONS_DIR + '/')));
    expect(importers).toEqual([]);
  });

  it('every view is a slice folder holding view.ts, projection.ts and queries.ts, and nothing else', () => {
    expect(slices.length).toBeGreaterThan(0);
    const shapes = slices.map((slice) => [slice, readdirSync(join(ROOT, slice)).sort()]);
    expect(shapes).toEqual(slices.map((slice) => [slice, SLICE_FILES]));
    // The old homes are gone: no context keeps a `domain/views.ts` or an `application/*.reads.ts`.
    const oldHomes = sources('src').filter((file) => /^src\/[^/]+\/(domain\/views\.ts|application\/[^/]+\.reads\.ts)$/.test(file));
    expect(oldHomes).toEqual([]);
  });

  it('the catalogue lists every slice projection and every reactor of the runner, and only those', async () => {
    const exported = async (file: string): Promise<unknown[]> => Object.values(await import(join(ROOT, file)));
    const projections = slices.map((slice) => `${slice}/projection.ts`);
    const reactors = sources('src').filter((file) => /^src\/[^/]+\/reactors\//.test(file));
    const homes = [...projections, ...reactors];
    const byHome = new Map(await Promise.all(homes.map(async (file) => [file, await exported(file)] as const)));
    const catalogue = catalogued();
    // Each slice's projection is listed, and everything listed is a slice's projection or a reactor.
    expect(projections.filter((file) => !byHome.get(file)!.some((value) => catalogue.includes(value as Projection)))).toEqual([]);
    expect(catalogue.filter((processor) => ![...byHome.values()].some((values) => values.includes(processor))).map((processor) => processor.name)).toEqual([]);
    // projections/ keeps the catalogue (and its README) only: the handlers live in the slices.
    expect(readdirSync(PROJECTIONS_DIR).sort()).toEqual(['README.md', 'index.ts']);
  });

  it("a slice's view.ts is plain definitions: it imports no handlers, no queries and no Nest", () => {
    const views = slices.map((slice) => `${slice}/view.ts`);
    const found = views.flatMap((file) =>
      importsOf(file)
        .filter((target) => /\/views\/[^/]+\/(projection|queries)\.ts$/.test(target) || /\/reactors\//.test(target))
        .map((target) => `${file} imports ${target}`),
    );
    expect([...found, ...offending(views, /from '@nestjs\//)]).toEqual([]);
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
    // Projections name their projection and collections with their view.ts's constants.
    const named = offending(
      slices.map((slice) => `${slice}/projection.ts`),
      new RegExp(`\\bname:\\s*${quote}`),
    );
    expect([...found, ...named]).toEqual([]);
  });
});
