/**
 * The service as an operator runs it: the production build in a child process listening on a
 * real port. The build is the one `npm start` uses: dist/, compiled by src/cli/build-if-stale.mjs
 * only when a source changed (test files calling it at once wait on its lock, then share it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILT_MAIN, ensureBuilt, untilReady } from './built-service.js';
import { childEnv } from './child-process.js';
import { eventually } from './eventually.js';
import { LOADED_MACHINE_ENV } from './loaded-machine.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServiceBuild {
  entry: string;
  remove(): void;
}

/** The shared build, made current; `remove` leaves it for the next test file and `npm start`. */
export async function buildService(_name: string): Promise<ServiceBuild> {
  ensureBuilt();
  return { entry: BUILT_MAIN, remove: () => undefined };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

class ServiceExited extends Error {}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote, stdout and stderr. */
  output(): string;
  /** Resolves once /health/live answers (the HTTP listener is up). */
  live(timeoutMs?: number): Promise<void>;
  /** Resolves once /health/ready answers 200: the stores answer and its views are live (the
   * process listens before its runner starts, so live comes first). */
  ready(timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts the service on a free port with only `env` (see childEnv); resolves once it is live.
 * `wrap`: a command it runs under, e.g. `['faketime', '-f', '+120s']` (test/support/wrapped-process.ts). */
export async function startService(build: ServiceBuild, env: Record<string, string>, wrap: string[] = []): Promise<ServiceProcess> {
  const port = await freePort();
  const [command, ...args] = [...wrap, process.execPath, build.entry];
  const child = spawn(command, args, {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...LOADED_MACHINE_ENV, ...env }),
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const url = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = {
    url,
    child,
    output: () => output,
    async live(timeoutMs = 60_000) {
      await eventually(
        'the service to answer /health/live',
        async () => {
          if (child.exitCode !== null) throw new ServiceExited(`service exited (${child.exitCode}):\n${output}`);
          return fetch(`${url}/health/live`).then((r) => r.ok, () => false);
        },
        { timeoutMs, stopOn: (error) => error instanceof ServiceExited },
      ).catch((error: Error) => {
        throw error instanceof ServiceExited ? error : new Error(`${error.message}\n${output}`);
      });
    },
    ready: (timeoutMs) => untilReady(url, () => output, timeoutMs),
    async kill(signal = 'SIGKILL') {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise((done) => {
        child.once('exit', done);
        child.kill(signal);
      });
    },
  };
  await service.live();
  return service;
}

/** The service processes of one suite, on one DATA_DIR of their own. */
export interface SuiteServices {
  readonly build: ServiceBuild;
  readonly dataDir: string;
  /** startService with this DATA_DIR; the process is killed by close(). */
  start(env: Record<string, string>, wrap?: string[]): Promise<ServiceProcess>;
  /** Kills every process started, then removes the build's hold and the DATA_DIR. */
  close(): Promise<void>;
}

/** The build made current and a fresh DATA_DIR (named from `prefix`) for a suite's processes. */
export async function suiteServices(prefix: string): Promise<SuiteServices> {
  const build = await buildService(prefix);
  const dataDir = mkdtempSync(join(tmpdir(), prefix));
  const running: ServiceProcess[] = [];
  return {
    build,
    dataDir,
    async start(env, wrap = []) {
      const service = await startService(build, { DATA_DIR: dataDir, ...env }, wrap);
      running.push(service);
      return service;
    },
    async close() {
      for (const service of running.splice(0)) await service.kill();
      build.remove();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** One request to a service process over its real socket, with a bearer token and a JSON body. */
export async function callService(service: ServiceProcess, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, replayed: response.headers.get('idempotent-replayed') === 'true' };
}
