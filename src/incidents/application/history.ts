import type { EventStore, RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { toIncidentDetail, type IncidentDetail } from '../domain/detail-view.js';
import { incidentStreamId } from '../domain/events.js';
import { describeEvent, stateAt, type HistoryEntry } from '../domain/history.js';
import { millisOf, parseRfc3339 } from '../../platform/time/rfc3339.js';

export interface IncidentHistory {
  incident_id: number;
  team_id: number;
  events: HistoryEntry[];
  /** The incident as of `at` (every event when omitted); null when it did not exist yet. */
  state: IncidentDetail | null;
}

/**
 * The incident's own stream, read straight from the log: a merged source keeps every event it
 * ever had (merge appends, it never moves or rewrites the source's past). Empty when the
 * incident does not exist.
 */
export function readIncidentEvents(events: EventStore, incidentId: number): Promise<RecordedEvent[]> {
  return events.readStream(incidentStreamId(incidentId));
}

/** The team that owns the incident whose events these are; null when there is none. */
export function owningTeam(recorded: readonly RecordedEvent[]): number | null {
  return stateAt(recorded)?.team_id ?? null;
}

/** What an auditor sees: the events recorded up to `at` (all when omitted) and the state they fold to. */
export function historyAsOf(incidentId: number, recorded: readonly RecordedEvent[], at?: string): IncidentHistory | null {
  const teamId = owningTeam(recorded);
  if (teamId === null) return null;
  const limit = at === undefined ? Infinity : (parseRfc3339(at) ?? Number.NaN);
  const state = stateAt(recorded, at);
  return {
    incident_id: incidentId,
    team_id: teamId,
    events: recorded.filter((e) => millisOf(e.recordedAt) <= limit).map(describeEvent),
    state: state ? toIncidentDetail(state) : null,
  };
}

export async function incidentHistory(events: EventStore, incidentId: number, at?: string): Promise<IncidentHistory | null> {
  return historyAsOf(incidentId, await readIncidentEvents(events, incidentId), at);
}
