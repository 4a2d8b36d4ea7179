/**
 * Operator's day one: how long `npm start` takes to be ready from a build that is current
 * (the staleness check, then `node dist/src/main.js`) against what every start used to cost
 * (the compiler, then the same start), and what an idle ROLE=all service writes a minute
 * (/proc/<pid>/io, aim < 512 KB). Run from dist/ (`npm run bench -- startup`).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchModule } from './bench.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = join(root, 'dist/src/main.js');

/**
 * Spawns the built service; resolves with its pid once /health/ready answers 200. It logs
 * "service started" when it listens, before its runner starts the processors (a rebuild at start
 * runs behind a live port): ready, not that line, is what an operator waits for.
 */
function startService(dataDir: string): Promise<{ pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [MAIN], {
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, ADMIN_TOKEN: 'bench-startup-admin-token-0123', EVENTSTORE_URL: '', MONGODB_URL: '', NATS_URL: '', ROLE: 'all' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const lines = out.split('\n');
      out = lines.pop()!;
      const started = lines.map((line) => (line.startsWith('{') ? JSON.parse(line) : {})).find((line) => line.msg === 'service started');
      if (!started) return;
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      untilReady(started.url).then(() => resolve({ pid: child.pid!, stop: () => (child.kill('SIGTERM'), exited) }), reject);
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
}

/** Polls /health/ready every 10 ms until it answers 200. */
async function untilReady(url: string): Promise<void> {
  while ((await fetch(`${url}/health/ready`).then((r) => r.status, () => 0)) !== 200) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function timeToReady(dataDir: string, before?: () => void): Promise<number> {
  const started = performance.now();
  before?.();
  const service = await startService(dataDir);
  const ms = performance.now() - started;
  await service.stop();
  return ms;
}

function writes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/io`, 'utf8').split('\n').find((l) => l.startsWith('write_bytes:'));
  return Number(line?.split(':')[1] ?? 0);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const startup: BenchModule = {
  name: 'startup',
  async run({ quick, workDir, log }) {
    const runs = quick ? 3 : 5;
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    const compile = () => execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', join(workDir, 'compiled')], { stdio: 'ignore' });
    const check = () => execFileSync(process.execPath, [join(root, 'src/cli/build-if-stale.mjs')], { stdio: 'ignore' });
    check();
    await timeToReady(join(workDir, 'data')); // creates the stores, so every timed start is a restart

    const warm: number[] = [];
    const compiled: number[] = [];
    for (let i = 0; i < runs; i++) {
      warm.push(await timeToReady(join(workDir, 'data'), check));
      compiled.push(await timeToReady(join(workDir, 'data'), compile));
      log(`run ${i + 1}: warm ${warm[i].toFixed(0)} ms, compile+start ${compiled[i].toFixed(0)} ms`);
    }

    const windowMs = quick ? 20_000 : 60_000;
    const service = await startService(join(workDir, 'idle'));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const before = writes(service.pid);
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const perMinute = ((writes(service.pid) - before) / ((performance.now() - t0) / 60_000)) / 1024;
    await service.stop();

    return {
      title: 'Start-up and idle writes (built service, ROLE=all)',
      figures: [
        { name: 'restart to ready, compiling first (every start before build-once)', value: median(compiled), unit: 'ms' },
        { name: 'restart to ready from a current build (staleness check + start)', value: median(warm), unit: 'ms', baseline: { name: 'compiling first', value: median(compiled) }, aim: 'ready in about 1-2 s' },
        { name: 'idle writes, no endpoint', value: perMinute, unit: 'KB/min', aim: '< 512 KB/min (was 6,100)' },
      ],
      notes: [
        `Median of ${runs} restarts of \`node dist/src/main.js\` until its /health/ready answers 200 (polled every 10 ms), the stores already created; the compile is \`tsc -p tsconfig.build.json\` into a scratch directory.`,
        `Idle writes: write_bytes of /proc/<pid>/io over ${windowMs / 1000} s after a 3 s settle.`,
      ],
    };
  },
};

export default startup;
