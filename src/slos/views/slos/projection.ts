import type { RecordedEvent } from '../../../platform/event-store/event-store.port.js';
import { defineProjection, type ProjectionHandler } from '../../../platform/projections/projection.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { SLO_DELETED, SLO_EVENT_TYPES } from '../../domain/events.js';
import { evolve, initialState, type SloState } from '../../domain/slo.js';
import { SLOS_COLLECTION, SLOS_PROJECTION, type SloDoc } from './view.js';

function toDoc(state: SloState): SloDoc {
  return {
    id: String(state.slo_id),
    slo_id: state.slo_id,
    team_id: state.team_id,
    name: state.name,
    endpoint_ids: state.endpoint_ids,
    project_id: state.project_id,
    objective_percent: state.objective_percent,
    window_days: state.window_days,
    latency_threshold_ms: state.latency_threshold_ms,
    alerts: state.alerts,
    created_at: state.created_at,
    updated_at: state.updated_at,
  };
}

/** Folds the SLO with the domain's own evolve, so the view and the command side agree. */
const apply: ProjectionHandler = async (event: RecordedEvent, views) => {
  const sloId = String((event.data as { slo_id: number }).slo_id);
  if (event.type === SLO_DELETED) {
    views.delete(SLOS_COLLECTION, sloId);
    return;
  }
  const existing = (await views.get(SLOS_COLLECTION, sloId)) as unknown as SloDoc | null;
  if (!existing && event.type !== SLO_EVENT_TYPES[0]) return;
  const state = evolve(existing ? { ...initialState(), ...existing, exists: true } : initialState(), event);
  views.put(SLOS_COLLECTION, toDoc(state) as unknown as Doc);
};

/** `slos`: one document per live SLO, listed by team (admin and public lists, the burn-rate reactor). */
export const slosProjection = defineProjection({
  name: SLOS_PROJECTION,
  version: 1,
  collections: [{ name: SLOS_COLLECTION, indexes: [{ fields: ['team_id', 'slo_id'] }] }],
  handlers: Object.fromEntries(SLO_EVENT_TYPES.map((type) => [type, apply])),
});
