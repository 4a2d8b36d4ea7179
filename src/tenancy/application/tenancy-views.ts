/**
 * Read helpers of the tenancy view for every context (names and types: `domain/views.ts`), so
 * no reader elsewhere spells the view's collections.
 */
import type { ViewReader } from '../../platform/projections/views.js';
import { INCIDENT_STATUSES, type IncidentStatusDoc, TEAMS, TENANCY_VIEW } from '../domain/views.js';

/** Whether the team exists in the tenancy view. */
export async function teamExists(reader: ViewReader, teamId: number): Promise<boolean> {
  return (await reader.get(TENANCY_VIEW, TEAMS, teamId)) !== null;
}

/** The team's incident statuses, id ascending. */
export async function teamIncidentStatuses(reader: ViewReader, teamId: number): Promise<IncidentStatusDoc[]> {
  const docs = await reader.find(TENANCY_VIEW, INCIDENT_STATUSES, { filter: { team_id: teamId }, sort: [['id_num', 'asc']] });
  return docs as unknown as IncidentStatusDoc[];
}
