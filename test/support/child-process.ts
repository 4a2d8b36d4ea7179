/**
 * The one way a test starts a child process (a CLI, the built service, a fixture process): its
 * environment is built here, never spread from the test process's own.
 *
 * A child sees the machine's basics (PATH, HOME, locale, temp dir, ...), NODE_PATH (transpiled
 * fixtures outside the project resolve packages through it) and exactly what the test passes.
 * Nothing else leaks in: in particular the distributed stores' URLs that a CI job sets for the
 * adapter suites (EVENTSTORE_URL, MONGODB_URL, NATS_URL) and the service's settings. A child
 * started with EVENTSTORE_URL but no CURSOR_SIGNING_KEY would refuse to start (exit 78), and
 * one that silently used the CI's stores would test something other than what it says.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Variables a child inherits from the test process: the machine, not the service's settings. */
const INHERITED = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'TMP', 'TEMP', 'SYSTEMROOT', 'NODE_EXTRA_CA_CERTS', 'CI'];

/**
 * The environment for a child process: the inherited basics, NODE_PATH, then `given` (a value of
 * `undefined` removes a variable). Pass every setting the child needs, stores included.
 */
export function childEnv(given: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of INHERITED) {
    if (process.env[name] !== undefined) env[name] = process.env[name];
  }
  env.NODE_PATH = join(PROJECT_ROOT, 'node_modules');
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

export interface ChildResult {
  /** The exit code; 1 when the process died of a signal or could not start. */
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  maxBuffer?: number;
}

/** Runs `node script ...args` to its end (a CLI as an operator runs it); never rejects. */
export function runNode(script: string, args: readonly string[], options: RunOptions = {}): Promise<ChildResult> {
  return runCommand(process.execPath, [script, ...args], options);
}

/** Runs `command ...args` to its end with `childEnv(options.env)`; never rejects. */
export function runCommand(command: string, args: readonly string[], options: RunOptions = {}): Promise<ChildResult> {
  return new Promise((done) => {
    execFile(command, [...args], { env: childEnv(options.env), cwd: options.cwd ?? PROJECT_ROOT, maxBuffer: options.maxBuffer ?? 50_000_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      done({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}
