import { ALERT_SIGNAL_TRIGGERED, type SignalType } from '../../src/alerting/domain/endpoint-alerts.js';
import { checksStream } from '../../src/checks/domain/check.js';
import { ALL_SCOPES, type TestApp } from './test-app.js';

export const INCIDENTS = '/api/public/v2/incidents';
/** Text that must never leave the service through a public status route. */
export const SECRETS = {
  urlHost: 'internal-db.secret-host.example',
  urlQuery: 'apikey=QUERY-SECRET-123',
  header: 'HEADER-SECRET-456',
  payload: 'PAYLOAD-SECRET-789',
  comment: 'PRIVATE-COMMENT-do-not-publish',
  detection: 'DETECTION-REASON-internal',
  endpointDescription: 'ENDPOINT-DESCRIPTION-internal',
  otherTeamTitle: 'OTHER-TEAM-INCIDENT',
  offPageTitle: 'OFF-PAGE-INCIDENT',
};

export interface StatusTeam {
  teamId: number;
  token: string;
  projectId: number;
  /** Endpoints of projectId, in creation order. */
  endpoints: number[];
}

export function pagesPath(teamId: number, pageId?: number): string {
  return `/api/v2/teams/${teamId}/status-pages${pageId === undefined ? '' : `/${pageId}`}`;
}

export async function createEndpoint(t: TestApp, teamId: number, projectId: number, name: string): Promise<number> {
  const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, {
    project_id: projectId,
    name,
    description: SECRETS.endpointDescription,
    url: `https://user:pw@${SECRETS.urlHost}/health?${SECRETS.urlQuery}`,
    headers: { 'x-api-key': SECRETS.header },
    request_payload: SECRETS.payload,
  });
  if (response.statusCode !== 201) throw new Error(`createEndpoint: ${response.statusCode} ${response.body}`);
  return response.json().data.id;
}

/** A team with one project and `count` endpoints (with hidden values), and an editor token. */
export async function statusTeam(t: TestApp, count: number, name = 'Acme'): Promise<StatusTeam> {
  const team = await t.createTeam(name);
  const { token } = await t.issueToken(team.id, ALL_SCOPES, 'editor');
  const project = await t.admin('POST', `/api/v2/teams/${team.id}/projects`, { name: 'Shop' });
  const projectId = project.json().data.id;
  const endpoints: number[] = [];
  for (let i = 0; i < count; i++) endpoints.push(await createEndpoint(t, team.id, projectId, `Endpoint ${i + 1}`));
  return { teamId: team.id, token, projectId, endpoints };
}

export async function createPage(t: TestApp, teamId: number, body: Record<string, unknown>) {
  const response = await t.admin('POST', pagesPath(teamId), body);
  if (response.statusCode !== 201) throw new Error(`createPage: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

export async function openIncident(t: TestApp, team: StatusTeam, body: Record<string, unknown>) {
  const response = await t.request('POST', INCIDENTS, { token: team.token, body: { title: 'Incident', ...body } });
  if (response.statusCode !== 201) throw new Error(`openIncident: ${response.statusCode} ${response.body}`);
  return response.json().data as { id: number };
}

export async function addCheckpoint(t: TestApp, team: StatusTeam, incidentId: number, body: Record<string, unknown>) {
  const response = await t.request('POST', `${INCIDENTS}/${incidentId}/checkpoints`, { token: team.token, body });
  if (response.statusCode !== 201) throw new Error(`addCheckpoint: ${response.statusCode} ${response.body}`);
  return response.json().data as { id: number };
}

export async function resolveIncident(t: TestApp, team: StatusTeam, incidentId: number) {
  const response = await t.request('PATCH', `${INCIDENTS}/${incidentId}/status`, { token: team.token, body: { resolved: true } });
  if (response.statusCode !== 200) throw new Error(`resolveIncident: ${response.statusCode} ${response.body}`);
}

/**
 * A triggered alert signal, as the alerting context records it in the endpoint's checks stream
 * (driving it through real failing checks needs a verified destination and many probes; the
 * alerting tests cover that path). Returns once the alerting view shows it.
 */
export async function triggerSignal(t: TestApp, team: StatusTeam, endpointId: number, signal: SignalType): Promise<void> {
  await recordSignalEvent(t, team, endpointId, ALERT_SIGNAL_TRIGGERED, { signal });
}

/** An alert signal event (triggered, recovered, flapping started...) recorded as triggerSignal does; returns its time. */
export async function recordSignalEvent(t: TestApp, team: StatusTeam, endpointId: number, type: string, data: Record<string, unknown>): Promise<string> {
  const at = new Date().toISOString();
  const append = await t.platform.events.append(
    checksStream(endpointId),
    [{ type, data: { endpoint_id: endpointId, team_id: team.teamId, project_id: team.projectId, check_id: 0, at, ...data } }],
    { expectedRevision: 'any' },
  );
  await t.platform.freshness.waitFor(append.position, ['alerting']);
  return at;
}

/** Every public representation of a page, for scans. */
export async function publicBodies(t: TestApp, slug: string): Promise<Record<string, string>> {
  const bodies: Record<string, string> = {};
  for (const path of ['', '/summary.json', '/incidents.json', '/feed.atom', '/feed.rss']) {
    const response = await t.request('GET', `/status/${slug}${path}`);
    if (response.statusCode !== 200) throw new Error(`GET /status/${slug}${path}: ${response.statusCode} ${response.body}`);
    bodies[path || '/'] = response.body;
  }
  return bodies;
}
