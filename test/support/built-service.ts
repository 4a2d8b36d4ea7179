/**
 * The service as an operator runs it: `node dist/src/main.js` from the build that `npm start`
 * uses (src/cli/build-if-stale.mjs builds it first when a source changed), as a child process
 * with its own data dir. Its stdout is JSON log lines, kept for the test to parse.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { childEnv } from './child-process.js';
import { eventually } from './eventually.js';
import { LOADED_MACHINE_ENV } from './loaded-machine.js';

const ROOT = process.cwd();
export const BUILT_MAIN = join(ROOT, 'dist/src/main.js');
export const builtCli = (name: 'projections' | 'history' | 'admin' | 'retention') => join(ROOT, `dist/src/cli/${name}.js`);

/** Builds dist/ when stale (no-op when fresh); safe to call from parallel test files. */
export function ensureBuilt(): void {
  execFileSync(process.execPath, [join(ROOT, 'src/cli/build-if-stale.mjs')], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
}

export interface BuiltService {
  child: ChildProcess;
  pid: number;
  url: string;
  /** Every stdout line so far, parsed (non-JSON lines are kept as `{ text }`). */
  lines(): Array<Record<string, any>>;
  /** Every stdout line so far, as written. */
  rawLines(): string[];
  stderr(): string;
  /** Resolves once /health/ready answers 200: its processors have started and caught up (it logs
   * "service started" when it listens, before its runner starts). */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM, then resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts the built service on a free port; resolves once it logged "service started". It gets
 * only `env` (see childEnv): embedded stores unless the test names a server.
 */
export function startBuiltService(env: Record<string, string>): Promise<BuiltService> {
  const child = spawn(process.execPath, [BUILT_MAIN], {
    cwd: ROOT,
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', ...LOADED_MACHINE_ENV, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<Record<string, any>> = [];
  const raw: string[] = [];
  let pending = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const text of complete) {
        if (!text.trim()) continue;
        raw.push(text);
        let line: Record<string, any>;
        try {
          line = JSON.parse(text);
        } catch {
          line = { text };
        }
        lines.push(line);
        if (line.msg === 'service started') {
          resolve({
            child,
            pid: child.pid!,
            url: line.url,
            lines: () => lines,
            rawLines: () => raw,
            stderr: () => stderr,
            ready: (timeoutMs) => untilReady(line.url, () => `${raw.join('\n')}\n${stderr}`, timeoutMs),
            stop: () => {
              child.kill('SIGTERM');
              return exited;
            },
          });
        }
      }
    });
    exited.then((code) => reject(new Error(`service exited with ${code} before it started:\n${stderr}`)));
  });
}

/** Polls a service's /health/ready until it answers 200; on the deadline, fails showing `output()`. */
export async function untilReady(url: string, output: () => string, timeoutMs = 120_000): Promise<void> {
  await eventually('the service to answer /health/ready with 200', async () => (await fetch(`${url}/health/ready`)).status === 200, { timeoutMs }).catch((error: Error) => {
    throw new Error(`${error.message}\n${output()}`);
  });
}

/** Bytes a process wrote: `wchar` (every write/pwrite syscall) and `write_bytes` (what reached the block layer). */
export function processIo(pid: number): { wchar: number; writeBytes: number } {
  const fields = Object.fromEntries(
    readFileSync(`/proc/${pid}/io`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => line.split(':').map((part) => part.trim()) as [string, string]),
  );
  return { wchar: Number(fields.wchar), writeBytes: Number(fields.write_bytes) };
}
