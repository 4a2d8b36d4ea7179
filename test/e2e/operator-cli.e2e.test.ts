/**
 * The operator CLIs as an operator runs them: the built entry points as child processes, stdout
 * and stderr piped (not a terminal), from an empty directory and against a real data dir.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { projections } from '../../src/app/contexts.js';
import { isReactor } from '../../src/platform/projections/projection.js';
import { runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { BUILT_MAIN, builtCli, ensureBuilt, startBuiltService } from '../support/built-service.js';

const ADMIN = 'operator-cli-admin-token-0123456789';
/** Every processor the composition root registers, with the version its code declares. */
const allProjections = projections();
const PROJECTIONS = allProjections.map((projection) => projection.name);
const VERSIONS = new Map(allProjections.map((projection) => [projection.name, String(projection.version)]));
/** Reactors are never rebuilt: `rebuild --all` passes them over. */
const REBUILT = allProjections.filter((projection) => !isReactor(projection)).map((projection) => projection.name);

/** A built CLI with no DATA_DIR or ADMIN_TOKEN unless given (childEnv passes nothing else). */
function run(script: string, args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<ChildResult> {
  return runNode(script, args, options);
}

beforeAll(() => ensureBuilt(), 120_000);

describe('CLIs run from a directory that holds no store', () => {
  const empty = makeTempDir('cli-empty-');
  afterAll(() => empty.remove());

  it.each([
    ['projections', ['status']],
    ['projections', ['rebuild', '--all']],
    ['history', ['incident', '1']],
  ] as const)('%s %j refuses, names the data dir it looked at, and creates nothing', async (cli, args) => {
    const result = await run(builtCli(cli), [...args], { cwd: empty.path });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`No store in data dir ${join(empty.path, 'data')} (no events.sqlite there)`);
    expect(result.stderr).toContain('--create');
    expect(readdirSync(empty.path)).toEqual([]);
  });

  it('creates an empty store when told to (--create), and says so', async () => {
    const dir = makeTempDir('cli-create-');
    try {
      const result = await run(builtCli('projections'), ['--create', 'status'], { cwd: dir.path });
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(`data dir: ${join(dir.path, 'data')} (new, empty store)`);
      expect(existsSync(join(dir.path, 'data', 'events.sqlite'))).toBe(true);
      expect(existsSync(join(dir.path, 'data', 'admin-token'))).toBe(false);
    } finally {
      dir.remove();
    }
  });
});

describe('CLIs against the data dir of a service that ran', () => {
  const dir = makeTempDir('cli-data-');
  const dataDir = join(dir.path, 'data');
  afterAll(() => dir.remove());

  beforeAll(async () => {
    const service = await startBuiltService({ DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN });
    // Every processor started (and wrote its pointer and checkpoint) before the stop: the
    // service listens, and logs "service started", before its runner starts them.
    await service.ready();
    const response = await fetch(`${service.url}/api/v2/teams`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Acme' }),
    });
    expect(response.status).toBe(201);
    expect(await service.stop()).toBe(0);
  }, 60_000);

  it('projections status prints a padded table, one row per projection, and names the data dir', async () => {
    const result = await run(builtCli('projections'), ['status'], { cwd: dir.path });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`data dir: ${dataDir}\n`);
    const [head, ...rows] = result.stdout.trimEnd().split('\n');
    expect(head.split(/\s{2,}/)).toEqual(['PROJECTION', 'VERSION', 'GENERATION', 'POSITION', 'HEAD', 'LAG']);
    expect(rows.map((row) => row.split(/\s+/)[0])).toEqual(PROJECTIONS);
    for (const row of rows) {
      const [name, ...columns] = row.split(/\s+/);
      expect(columns).toEqual([VERSIONS.get(name), '1', expect.stringMatching(/^\d+$/), expect.stringMatching(/^\d+$/), '0']);
    }
    expect(result.stdout).not.toMatch(/\(index\)|'|"/);
    expect(existsSync(join(dataDir, 'admin-token'))).toBe(false); // a CLI never mints the service's token
  });

  it('projections rebuild --all without a terminal prints plain lines and every result', async () => {
    const result = await run(builtCli('projections'), ['rebuild', '--all'], { cwd: dir.path });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toMatch(/[\r\u001b]/);
    const lines = result.stdout.trimEnd().split('\n');
    for (const name of REBUILT) {
      expect(lines).toContain(`${name}: rebuilding`);
      expect(lines.filter((line) => line.startsWith(`${name}: generation 2 swapped in after `))).toHaveLength(1);
    }
    expect(lines.every((line) => /^[a-z_]+: /.test(line))).toBe(true);
    // The reactors it passes over are named, with the reason.
    const reactors = allProjections.filter(isReactor).map((projection) => projection.name);
    expect(reactors.length).toBeGreaterThan(0);
    const skipped = lines.filter((line) => line.startsWith('reactors: '));
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toContain(`${reactors.join(', ')} not rebuilt.`);
    expect(skipped[0]).toContain('replaying history through them would do it all again');
  }, 60_000);

  it('projections rebuild of an unknown name says which names exist, as a usage error (exit 2)', async () => {
    const result = await run(builtCli('projections'), ['rebuild', 'nope'], { cwd: dir.path });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`Unknown projection nope. Known: ${PROJECTIONS.join(', ')}`);
  });

  it('projections rebuild of a reactor by name is refused with the reason (exit 2)', async () => {
    const reactor = allProjections.find(isReactor)!.name;
    const result = await run(builtCli('projections'), ['rebuild', reactor], { cwd: dir.path });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${reactor}: Reactors act on events`);
  });
});

describe('usage errors exit 2 in every CLI', () => {
  const empty = makeTempDir('cli-usage-');
  afterAll(() => empty.remove());

  it.each([
    ['admin', ['create-endpoit', '1']],
    ['admin', ['create-team']],
    ['admin', ['--nope', 'list-teams']],
    ['projections', ['frobnicate']],
    ['projections', ['status', '--nope']],
    ['history', ['incident', 'x']],
    ['history', ['nope']],
    ['retention', ['nope']],
  ] as const)('%s %j exits 2 and says what is wrong', async (cli, args) => {
    const result = await run(builtCli(cli as Parameters<typeof builtCli>[0]), [...args], { cwd: empty.path, env: { ADMIN_TOKEN: ADMIN } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/error: |--help/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('admin with malformed --json exits 2', async () => {
    const result = await run(builtCli('admin'), ['--url', 'http://127.0.0.1:9', 'create-endpoint', '1', '--json', '{nope'], { cwd: empty.path, env: { ADMIN_TOKEN: ADMIN } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--json is not valid JSON');
  });
});

describe('admin with the service down', () => {
  it('names the URL it could not reach and how to point elsewhere', async () => {
    const closed = await freePort();
    const result = await run(builtCli('admin'), ['--url', `http://127.0.0.1:${closed}`, 'create-team', 'Acme'], { cwd: process.cwd(), env: { ADMIN_TOKEN: ADMIN } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `Could not reach the service at http://127.0.0.1:${closed} (ECONNREFUSED). Is it running there? Point the CLI at another address with --url <url>, e.g. npm run admin -- --url http://host:3000 <command>.\n`,
    );
  });
});

describe('the service on a port already in use', () => {
  let holder: Server;
  let port: number;
  beforeAll(async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => holder.close(() => resolve())));

  it('prints one line naming the address and exits non-zero, without a stack trace', async () => {
    const dir = makeTempDir('port-in-use-');
    try {
      const result = await run(BUILT_MAIN, [], { cwd: dir.path, env: { DATA_DIR: join(dir.path, 'data'), ADMIN_TOKEN: ADMIN, PORT: String(port), HOST: '127.0.0.1' } });
      expect(result.code).toBe(1);
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        `Cannot listen on 127.0.0.1:${port}: the address is already in use (another process holds it). Stop that process or choose another PORT/HOST.`,
      ]);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      // Only that line: no error log line on stdout before it.
      expect(result.stdout).not.toMatch(/"level":50|EADDRINUSE/);
    } finally {
      dir.remove();
    }
  }, 60_000);
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
