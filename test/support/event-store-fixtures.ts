import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import Database from 'better-sqlite3';
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';
import { SqliteEventStore } from '../../src/platform/event-store/sqlite/sqlite-event-store.js';
import { PROJECT_ROOT, runNode as runChild } from './child-process.js';

/**
 * Runs SQL on a stored event log (an `events.sqlite` file) as someone with file access would;
 * returns how many rows it changed. The tests that edit a running service's log open it through
 * SQLite like this, never its -wal or -shm files.
 */
export function tamperWithLog(file: string, sql: string): number {
  const db = new Database(file);
  try {
    db.exec(sql);
    return (db.prepare('SELECT total_changes() AS changed').get() as { changed: number }).changed;
  } finally {
    db.close();
  }
}

/** The `WHERE` condition for the rows of one stream of the log, by its name. */
export const streamRow = (name: string) => `stream = (SELECT id FROM event_streams WHERE name = '${name}')`;

/** A fresh directory per test; `remove()` deletes it with everything inside. */
export function makeTempDir(prefix = 'event-store-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * For each test of the calling describe block: a fresh directory with a SQLite event log open in
 * it (`store`; `path` is the directory, for a second connection to the same file), closed and
 * removed after the test. Read its members inside tests and hooks, not at the describe's top.
 */
export function useTempSqliteStore(): { readonly store: SqliteEventStore; readonly path: string } {
  const current = {} as { store: SqliteEventStore; path: string };
  let temp: ReturnType<typeof makeTempDir>;
  beforeEach(() => {
    temp = makeTempDir();
    current.path = temp.path;
    current.store = new SqliteEventStore(join(temp.path, 'events.sqlite'));
  });
  afterEach(async () => {
    await current.store.close();
    temp.remove();
  });
  return current;
}

/**
 * Transpiles `entries` and every project source they import at run time to CommonJS under
 * `outDir`, so a plain `node` child process can run them (jest's ts-jest transform only exists
 * inside the test process). Relative imports already end in `.js`, so the output tree resolves as
 * is; packages resolve through NODE_PATH. Following the imports means a new module on the path
 * needs no test edit.
 */
export async function transpileForChildProcess(entries: readonly string[], outDir: string): Promise<void> {
  const ts = (await import('typescript')).default;
  for (const source of runtimeSources(entries)) {
    const text = readFileSync(join(PROJECT_ROOT, source), 'utf8');
    const output = ts.transpileModule(text, {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    }).outputText
      // CommonJS has no import.meta: a module's own URL comes from __filename.
      .replaceAll('import.meta.url', "require('node:url').pathToFileURL(__filename).href");
    const target = join(outDir, source.replace(/\.ts$/, '.js'));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output);
  }
}

/** The entries and every source they import at run time (type-only imports are erased), relative to the project root. */
function runtimeSources(entries: readonly string[]): string[] {
  const found = new Set<string>();
  const visit = (file: string) => {
    if (found.has(file)) return;
    found.add(file);
    const text = readFileSync(join(PROJECT_ROOT, file), 'utf8');
    for (const match of text.matchAll(/^(?:import|export)(?!\s+type\b)[^;]*?from\s+'(\.{1,2}\/[^']+)\.js'/gms)) {
      visit(normalize(join(dirname(file), `${match[1]}.ts`)));
    }
  };
  for (const entry of entries) visit(entry);
  return [...found];
}

/** Runs `node script args...` (environment: childEnv) and resolves with its stdout; rejects with stderr on failure. */
export async function runNode(script: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const result = await runChild(script, args, { env });
  if (result.code !== 0) throw new Error(`${script} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

type Append = EventStore['append'];

/** Holds the first append that `matches` until `release()`; `reached` resolves when it arrives. */
export function holdAppend(events: EventStore, matches: (stream: string, types: string[]) => boolean) {
  const original: Append = events.append.bind(events);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let held = false;
  events.append = (async (stream, batch, options) => {
    if (!held && matches(stream, batch.map((e) => e.type))) {
      held = true;
      arrived();
      await gate;
    }
    return original(stream, batch, options);
  }) as Append;
  return {
    reached,
    release,
    restore: () => {
      release();
      events.append = original;
    },
  };
}
