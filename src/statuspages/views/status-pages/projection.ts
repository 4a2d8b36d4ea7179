import type { RecordedEvent } from '../../../platform/event-store/event-store.port.js';
import { defineProjection, type ProjectionHandler } from '../../../platform/projections/projection.js';
import type { Doc } from '../../../platform/read-store/read-store.port.js';
import { STATUS_PAGE_DELETED, STATUS_PAGE_EVENT_TYPES } from '../../domain/events.js';
import { evolve, initialState, type StatusPageState } from '../../domain/status-page.js';
import { STATUS_PAGES_COLLECTION, STATUS_PAGES_PROJECTION, type StatusPageDoc } from './view.js';

function toDoc(state: StatusPageState): StatusPageDoc {
  return {
    id: String(state.page_id),
    page_id: state.page_id,
    team_id: state.team_id,
    slug: state.slug,
    title: state.title,
    description: state.description,
    components: state.components,
    history_days: state.history_days,
    publish_automatic_incidents: state.publish_automatic_incidents,
    created_at: state.created_at,
    updated_at: state.updated_at,
  };
}

/** Folds the page with the domain's own evolve, so the view and the command side agree. */
const apply: ProjectionHandler = async (event: RecordedEvent, views) => {
  const pageId = String((event.data as { page_id: number }).page_id);
  if (event.type === STATUS_PAGE_DELETED) {
    views.delete(STATUS_PAGES_COLLECTION, pageId);
    return;
  }
  const existing = (await views.get(STATUS_PAGES_COLLECTION, pageId)) as unknown as StatusPageDoc | null;
  const state = evolve(existing ? { ...initialState(), ...existing, exists: true } : initialState(), event);
  views.put(STATUS_PAGES_COLLECTION, toDoc(state) as unknown as Doc);
};

/** `status_pages`: one document per live page, found by id (admin) or by slug (public routes). */
export const statusPagesProjection = defineProjection({
  name: STATUS_PAGES_PROJECTION,
  version: 1,
  collections: [{ name: STATUS_PAGES_COLLECTION, indexes: [{ fields: ['team_id', 'page_id'] }, { fields: ['slug'] }] }],
  handlers: Object.fromEntries(STATUS_PAGE_EVENT_TYPES.map((type) => [type, apply])),
});
