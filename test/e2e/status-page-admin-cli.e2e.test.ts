/**
 * The status-page commands of `npm run admin`, run as real child processes against a listening
 * service. `npm run admin` builds dist/ first; the test runs the same entry point transpiled from
 * the sources (as the history CLI test does), with the same arguments.
 */
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { statusTeam, type StatusTeam } from '../support/status-page-fixtures.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/test-app.js';

const CLI = 'src/cli/admin.ts';

describe('npm run admin -- *-status-page', () => {
  let t: TestApp;
  let team: StatusTeam;
  let base: string;
  const compiled = makeTempDir('admin-cli-js-');
  const run = (args: string[]): Promise<ChildResult> => runNode(join(compiled.path, 'src/cli/admin.js'), ['--url', base, ...args], { env: { ADMIN_TOKEN } });

  beforeAll(async () => {
    await transpileForChildProcess([CLI], compiled.path);
    t = await startTestApp();
    const fastify = t.app.getHttpAdapter().getInstance();
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;
    team = await statusTeam(t, 2, 'Cli');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    compiled.remove();
  });

  test('create, list, show, update and delete a page; errors exit 1 with the problem printed', async () => {
    const created = await run(['create-status-page', String(team.teamId), '--slug', 'cli-page', '--title', 'CLI page', '--component', String(team.endpoints[0]), '--component', `${team.endpoints[1]}=Public API`, '--history-days', '30']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const page = JSON.parse(created.stdout).data;
    expect(page).toMatchObject({ slug: 'cli-page', title: 'CLI page', history_days: 30, components: [{ endpoint_id: team.endpoints[0], name: null }, { endpoint_id: team.endpoints[1], name: 'Public API' }] });
    expect((await t.request('GET', '/status/cli-page/summary.json')).json().components.map((c: any) => c.name)).toEqual(['Endpoint 1', 'Public API']);

    const listed = await run(['list-status-pages', String(team.teamId), '--limit', '10']);
    expect(JSON.parse(listed.stdout).data.map((p: any) => p.id)).toEqual([page.id]);
    expect(JSON.parse((await run(['status-page', String(team.teamId), String(page.id)])).stdout).data).toEqual(page);

    const updated = await run(['update-status-page', String(team.teamId), String(page.id), '--title', 'Renamed', '--no-components']);
    expect(updated.code).toBe(0);
    expect(JSON.parse(updated.stdout).data).toMatchObject({ title: 'Renamed', slug: 'cli-page', components: [], history_days: 30 });

    const taken = await run(['create-status-page', String(team.teamId), '--slug', 'cli-page', '--title', 'Again']);
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stdout)).toMatchObject({ status: 409, code: 'slug_taken' });

    const deleted = await run(['delete-status-page', String(team.teamId), String(page.id)]);
    expect(deleted).toMatchObject({ code: 0, stdout: '(204, no body)\n' });
    expect((await t.request('GET', '/status/cli-page')).statusCode).toBe(404);
  }, 60_000);
});
