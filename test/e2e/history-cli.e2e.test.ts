/**
 * `npm run history -- incident <id> [--at <time>]` for auditors, run as a real child process
 * against the data directory of a service that recorded an incident's life: created, details
 * changed, commented, status changed, another incident merged into it. The CLI reads the event
 * store directly (no views), so what it prints is what the log holds.
 *
 * `npm run history` builds the shared dist/ first; the test runs the same entry point transpiled
 * from the sources (test/support/event-store-fixtures.ts), with the same arguments.
 */
import { join } from 'node:path';
import { ALL_SCOPES, startTestApp, type TestApp } from '../support/test-app.js';
import { runNode, type ChildResult } from '../support/child-process.js';
import { makeTempDir, transpileForChildProcess } from '../support/event-store-fixtures.js';
import { createEndpoint, createProject, INCIDENTS } from '../support/incident-fixtures.js';

const CLI = 'src/cli/history.ts';

function runCli(script: string, dataDir: string, args: string[]): Promise<ChildResult> {
  return runNode(script, args, { env: { DATA_DIR: dataDir, LOG_LEVEL: 'silent' } });
}

/** The state JSON the CLI prints after `State:`. */
function printedState(stdout: string): any {
  return JSON.parse(stdout.slice(stdout.indexOf('State:') + 'State:'.length));
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('npm run history -- incident <id>', () => {
  let t: TestApp;
  const compiled = makeTempDir('history-cli-js-');
  let script: string;
  let tokenId: number;
  let incident: any;
  let source: any;
  let comment: any;
  /** A moment after the details change and before the comment. */
  let afterUpdate: string;

  beforeAll(async () => {
    await transpileForChildProcess([CLI], compiled.path);
    script = join(compiled.path, CLI.replace(/\.ts$/, '.js'));

    t = await startTestApp();
    const team = await t.createTeam('Audited');
    const editor = await t.issueToken(team.id, ALL_SCOPES, 'editor');
    tokenId = editor.id;
    const projectId = await createProject(t, team.id);
    const endpointId = await createEndpoint(t, team.id, projectId);
    const send = async (method: string, url: string, requestId: string, body?: unknown) => {
      const response = await t.request(method, url, { token: editor.token, body, headers: { 'x-request-id': requestId } });
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
      return response.json().data;
    };
    incident = await send('POST', INCIDENTS, 'audit-create', { project_id: projectId, endpoint_ids: [endpointId], title: 'Checkout down' });
    source = await send('POST', INCIDENTS, 'audit-create-source', { project_id: projectId, title: 'Payments slow' });
    await send('PATCH', `${INCIDENTS}/${incident.id}`, 'audit-update', { title: 'Checkout degraded', severity: 'critical' });
    await pause(5);
    afterUpdate = new Date().toISOString();
    await pause(5);
    comment = await send('POST', `${INCIDENTS}/${incident.id}/comments`, 'audit-comment', { body: 'Rolling back the release' });
    await send('PATCH', `${INCIDENTS}/${incident.id}/status`, 'audit-status', { status: 'Identified' });
    await send('POST', `${INCIDENTS}/${incident.id}/merge`, 'audit-merge', { source_incident_ids: [source.id] });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    compiled.remove();
  });

  it('prints every event with its time, actor token, request id and changes, then the current state', async () => {
    const result = await runCli(script, t.dataDir, ['incident', String(incident.id)]);
    expect(result).toMatchObject({ code: 0, stderr: `data dir: ${t.dataDir}\n` });
    const out = result.stdout;
    expect(out.split('\n')[0]).toBe(`Incident ${incident.id} (team ${incident.team_id})`);

    // The same events, times, actors and request ids as the application API's history route.
    const api = (await t.admin('GET', `/api/v2/teams/${incident.team_id}/incidents/${incident.id}/history`)).json().data;
    const headings = out.split('\n').filter((line) => line.startsWith('#'));
    expect(headings).toEqual(api.events.map((e: any) => `#${e.revision} ${e.at} ${e.type} by ${e.actor} request ${e.request_id}`));
    expect(api.events.map((e: any) => [e.type, e.actor, e.request_id])).toEqual([
      ['IncidentOpened', `token:${tokenId}`, 'audit-create'],
      ['IncidentDetailsUpdated', `token:${tokenId}`, 'audit-update'],
      ['CommentAdded', `token:${tokenId}`, 'audit-comment'],
      ['IncidentStatusChanged', `token:${tokenId}`, 'audit-status'],
      ['IncidentsAbsorbed', `token:${tokenId}`, 'audit-merge'],
    ]);
    for (const event of api.events) expect(event.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    // What changed, from what to what.
    expect(out).toContain('    title: "Checkout down" -> "Checkout degraded"');
    expect(out).toContain('    severity: "warning" -> "critical"');
    expect(out).toContain(`    comments[${comment.id}]: {"body":"Rolling back the release","pinned":false}`);
    expect(out).toContain(`    status_name: "${incident.status_name}" -> "Identified"`);
    expect(out).toContain(`    Incidents ${source.id} merged into this one`);
    expect(out).toContain(`    merged_incidents: [${source.id}]`);

    const state = printedState(out);
    expect(state).toMatchObject({
      id: incident.id,
      title: 'Checkout degraded',
      severity: 'critical',
      status_name: 'Identified',
      comments: [comment],
      merged_incidents: [{ id: source.id, title: 'Payments slow', merged_at: expect.any(String) }],
    });
    expect(state).toEqual(api.state);
  });

  it('with --at prints the events up to that moment and the state the incident had then', async () => {
    const result = await runCli(script, t.dataDir, ['incident', String(incident.id), '--at', afterUpdate]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe(`Incident ${incident.id} (team ${incident.team_id}) as of ${afterUpdate}`);
    const types = result.stdout.split('\n').filter((line) => line.startsWith('#')).map((line) => line.split(' ')[2]);
    expect(types).toEqual(['IncidentOpened', 'IncidentDetailsUpdated']);
    expect(printedState(result.stdout)).toMatchObject({
      title: 'Checkout degraded',
      severity: 'critical',
      status_name: incident.status_name,
      comments: [],
      merged_incidents: [],
    });

    const beforeCreation = await runCli(script, t.dataDir, ['incident', String(incident.id), '--at', '2000-01-01T00:00:00Z']);
    expect(beforeCreation.code).toBe(0);
    expect(printedState(beforeCreation.stdout)).toBeNull();
  });

  it("keeps the merged source's complete history: its own events, the resolution by merge and the mark", async () => {
    const result = await runCli(script, t.dataDir, ['incident', String(source.id)]);
    expect(result.code).toBe(0);
    const types = result.stdout.split('\n').filter((line) => line.startsWith('#')).map((line) => line.split(' ')[2]);
    expect(types).toEqual(['IncidentOpened', 'IncidentResolved', 'IncidentMergedInto']);
    expect(result.stdout).toContain(`    Merged into incident ${incident.id}`);
    expect(result.stdout).toContain('    Resolved (merge)');
    expect(printedState(result.stdout)).toMatchObject({ id: source.id, merged_into_id: incident.id, resolved_at: expect.any(String) });
  });

  it('answers an unknown incident with exit code 1 and says so', async () => {
    const result = await runCli(script, t.dataDir, ['incident', '99999999']);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `data dir: ${t.dataDir}\nIncident 99999999 has no events.\n` });
  });

  it.each([
    [['incident', 'abc'], "error: command-argument value 'abc' is invalid for argument 'id'. must be a positive integer."],
    [['incident', '0'], "error: command-argument value '0' is invalid for argument 'id'. must be a positive integer."],
    [['endpoint', '1'], "error: unknown command 'endpoint'"],
    [['incident', '1', '--at', 'yesterday'], "error: option '--at <time>' argument 'yesterday' is invalid. must be an RFC 3339 time, e.g. 2026-11-21T15:00:00Z."],
    [['incident', '1', '--at', '2026-02-30T00:00:00Z'], "error: option '--at <time>' argument '2026-02-30T00:00:00Z' is invalid. must be an RFC 3339 time, e.g. 2026-11-21T15:00:00Z."],
    [['incident', '1', '--at'], "error: option '--at <time>' argument missing"],
    [['incident', '1', '--since', 'x'], "error: unknown option '--since'"],
  ])('refuses %j with exit code 2, the reason and where the usage is', async (args, reason) => {
    const result = await runCli(script, t.dataDir, args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(`${reason}\n(npm run history -- --help for usage)\n`);
  });

  it('prints its usage for --help (npm run history -- --help) and exits with 0', async () => {
    for (const args of [['--help'], ['incident', '--help']]) {
      const result = await runCli(script, t.dataDir, args);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Usage: history');
      expect(result.stdout).toContain('--data-dir <path>');
    }
  });
});
