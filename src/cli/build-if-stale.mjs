#!/usr/bin/env node
/**
 * Builds dist/ with the TypeScript compiler only when a source changed since the last build, so
 * `npm start`, `npm run projections|history|admin|bench` start from the build at once instead of
 * compiling every time. Plain JavaScript: it must run before anything is compiled.
 *
 * Stale when dist/ has no stamp, or any file or directory under the inputs is newer than the
 * newest input of the last successful build (recorded in dist/.build-stamp). Concurrent callers
 * (two CLIs, parallel tests) wait on one lock directory; the second finds the build fresh.
 * Compiler output goes to stderr so a CLI's stdout stays its own.
 *
 *   node src/cli/build-if-stale.mjs          build when stale
 *   node src/cli/build-if-stale.mjs --check  exit 1 when stale, build nothing
 *   node src/cli/build-if-stale.mjs --force  build now (`npm run build`), stamp included
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, 'dist');
const STAMP = join(dist, '.build-stamp');
const LOCK = join(dist, '.build-lock');
const ENTRY = join(dist, 'src', 'main.js');
const INPUTS = ['src', 'projections', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
const LOCK_STALE_MS = 5 * 60_000;

/** Newest modification time of a path and, for a directory, of everything under it (deletions touch the directory). */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  let latest = stat.mtimeMs;
  if (stat.isDirectory()) for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

const newestInput = () => Math.max(...INPUTS.map((input) => newest(join(root, input))));

function isStale() {
  if (!existsSync(ENTRY) || !existsSync(STAMP)) return true;
  const built = Number(readFileSync(STAMP, 'utf8').trim());
  return !Number.isFinite(built) || newestInput() > built;
}

const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function withLock(work) {
  mkdirSync(dist, { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const held = statSync(LOCK, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > LOCK_STALE_MS) rmSync(LOCK, { recursive: true, force: true });
      else sleep(200);
    }
  }
  try {
    return work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

if (process.argv.includes('--check')) process.exit(isStale() ? 1 : 0);
const force = process.argv.includes('--force');

if (force || isStale()) {
  const status = withLock(() => {
    if (!force && !isStale()) return 0; // built by whoever held the lock
    const inputs = newestInput();
    if (!force) process.stderr.write('Building dist/ (sources changed since the last build)...\n');
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: ['ignore', 2, 2] });
    if (result.status !== 0) return result.status ?? 1;
    writeFileSync(STAMP, `${inputs}\n`);
    return 0;
  });
  process.exit(status);
}
