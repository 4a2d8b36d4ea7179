import { forwardTo, startedBeforeAll } from './started-before-all.js';
import { ALL_SCOPES, startTestApp, type TestApp } from './test-app.js';
import type { EventStore } from '../../src/platform/event-store/event-store.port.js';

export const INCIDENTS = '/api/public/v2/incidents';

export interface TeamFixture {
  teamId: number;
  /** incidents:read + incidents:write, editor. */
  editor: string;
  projectId: number;
  otherProjectId: number;
  /** Two endpoints of projectId, one of otherProjectId. */
  endpoints: [number, number];
  otherEndpoint: number;
}

/** Projects and endpoints through the monitoring admin routes (application API). */
export async function createProject(t: TestApp, teamId: number, name = 'Project'): Promise<number> {
  const response = await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name });
  if (response.statusCode !== 201) throw new Error(`createProject: ${response.statusCode} ${response.body}`);
  return response.json().data.id;
}

export async function createEndpoint(t: TestApp, teamId: number, projectId: number, name = 'Endpoint'): Promise<number> {
  const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: projectId, name, url: 'https://example.com/health' });
  if (response.statusCode !== 201) throw new Error(`createEndpoint: ${response.statusCode} ${response.body}`);
  return response.json().data.id;
}

/**
 * What the audit tests read back: a team "Audited" whose editor token opened incident "Checkout
 * down" on a project's endpoint through the API, with a comment "Rolling back" when `comment`.
 */
export async function auditedIncident(t: TestApp, { comment }: { comment: boolean }): Promise<{ teamId: number; token: string; incidentId: number }> {
  const teamId = (await t.createTeam('Audited')).id;
  const token = (await t.issueToken(teamId, ALL_SCOPES, 'editor')).token;
  const projectId = await createProject(t, teamId);
  const endpointId = await createEndpoint(t, teamId, projectId);
  const created = await t.request('POST', INCIDENTS, { token, body: { project_id: projectId, endpoint_ids: [endpointId], title: 'Checkout down' } });
  if (created.statusCode !== 201) throw new Error(`auditedIncident: ${created.statusCode} ${created.body}`);
  const incidentId: number = created.json().data.id;
  if (comment) {
    const commented = await t.request('POST', `${INCIDENTS}/${incidentId}/comments`, { token, body: { body: 'Rolling back' } });
    if (commented.statusCode !== 201) throw new Error(`auditedIncident comment: ${commented.statusCode} ${commented.body}`);
  }
  return { teamId, token, incidentId };
}

export async function teamWithMonitoring(t: TestApp): Promise<TeamFixture> {
  const team = await t.createTeam('Incident team');
  const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
  const projectId = await createProject(t, team.id);
  const otherProjectId = await createProject(t, team.id, 'Other');
  const endpoints: [number, number] = [await createEndpoint(t, team.id, projectId), await createEndpoint(t, team.id, projectId)];
  const otherEndpoint = await createEndpoint(t, team.id, otherProjectId);
  return { teamId: team.id, editor: token, projectId, otherProjectId, endpoints, otherEndpoint };
}

export async function createIncident(t: TestApp, f: TeamFixture, body: Record<string, unknown> = {}) {
  const response = await t.request('POST', INCIDENTS, { token: f.editor, body: { project_id: f.projectId, title: 'Checkout down', ...body } });
  if (response.statusCode !== 201) throw new Error(`createIncident: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

export function fieldsOf(response: { json(): any }): string[] {
  return response
    .json()
    .errors.map((e: { field?: string; code: string }) => `${e.field ?? '(body)'}:${e.code}`)
    .sort();
}

/**
 * Starts the app and seeds a team with monitoring before the tests of the enclosing describe and
 * closes it after them; `t` and `f` forward to the real objects (see started-before-all.ts).
 */
export function appWithIncidentTeam(): { t: TestApp; f: TeamFixture } {
  const world = startedBeforeAll(
    async () => {
      const t = await startTestApp();
      return { t, f: await teamWithMonitoring(t) };
    },
    (started) => started.t.close(),
  );
  return { t: forwardTo(() => world.t), f: forwardTo(() => world.f) };
}

/**
 * Runs `merge` while every append to an incident stream fails once `source` was marked as merged:
 * the merge dies between marking its source and absorbing it (neither absorb nor release lands).
 */
export async function mergeDyingAfterMark<T>(events: EventStore, source: number, merge: () => Promise<T>): Promise<T> {
  const original = events.append.bind(events);
  let marked = false;
  events.append = (async (stream, batch, options) => {
    if (marked && stream.startsWith('incident-')) throw new Error('simulated crash');
    const result = await original(stream, batch, options);
    if (stream === `incident-${source}` && batch.some((e) => e.type === 'IncidentMergedInto')) marked = true;
    return result;
  }) as EventStore['append'];
  try {
    return await merge();
  } finally {
    events.append = original;
  }
}

