/**
 * The SLO repair pass (src/slos/application/slo-repair.ts, run by SloWorkers) over a log an
 * earlier version left: endpoints deleted while the burn reactor did not take deletions. The
 * earlier version is played by moving the reactor's checkpoint past the deletions, written while
 * no runner was running (as a version without the deletion steps passed them over), so the
 * restarted service's views show the deletions and its reactor never takes them.
 *
 * Before the pass the API shows what such a service showed for good: the list SLO still lists
 * its deleted endpoint, both SLOs hold an active page alert and their incidents stay open. After
 * it: the endpoint has left, the alerts have ended, the incidents resolved; a second pass finds
 * nothing.
 */
import { jest } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { endpointSnapshotAggregate } from '../../src/monitoring/domain/endpoint-snapshot.js';
import { ENDPOINT_DELETED, endpointStream } from '../../src/monitoring/domain/events.js';
import { systemContext } from '../../src/platform/es/command-context.js';
import { runStreamCommand } from '../../src/platform/es/stream-command.js';
import type { NewEvent } from '../../src/platform/event-store/event-store.port.js';
import { ProjectionRegistry } from '../../src/platform/projections/registry.js';
import { SloWorkers } from '../../src/slos/application/slo-workers.js';
import { SLO_BURN_INCIDENT_LINKED, sloStream } from '../../src/slos/domain/events.js';
import { SLO_BURN_REACTOR } from '../../src/slos/reactors/burn-alerts.js';
import { eventually } from '../support/eventually.js';
import { createEndpoint, createProject } from '../support/monitoring-fixtures.js';
import { triggerPage } from '../support/slo-fixtures.js';
import { startTestApp, type TestApp } from '../support/test-app.js';

jest.setTimeout(60_000);

async function deleteBehindTheReactor(t: TestApp, teamId: number, endpointId: number): Promise<void> {
  await runStreamCommand(t.platform.events, endpointStream(endpointId), endpointSnapshotAggregate, systemContext('test'), (state) => ({
    events: [{ type: ENDPOINT_DELETED, data: { endpoint_id: endpointId, team_id: teamId, project_id: state!.project_id, deleted_at: new Date().toISOString() } }] as NewEvent[],
    result: null,
  }));
}

describe('the SLO repair pass', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'slo-repair-'));
  let t: TestApp | undefined;
  afterAll(async () => {
    await t?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('takes deleted endpoints out of SLOs and ends alerts over empty projects an earlier version left', async () => {
    // A list SLO and a project SLO, each paging with an open slo_burn incident.
    t = await startTestApp({ DATA_DIR: dataDir });
    const team = await t.createTeam('Repair');
    const listed = await createEndpoint(t, team.id, (await createProject(t, team.id, 'Listed')).id, { name: 'Listed' });
    const project = await createProject(t, team.id, 'Whole');
    const inProject = await createEndpoint(t, team.id, project.id, { name: 'In project' });
    const create = async (selection: object) => (await t!.admin('POST', `/api/v2/teams/${team.id}/slos`, { name: 'S', objective_percent: 99, ...selection })).json().data.id as number;
    const listSlo = await create({ endpoint_ids: [listed.id] });
    const projectSlo = await create({ project_id: project.id });
    await triggerPage(t, listSlo, team.id, listed.id);
    await triggerPage(t, projectSlo, team.id, inProject.id);
    const app1 = t;
    const incidentOf = async (sloId: number) => {
      const events = await app1.platform.events.readStream(sloStream(sloId));
      return events.find((event) => event.type === SLO_BURN_INCIDENT_LINKED)?.data as { incident_id: number } | undefined;
    };
    const incidents = await eventually('both incidents opened and linked', async () => {
      const both = [await incidentOf(listSlo), await incidentOf(projectSlo)];
      return both.every(Boolean) ? both.map((linked) => linked!.incident_id) : null;
    });
    await t.close();

    // The deletions, and the reactor's checkpoint past them, with no runner running.
    t = await startTestApp({ DATA_DIR: dataDir }, { runner: false });
    await deleteBehindTheReactor(t, team.id, listed.id);
    await deleteBehindTheReactor(t, team.id, inProject.id);
    const registry = new ProjectionRegistry(t.platform.views);
    const pointer = await registry.pointer(SLO_BURN_REACTOR);
    await t.platform.views.commit([registry.checkpointWrite(SLO_BURN_REACTOR, pointer!.generation, (await t.platform.events.headPosition())!)]);
    await t.close();

    t = await startTestApp({ DATA_DIR: dataDir });
    const app = t;
    const { token } = await app.issueToken(team.id, ['monitoring:read', 'incidents:read'], 'viewer');
    const slo = async (sloId: number) => (await app.admin('GET', `/api/v2/teams/${team.id}/slos/${sloId}`)).json().data;
    const incident = async (id: number) => (await app.request('GET', `/api/public/v2/incidents/${id}`, { token })).json().data;
    expect((await app.request('GET', `/api/public/v2/endpoints/${listed.id}`, { token })).statusCode).toBe(404);
    expect(await slo(listSlo)).toMatchObject({ endpoint_ids: [listed.id], alerts: [{ severity: 'page' }] });
    expect(await slo(projectSlo)).toMatchObject({ project_id: project.id, alerts: [{ severity: 'page' }] });
    for (const id of incidents) expect(await incident(id)).toMatchObject({ resolved_at: null });

    const workers = app.app.get(SloWorkers);
    expect(await workers.repair()).toEqual({ endpointsDropped: 1, projectsEmptied: 1 });
    await eventually('both incidents resolved', async () => {
      for (const id of incidents) if ((await incident(id)).resolved_at === null) return false;
      return true;
    });
    expect(await slo(listSlo)).toMatchObject({ endpoint_ids: [], alerts: [], status: 'ok' });
    expect(await slo(projectSlo)).toMatchObject({ project_id: project.id, endpoint_ids: null, alerts: [] });
    expect(await workers.repair()).toEqual({ endpointsDropped: 0, projectsEmptied: 0 });
  });
});
