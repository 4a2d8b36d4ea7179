/**
 * A NATS server for tests: NATS_URL when set, otherwise a throwaway `nats-server` with
 * JetStream on a random loopback port and a temp store, or null when there is neither
 * (the caller reports its suite as skipped).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { childEnv } from './child-process.js';

export interface TestNatsServer {
  url: string;
  stop(): Promise<void>;
}

export const NATS_SKIP_REASON = 'no NATS_URL and no nats-server binary';

/**
 * `describe` for suites that need NATS, or `describe.skip` with the reason in the title: a suite
 * that cannot run is reported as skipped, never as passed.
 */
export function describeWithNats(title: string, suite: () => void): void {
  if (natsAvailable()) describe(title, suite);
  else describe.skip(`${title} (skipped: ${NATS_SKIP_REASON})`, suite);
}

/** Whether tests can have a NATS server here: NATS_URL, or a `nats-server` binary to start. */
export function natsAvailable(): boolean {
  return Boolean(process.env.NATS_URL) || findNatsServerBinary() !== null;
}

const READY_TIMEOUT_MS = 10_000;

export async function startNatsServer(): Promise<TestNatsServer | null> {
  const external = process.env.NATS_URL;
  if (external) return { url: external, stop: async () => {} };
  const binary = findNatsServerBinary();
  return binary ? spawnNatsServer(binary) : null;
}

export function findNatsServerBinary(): string | null {
  if (process.env.NATS_SERVER_BIN) return process.env.NATS_SERVER_BIN;
  // Debian installs into /usr/sbin, which is not on every user's PATH.
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, 'nats-server'))) return join(dir, 'nats-server');
  }
  return null;
}

async function spawnNatsServer(binary: string): Promise<TestNatsServer> {
  const storeDir = await mkdtemp(join(tmpdir(), 'nats-test-'));
  // Port -1 lets the server pick a free port and log it: no race with other test workers.
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', storeDir], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: childEnv(),
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.removeListener('exit', killOnExit);
    await killAndWait(child);
    await rm(storeDir, { recursive: true, force: true });
  };
  try {
    const url = await waitUntilReady(child);
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Resolves with the client URL once the server logs "Server is ready" (JetStream is up by then). */
function waitUntilReady(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let log = '';
    let address: string | null = null;
    const fail = (reason: string) => {
      cleanup();
      reject(new Error(`nats-server did not start: ${reason}\n${log.slice(-2000)}`));
    };
    const onData = (chunk: Buffer) => {
      log += chunk.toString();
      address ??= /Listening for client connections on (\S+:\d+)/.exec(log)?.[1] ?? null;
      if (address && log.includes('Server is ready')) {
        cleanup();
        resolve(`nats://${address}`);
      }
    };
    const onExit = (code: number | null) => fail(`exited with ${code}`);
    const onError = (error: Error) => fail(error.message);
    const timer = setTimeout(() => fail(`not ready after ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS);
    const cleanup = () => {
      clearTimeout(timer);
      child.stderr!.removeListener('data', onData);
      child.removeListener('exit', onExit);
      child.removeListener('error', onError);
      child.stderr!.resume(); // keep draining so a chatty server never blocks on a full pipe
    };
    child.stderr!.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}
