import type { EventStore } from '../../platform/event-store/event-store.port.js';
import { toIncidentDetail, type IncidentDetail } from '../domain/detail-view.js';
import { incidentStreamId } from '../domain/events.js';
import { describeEvent, stateAt, type HistoryEntry } from '../domain/history.js';

export interface IncidentHistory {
  incident_id: number;
  team_id: number;
  events: HistoryEntry[];
  /** The incident as of `at` (every event when omitted); null when it did not exist yet. */
  state: IncidentDetail | null;
}

/**
 * The incident's own stream, read straight from the log: a merged source keeps every event it
 * ever had (merge appends, it never moves or rewrites the source's past).
 */
export async function incidentHistory(events: EventStore, incidentId: number, at?: string): Promise<IncidentHistory | null> {
  const recorded = await events.readStream(incidentStreamId(incidentId));
  const current = stateAt(recorded);
  if (!current) return null;
  const limit = at === undefined ? Infinity : Date.parse(at);
  const state = stateAt(recorded, at);
  return {
    incident_id: incidentId,
    team_id: current.team_id,
    events: recorded.filter((e) => Date.parse(e.recordedAt) <= limit).map(describeEvent),
    state: state ? toIncidentDetail(state) : null,
  };
}
