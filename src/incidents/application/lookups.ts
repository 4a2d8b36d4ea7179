import type { Doc } from '../../platform/read-store/read-store.port.js';
import type { Platform } from '../../platform/platform.js';
import { StreamCache } from '../../platform/es/stream-cache.js';
import { endpointSnapshotAggregate } from '../../monitoring/domain/endpoint-snapshot.js';
import { endpointStream, projectStream } from '../../monitoring/domain/events.js';
import { projectAggregate } from '../../monitoring/domain/project.js';
import { loadStream } from '../../platform/es/stream-command.js';
import { incidentStreamId, type IncidentEvent } from '../domain/events.js';
import { evolve, initialState, type Incident, type IncidentState } from '../domain/incident.js';
import type { StatusFact } from '../domain/validation.js';
import { ENDPOINTS, PROJECTS } from '../../monitoring/views/monitoring/view.js';
import { monitoringRow } from '../../monitoring/views/monitoring/queries.js';
import { teamIncidentStatuses } from '../../tenancy/views/tenancy/queries.js';

/** The aggregate as runStreamCommand and loadStream need it. */
export const incidentAggregate = {
  initial: initialState,
  evolve: (state: IncidentState, event: { type: string; data: unknown }): IncidentState => evolve(state, event as IncidentEvent),
};

/** Incident streams this process keeps folded (least recently used dropped beyond this). */
const FOLDED_INCIDENTS = 10_000;
const folds = new WeakMap<Platform, StreamCache<IncidentState>>();

/**
 * This process's fold of incident streams: a command reads only the events appended since the
 * state it last saw (by any process), so its cost does not grow with the incident's history.
 */
export function incidentStreams(platform: Platform): StreamCache<IncidentState> {
  let fold = folds.get(platform);
  if (!fold) {
    fold = new StreamCache(platform.events, incidentAggregate.initial, incidentAggregate.evolve, FOLDED_INCIDENTS);
    folds.set(platform, fold);
  }
  return fold;
}

/** The incident from its stream (strongly consistent); null when missing or of another team. */
export async function loadTeamIncident(platform: Platform, teamId: number, incidentId: number): Promise<{ state: Incident; revision: number } | null> {
  const loaded = await incidentStreams(platform).load(incidentStreamId(incidentId));
  if (!loaded.state || loaded.state.team_id !== teamId) return null;
  return { state: loaded.state, revision: loaded.revision };
}

export interface IncidentStatusView {
  id: number;
  team_id: number;
  name: string;
  is_default: boolean;
  created_at: string;
}

/** The team's incident statuses (tenancy view), id ascending. `scope`: see `ReadStore.stamps` (one per request). */
export async function teamStatuses(platform: Platform, teamId: number, scope?: object): Promise<IncidentStatusView[]> {
  const docs = await teamIncidentStatuses(platform.reader, teamId, scope);
  return docs.map((doc) => ({ id: doc.id_num, team_id: doc.team_id, name: doc.name, is_default: doc.is_default, created_at: doc.created_at }));
}

export function statusFacts(statuses: IncidentStatusView[]): StatusFact[] {
  return statuses.map(({ id, name }) => ({ id, name }));
}

/**
 * Projects and endpoints of a team, for the lookup rules. The monitoring views answer first;
 * an id they do not know (a view still catching up, or the view not deployed) is confirmed
 * from the monitoring streams, which are the truth. So a project created a moment ago is
 * accepted, and an id that does not exist in the team is reported. `scope`: see
 * `ReadStore.stamps` (one per request, so a command's lookups share one look at the store).
 */
export class MonitoringFacts {
  constructor(private readonly platform: Platform) {}

  async projectIds(teamId: number, ids: number[], scope?: object): Promise<number[]> {
    const found: number[] = [];
    for (const id of unique(ids)) {
      const doc = await this.viewDoc(PROJECTS, id, scope);
      const team = doc ? (doc.team_id as number) : await this.projectTeamFromStream(id);
      if (team === teamId) found.push(id);
    }
    return found;
  }

  /** endpoint id -> project id, for the team's endpoints among `ids`. */
  async endpointProjects(teamId: number, ids: number[], scope?: object): Promise<Record<number, number>> {
    const result: Record<number, number> = {};
    for (const id of unique(ids)) {
      const doc = await this.viewDoc(ENDPOINTS, id, scope);
      const found = doc ? { team: doc.team_id as number, project: doc.project_id as number } : await this.endpointFromStream(id);
      if (found && found.team === teamId) result[id] = found.project;
    }
    return result;
  }

  /** The row through monitoring's shared cache of its rows (read on every create, rarely changed). */
  private async viewDoc(collection: typeof PROJECTS | typeof ENDPOINTS, id: number, scope: object | undefined): Promise<Doc | null> {
    try {
      return (await monitoringRow(this.platform.reader, collection, id, scope)) as unknown as Doc | null;
    } catch {
      return null;
    }
  }

  /** A deleted project (ProjectDeleted is its stream's last event) is no longer linkable. */
  private async projectTeamFromStream(id: number): Promise<number | null> {
    const { state } = await loadStream(this.platform.events, projectStream(id), projectAggregate);
    return state.exists ? state.team_id : null;
  }

  /** Through monitoring's fold of the endpoint stream: null when never registered or deleted. */
  private async endpointFromStream(id: number): Promise<{ team: number; project: number } | null> {
    const { state } = await loadStream(this.platform.events, endpointStream(id), endpointSnapshotAggregate);
    return state === null ? null : { team: state.team_id, project: state.project_id };
  }
}

function unique(ids: number[]): number[] {
  return [...new Set(ids.filter((id) => Number.isSafeInteger(id) && id > 0))];
}
