/**
 * The service as an operator runs it: the production build (`tsc -p tsconfig.build.json`) in a
 * child process listening on a real port. Each test file builds once into its own `build-*`
 * folder (git-ignored) inside the project, so ESM resolution and node_modules work as for
 * `npm start`, and test files running at once never share a build.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface ServiceBuild {
  entry: string;
  remove(): void;
}

export async function buildService(name: string): Promise<ServiceBuild> {
  const outDir = join(ROOT, `build-${name}-${process.pid}`);
  await new Promise<void>((done, fail) =>
    execFile(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', outDir], { cwd: ROOT }, (error, stdout) =>
      error ? fail(new Error(`build failed: ${stdout}`)) : done(),
    ),
  );
  return { entry: join(outDir, 'src/main.js'), remove: () => rmSync(outDir, { recursive: true, force: true }) };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

export interface ServiceProcess {
  url: string;
  child: ChildProcess;
  /** Everything the process wrote, stdout and stderr. */
  output(): string;
  /** Resolves once /health/live answers (the HTTP listener is up). */
  live(timeoutMs?: number): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startService(build: ServiceBuild, env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [build.entry], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
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
    async live(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`service exited (${child.exitCode}):\n${output}`);
        const answered = await fetch(`${url}/health/live`).then((r) => r.ok, () => false);
        if (answered) return;
        if (Date.now() > deadline) throw new Error(`service not live after ${timeoutMs} ms:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
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
