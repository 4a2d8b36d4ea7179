/**
 * `npm run retention -- status | apply` as an operator runs it: a child process on the data
 * directory of a service (stopped in between), built from the sources the way `npm run` builds
 * them (tsc into a scratch directory inside the project, so packages resolve).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createEndpoint, createProject, importChecks } from '../support/monitoring-fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';
import { makeTempDir } from '../support/event-store-fixtures.js';
import { runCommand } from '../support/child-process.js';

const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

const run = (command: string, args: string[], env: Record<string, string>) => runCommand(command, args, { env });

describe('npm run retention', () => {
  const dir = makeTempDir('retention-cli-');
  const built = mkdtempSync(join(process.cwd(), '.retention-cli-build-'));
  const env = { DATA_DIR: dir.path, ADMIN_TOKEN, CHECK_RETENTION_DAYS: '30', LOG_LEVEL: 'silent' };
  const cli = (args: string[]) => run(process.execPath, [join(built, 'src/cli/retention.js'), ...args], env);
  let t: TestApp;

  afterAll(async () => {
    await t?.close();
    dir.remove();
    rmSync(built, { recursive: true, force: true });
  });

  it('status says what the next pass removes; apply removes it, exits 0, and the check route answers 404', async () => {
    const tsc = await run(process.execPath, [join(process.cwd(), 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', built], {});
    expect(tsc.stderr + tsc.stdout).toBe('');

    t = await startTestApp({ ROLE: 'api', DATA_DIR: dir.path, CHECK_RETENTION_DAYS: '30' });
    const teamId = (await t.createTeam('Ops')).id;
    const token = (await t.issueToken(teamId, ['monitoring:read'], 'viewer')).token;
    const endpointId = (await createEndpoint(t, teamId, (await createProject(t, teamId)).id)).id;
    const now = Date.now();
    const checks = Array.from({ length: 40 }, (_, i) => ({ checked_at: iso(now - 40 * DAY + i * DAY), success: true, status_code: 200, latency_ms: 100 + i }));
    await importChecks(t, teamId, endpointId, checks);
    const oldest = JSON.parse((await t.request('GET', `/api/public/v2/endpoints/${endpointId}/checks?limit=100`, { token })).body).data.at(-1);
    await t.close();

    const status = await cli(['status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Oldest retained check: ${oldest.checked_at}`);
    const removable = Number(/removes (\d+) check\(s\)/.exec(status.stdout)?.[1]);
    expect(removable).toBeGreaterThanOrEqual(10);
    expect(status.stdout).toMatch(/event log\s*│?\s*[\d.]+ (KB|MB)/);

    const apply = await cli(['apply']);
    expect(apply).toMatchObject({ code: 0 });
    expect(apply.stdout).toContain(`${removable} checks removed from the log`);
    expect((await cli(['status'])).stdout).toContain('The next pass removes 0 check(s)');

    t = await startTestApp({ ROLE: 'api', DATA_DIR: dir.path, CHECK_RETENTION_DAYS: '30' });
    expect((await t.request('GET', `/api/public/v2/endpoints/${endpointId}/checks/${oldest.id}`, { token })).statusCode).toBe(404);

    expect((await cli(['apply', '--now', 'yesterday'])).code).toBe(1);
  }, 240_000);
});
