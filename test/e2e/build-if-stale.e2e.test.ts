/**
 * Build once: src/cli/build-if-stale.mjs (run by `npm start` and every CLI script) compiles only
 * when a source is newer than the last build. Exercised on a small project of its own (the
 * script, a tsconfig and one source file) so the shared dist/ is left alone.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../support/event-store-fixtures.js';

function build(root: string, ...args: string[]): { code: number; stderr: string } {
  const result = spawnSync(process.execPath, [join(root, 'src/cli/build-if-stale.mjs'), ...args], { cwd: root, encoding: 'utf8' });
  return { code: result.status ?? 1, stderr: result.stderr };
}

describe('src/cli/build-if-stale.mjs', () => {
  const project = makeTempDir('build-once-');
  const root = project.path;
  afterAll(() => project.remove());

  beforeAll(() => {
    mkdirSync(join(root, 'src/cli'), { recursive: true });
    copyFileSync(join(process.cwd(), 'src/cli/build-if-stale.mjs'), join(root, 'src/cli/build-if-stale.mjs'));
    symlinkSync(join(process.cwd(), 'node_modules'), join(root, 'node_modules'));
    writeFileSync(join(root, 'package.json'), '{"type":"module"}\n');
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'nodenext', target: 'ES2022', outDir: 'dist', rootDir: '.', types: [] } }));
    writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', include: ['src'] }));
    writeFileSync(join(root, 'src/main.ts'), 'export const answer: number = 42;\n');
  });

  it('builds when there is no build, then not again until a source changes', () => {
    expect(build(root, '--check').code).toBe(1);
    const first = build(root);
    expect(first).toEqual({ code: 0, stderr: expect.stringContaining('Building dist/') });
    expect(build(root, '--check').code).toBe(0);
    expect(build(root)).toEqual({ code: 0, stderr: '' });

    const later = new Date(Date.now() + 5_000);
    utimesSync(join(root, 'src/main.ts'), later, later);
    expect(build(root, '--check').code).toBe(1);
    expect(build(root).stderr).toContain('Building dist/');
    expect(build(root)).toEqual({ code: 0, stderr: '' });

    // npm run build: compiles unconditionally and leaves the build current for npm start
    utimesSync(join(root, 'src/main.ts'), new Date(Date.now() + 10_000), new Date(Date.now() + 10_000));
    expect(build(root, '--force').code).toBe(0);
    expect(build(root, '--check').code).toBe(0);
  }, 180_000);

  it('fails with the compiler errors and keeps the build stale when a source does not compile', () => {
    writeFileSync(join(root, 'src/broken.ts'), 'export const broken: number = "text";\n');
    // Newer than every earlier input, whatever times the first test left behind.
    utimesSync(join(root, 'src/broken.ts'), new Date(Date.now() + 20_000), new Date(Date.now() + 20_000));
    const result = build(root);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('broken.ts');
    expect(build(root, '--check').code).toBe(1);
  }, 60_000);
});
