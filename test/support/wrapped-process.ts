/**
 * Commands a service process can run under (startService's `wrap`): Debian's `faketime` for a
 * clock that runs ahead, `unshare` for a PID namespace of its own (the service is PID 1, as in
 * a container). Each is checked before use; null means it cannot run here and the caller
 * skips with the reason.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { childEnv } from './child-process.js';

function run(command: string[], script: string): string | null {
  const result = spawnSync(command[0], [...command.slice(1), process.execPath, '-e', script], { encoding: 'utf8', timeout: 10_000, env: childEnv() });
  return result.status === 0 ? result.stdout.trim() : null;
}

/** `faketime -f +<seconds>s`, when faketime is installed and moves Node's Date.now (checked); null otherwise. */
export function faketimeAhead(seconds: number): string[] | null {
  const wrap = ['faketime', '-f', `+${seconds}s`];
  const before = Date.now();
  const seen = Number(run(wrap, 'process.stdout.write(String(Date.now()))'));
  const offset = seen - before;
  return Number.isFinite(seen) && Math.abs(offset - seconds * 1000) < 10_000 ? wrap : null;
}

/** `unshare` giving the command a PID namespace of its own (it runs as PID 1), when it works here; null otherwise. */
export function ownPidNamespace(): string[] | null {
  // --kill-child: the service dies with the unshare process the test holds.
  for (const wrap of [
    ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child'],
    ['unshare', '--user', '--map-root-user', '--pid', '--fork', '--mount-proc', '--kill-child'],
  ]) {
    if (run(wrap, 'process.stdout.write(String(process.pid))') === '1') return wrap;
  }
  return null;
}

/** A wrapper forks the service: SIGKILL every descendant of `pid` (deepest first), so none outlives the test. */
export function killDescendants(pid: number): void {
  for (const child of childrenOf(pid)) {
    killDescendants(child);
    try {
      process.kill(child, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}
