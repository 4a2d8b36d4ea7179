import { DESTINATION_VERIFIED, endpointStream } from '../../src/monitoring/domain/events.js';
import type { TestApp } from './test-app.js';

export async function createProject(t: TestApp, teamId: number, name = 'Web'): Promise<any> {
  const response = await t.admin('POST', `/api/v2/teams/${teamId}/projects`, { name });
  if (response.statusCode !== 201) throw new Error(`createProject: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

export async function createEndpoint(t: TestApp, teamId: number, projectId: number, extra: Record<string, unknown> = {}): Promise<any> {
  const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints`, { project_id: projectId, name: 'Home', url: 'https://example.com/health', ...extra });
  if (response.statusCode !== 201) throw new Error(`createEndpoint: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

/** Records a DestinationVerified event as the probing context's verify-destination route would. */
export async function markVerified(t: TestApp, teamId: number, endpointId: number): Promise<void> {
  const append = await t.platform.events.append(
    endpointStream(endpointId),
    [{ type: DESTINATION_VERIFIED, data: { endpoint_id: endpointId, team_id: teamId, verified_at: new Date().toISOString() } }],
    { expectedRevision: 'any' },
  );
  await t.platform.freshness.waitFor(append.position, ['monitoring']);
}

export function importedCheck(checked_at: string, extra: Record<string, unknown> = {}) {
  return { checked_at, success: true, status_code: 200, latency_ms: 120, ...extra };
}

export async function importChecks(t: TestApp, teamId: number, endpointId: number, checks: unknown[]) {
  const response = await t.admin('POST', `/api/v2/teams/${teamId}/endpoints/${endpointId}/checks/import`, { checks });
  if (response.statusCode !== 201) throw new Error(`importChecks: ${response.statusCode} ${response.body}`);
  return response.json().data;
}

/** A team with a monitoring:read token. */
export async function readerTeam(t: TestApp, name = 'Team'): Promise<{ teamId: number; token: string }> {
  const team = await t.createTeam(name);
  const { token } = await t.issueToken(team.id, ['monitoring:read'], 'viewer');
  return { teamId: team.id, token };
}
