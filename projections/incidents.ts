import type { RecordedEvent } from '../src/platform/event-store/event-store.port.js';
import { defineProjection, type ProjectionHandler } from '../src/platform/projections/projection.js';
import { INCIDENT_EVENT_TYPES, type IncidentEvent } from '../src/incidents/domain/events.js';
import { evolve, type Incident } from '../src/incidents/domain/incident.js';

/**
 * `incidents`: one document per incident holding the whole aggregate state (`state`, folded
 * with the domain's own evolve, so the view and the command side can never disagree) plus the
 * flat fields the list filters and the keyset order use. Detail and summary are rendered from
 * `state` by the domain's detail-view at read time.
 */
export const INCIDENTS_VIEW = 'incidents';

export interface IncidentDoc {
  id: string;
  incident_num: number;
  team_id: number;
  project_id: number;
  endpoint_ids: number[];
  status_id: number;
  state_name: 'open' | 'resolved';
  severity: string;
  type: string;
  source: string;
  last_error_at: string;
  merged_into_id: number | null;
  state: Incident;
}

export function toIncidentDoc(state: Incident): IncidentDoc {
  return {
    id: String(state.id),
    incident_num: state.id,
    team_id: state.team_id,
    project_id: state.project_id,
    endpoint_ids: [...state.endpoint_ids],
    status_id: state.status_id,
    state_name: state.resolved_at === null ? 'open' : 'resolved',
    severity: state.severity,
    type: state.type,
    source: state.source,
    last_error_at: state.last_error_at,
    merged_into_id: state.merged_into_id,
    state,
  };
}

const apply: ProjectionHandler = async (event: RecordedEvent, views) => {
  const data = event.data as { incident_id: number };
  const existing = (await views.get('incidents', String(data.incident_id))) as IncidentDoc | null;
  const next = evolve(existing?.state ?? null, { type: event.type, data: event.data } as IncidentEvent);
  if (next) views.put('incidents', toIncidentDoc(next) as unknown as IncidentDoc & { [k: string]: unknown });
};

const byTeam = (...fields: string[]) => ({ fields: ['team_id', ...fields, 'incident_num'] });

export const incidentsProjection = defineProjection({
  name: INCIDENTS_VIEW,
  version: 1,
  collections: [
    {
      name: 'incidents',
      indexes: [
        byTeam(),
        byTeam('project_id'),
        byTeam('status_id'),
        byTeam('state_name'),
        byTeam('severity'),
        byTeam('type'),
        byTeam('source'),
        { fields: ['team_id', 'last_error_at'] },
        { fields: ['team_id', 'merged_into_id'] },
      ],
    },
  ],
  handlers: Object.fromEntries(INCIDENT_EVENT_TYPES.map((type) => [type, apply])),
});
