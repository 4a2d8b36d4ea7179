import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { PROJECT_CREATED, PROJECT_DELETED, PROJECT_UPDATED, type ProjectCreatedData, type ProjectUpdatedData } from './events.js';

export interface ProjectState {
  exists: boolean;
  project_id: number;
  team_id: number;
  name: string;
  description: string;
  created_at: string;
  updated_at: string;
}

export const projectAggregate = {
  initial: (): ProjectState => ({ exists: false, project_id: 0, team_id: 0, name: '', description: '', created_at: '', updated_at: '' }),
  evolve(state: ProjectState, event: RecordedEvent): ProjectState {
    switch (event.type) {
      case PROJECT_CREATED: {
        const data = event.data as ProjectCreatedData;
        return { exists: true, ...data, updated_at: data.created_at };
      }
      case PROJECT_UPDATED: {
        const data = event.data as ProjectUpdatedData;
        return { ...state, ...data.changes, updated_at: data.updated_at };
      }
      case PROJECT_DELETED:
        return { ...state, exists: false };
      default:
        return state;
    }
  },
};

/** Only the fields whose value differs. */
export function projectChanges(state: ProjectState, patch: { name?: string; description?: string }): ProjectUpdatedData['changes'] {
  const changes: ProjectUpdatedData['changes'] = {};
  if (patch.name !== undefined && patch.name !== state.name) changes.name = patch.name;
  if (patch.description !== undefined && patch.description !== state.description) changes.description = patch.description;
  return changes;
}
