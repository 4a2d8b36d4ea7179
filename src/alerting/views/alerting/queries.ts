/** Reads of the alerting view (names and document type: `view.ts`). */
import type { ViewReader } from '../../../platform/projections/views.js';
import { ALERT_STATUS, ALERTING_VIEW, type AlertStatusDoc } from './view.js';

/**
 * The endpoint's alert status document when it is the team's, else null. Fields may be missing
 * (a document written before they existed, or before the endpoint's registration was applied).
 */
export async function alertStatusDoc(reader: ViewReader, teamId: number, endpointId: number): Promise<Partial<AlertStatusDoc> | null> {
  const doc = (await reader.get(ALERTING_VIEW, ALERT_STATUS, endpointId)) as unknown as Partial<AlertStatusDoc> | null;
  return doc && doc.team_id === teamId ? doc : null;
}
