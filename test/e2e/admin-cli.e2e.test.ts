/**
 * `npm run admin` as a real child process against the service listening on a real socket:
 * every command is described in --help, and the operator commands for listing teams and tokens
 * and deleting endpoints and projects call the application API and report its answer.
 * (`npm run admin` builds dist/ first; the test runs the same entry point transpiled from source.)
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { createEndpoint, createProject, importedCheck } from '../support/monitoring-fixtures.js';
import { freePort } from '../support/service-process.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';

const CLI = 'src/cli/admin.ts';

describe('npm run admin', () => {
  let t: TestApp;
  let url: string;
  const compiled = makeTempDir('admin-cli-js-');
  const script = join(compiled.path, CLI.replace(/\.ts$/, '.js'));

  const run = (args: string[], env: Record<string, string | undefined> = {}): Promise<ChildResult> =>
    runNode(script, ['--url', url, ...args], { env: { ADMIN_TOKEN, ...env } });

  beforeAll(async () => {
    await transpileForChildProcess([CLI], compiled.path);
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    url = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    compiled.remove();
  });

  it('describes every command in --help', async () => {
    const help = await run(['--help']);
    expect(help.code).toBe(0);
    const commands = help.stdout.slice(help.stdout.indexOf('Commands:')).split('\n').slice(1).filter((line) => /^ {2}\S/.test(line));
    expect(commands.length).toBeGreaterThan(10);
    for (const line of commands) {
      // "  name [options] <args>   description": a description after the usage column.
      expect([line, /\S\s{2,}\S/.test(line.trim())]).toEqual([line, true]);
    }
    for (const name of ['list-teams', 'list-tokens', 'delete-endpoint', 'delete-project']) {
      expect(commands.some((line) => line.trim().startsWith(`${name} `))).toBe(true);
    }
  });

  it('lists teams and tokens without secrets, deletes an endpoint, then its emptied project', async () => {
    const team = await t.createTeam('CLI team');
    const issued = await t.issueToken(team.id, ['monitoring:read'], 'viewer');
    const project = await createProject(t, team.id);
    const endpoint = await createEndpoint(t, team.id, project.id);

    const teams = await run(['list-teams']);
    expect(teams).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(teams.stdout).data).toContainEqual({ id: team.id, name: 'CLI team', created_at: expect.any(String) });

    const tokens = await run(['list-tokens', String(team.id)]);
    expect(tokens.code).toBe(0);
    expect(JSON.parse(tokens.stdout).data.map((token: { id: number }) => token.id)).toEqual([issued.id]);
    expect(tokens.stdout).not.toContain(issued.token);

    const refused = await run(['delete-project', String(team.id), String(project.id)]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({ status: 409, code: 'project_not_empty' });

    const deleted = await run(['delete-endpoint', String(team.id), String(endpoint.id)]);
    expect(deleted).toMatchObject({ code: 0, stdout: '(204, no body)\n' });
    expect((await run(['delete-project', String(team.id), String(project.id)])).code).toBe(0);
    const gone = await run(['delete-endpoint', String(team.id), String(endpoint.id)]);
    expect(gone.code).toBe(1);
    expect(JSON.parse(gone.stdout).code).toBe('not_found');
  }, 90_000);

  it('says where the admin token it sent came from when the service refuses it', async () => {
    const fromEnv = await run(['list-teams'], { ADMIN_TOKEN: 'adm_not-the-right-one' });
    expect(fromEnv.code).toBe(1);
    expect(JSON.parse(fromEnv.stdout)).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(fromEnv.stderr).toBe('The service refused the admin token from ADMIN_TOKEN (it takes precedence over DATA_DIR/admin-token).\n');

    const dir = makeTempDir('admin-cli-token-');
    try {
      writeFileSync(join(dir.path, 'admin-token'), 'adm_stale-token-from-another-data-dir\n');
      const fromFile = await run(['list-teams'], { ADMIN_TOKEN: undefined, DATA_DIR: dir.path });
      expect(fromFile.code).toBe(1);
      expect(fromFile.stderr).toBe(`The service refused the admin token from ${join(dir.path, 'admin-token')} (ADMIN_TOKEN is not set).\n`);
    } finally {
      dir.remove();
    }
  }, 90_000);

  it('imports a history file larger than one request in batches, with progress, and a rerun imports nothing twice', async () => {
    const team = await t.createTeam('Import team');
    const { token } = await t.issueToken(team.id, ['analytics:read'], 'viewer');
    const project = await createProject(t, team.id);
    const endpoint = await createEndpoint(t, team.id, project.id);
    // One more than a request takes: two requests. Seconds apart, all within the last 24 hours.
    const count = 10_001;
    const start = Date.now() - 12 * 3600_000;
    const checks = Array.from({ length: count }, (_, i) => importedCheck(new Date(start + i * 1000).toISOString()));
    const dir = makeTempDir('admin-cli-import-');
    const analyticsChecks = async () =>
      (await t.request('GET', `/api/public/v2/endpoints/${endpoint.id}/analytics?window=24h`, { token })).json().data.totals.checks;
    try {
      const file = join(dir.path, 'history.json');
      writeFileSync(file, JSON.stringify({ checks }));
      const first = await run(['import-checks', String(team.id), String(endpoint.id), file]);
      expect(first.code).toBe(0);
      expect(JSON.parse(first.stdout)).toEqual({ data: { imported: count } });
      expect(first.stderr).toBe(`10000 of ${count} checks imported (1/2)\n${count} of ${count} checks imported (2/2)\n`);
      expect(await analyticsChecks()).toBe(count);

      // The operator reruns the command (a failure midway, or unsure it ran): nothing doubles.
      const again = await run(['import-checks', String(team.id), String(endpoint.id), file]);
      expect(again.code).toBe(0);
      expect(await analyticsChecks()).toBe(count);

      // A service gone before the command ended: says how far it got and that a rerun is safe.
      const gone = await runNode(script, ['--url', `http://127.0.0.1:${await freePort()}`, 'import-checks', String(team.id), String(endpoint.id), file], { env: { ADMIN_TOKEN } });
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain(`Stopped at request 1 of 2: 0 of ${count} checks imported. Run the same command again`);

      writeFileSync(file, JSON.stringify({ checks: [] }));
      const empty = await run(['import-checks', String(team.id), String(endpoint.id), file]);
      expect(empty.code).toBe(2);
      expect(empty.stderr).toContain('holds no checks');
    } finally {
      dir.remove();
    }
  }, 180_000);
});
