/**
 * A project (stream `project-<id>`): the one fold of its stream and the decider of its commands.
 */
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import { AlreadyExistsError, ProjectNotEmptyError, ProjectNotFoundError, TeamNotFoundError } from './errors.js';
import { PROJECT_CREATED, PROJECT_DELETED, PROJECT_UPDATED, projectStream, type ProjectEvent, type ProjectUpdatedData } from './events.js';

export interface ProjectState {
  /** Created and not deleted. */
  exists: boolean;
  /** The stream holds events (a deleted project keeps them). */
  created: boolean;
  project_id: number;
  team_id: number;
  name: string;
  description: string;
  /**
   * When positive, an automatic incident about to open for an endpoint of the project joins the
   * project's open automatic incident of the same type opened within this many seconds (0: off).
   */
  incident_grouping_seconds?: number;
  created_at: string;
  updated_at: string;
}

export const INCIDENT_GROUPING_LIMITS = { min: 0, max: 3_600 } as const;

/** The project's grouping window in seconds (0: off; projects created before it have none). */
export const incidentGroupingSeconds = (state: Pick<ProjectState, 'incident_grouping_seconds'>): number => state.incident_grouping_seconds ?? 0;

const initialProject = (): ProjectState => ({ exists: false, created: false, project_id: 0, team_id: 0, name: '', description: '', created_at: '', updated_at: '' });

export function evolveProject(state: ProjectState, event: ProjectEvent): ProjectState {
  switch (event.type) {
    case PROJECT_CREATED:
      return { exists: true, created: true, ...event.data, updated_at: event.data.created_at };
    case PROJECT_UPDATED:
      return { ...state, ...event.data.changes, updated_at: event.data.updated_at };
    case PROJECT_DELETED:
      return { ...state, exists: false };
    default:
      return state;
  }
}

/** The project stream's fold, in the shape runStreamCommand and loadStream take. */
export const projectAggregate = {
  initial: initialProject,
  // The stream holds project events only (events.ts): the one place its events are typed.
  evolve: (state: ProjectState, event: RecordedEvent): ProjectState => evolveProject(state, event as ProjectEvent),
};

/** True when the project exists and belongs to the team. */
export const isProjectOf = (state: ProjectState, teamId: number): boolean => state.exists && state.team_id === teamId;

export type ProjectCommand =
  | { kind: 'create_project'; team_exists: boolean; project_id: number; team_id: number; name: string; description: string; incident_grouping_seconds?: number; created_at: string }
  | { kind: 'update_project'; project_id: number; team_id: number; name?: string; description?: string; incident_grouping_seconds?: number; updated_at: string }
  | {
      kind: 'delete_project';
      project_id: number;
      team_id: number;
      /** The monitoring view lists an endpoint in the project (every write waits for that view). */
      has_endpoints: boolean;
      deleted_at: string;
    };

/** Refuses a creation before an id is allocated for it (decide checks the same). */
export function checkProjectCreation(command: { team_exists: boolean; team_id: number }): void {
  if (!command.team_exists) throw new TeamNotFoundError(command.team_id);
}

export function decideProject(state: ProjectState, command: ProjectCommand): ProjectEvent[] {
  switch (command.kind) {
    case 'create_project': {
      checkProjectCreation(command);
      if (state.created) throw new AlreadyExistsError(projectStream(command.project_id));
      const { project_id, team_id, name, description, created_at } = command;
      const grouping = command.incident_grouping_seconds ? { incident_grouping_seconds: command.incident_grouping_seconds } : {};
      return [{ type: PROJECT_CREATED, data: { project_id, team_id, name, description, ...grouping, created_at } }];
    }
    case 'update_project': {
      if (!isProjectOf(state, command.team_id)) throw new ProjectNotFoundError(command.project_id);
      const changes = projectChanges(state, command);
      if (Object.keys(changes).length === 0) return [];
      return [{ type: PROJECT_UPDATED, data: { project_id: command.project_id, team_id: command.team_id, changes, updated_at: command.updated_at } }];
    }
    case 'delete_project':
      if (!isProjectOf(state, command.team_id)) throw new ProjectNotFoundError(command.project_id);
      if (command.has_endpoints) throw new ProjectNotEmptyError(command.project_id);
      return [{ type: PROJECT_DELETED, data: { project_id: command.project_id, team_id: command.team_id, deleted_at: command.deleted_at } }];
  }
}

/** Only the fields whose value differs. */
export function projectChanges(state: ProjectState, patch: { name?: string; description?: string; incident_grouping_seconds?: number }): ProjectUpdatedData['changes'] {
  const changes: ProjectUpdatedData['changes'] = {};
  if (patch.name !== undefined && patch.name !== state.name) changes.name = patch.name;
  if (patch.description !== undefined && patch.description !== state.description) changes.description = patch.description;
  if (patch.incident_grouping_seconds !== undefined && patch.incident_grouping_seconds !== incidentGroupingSeconds(state)) {
    changes.incident_grouping_seconds = patch.incident_grouping_seconds;
  }
  return changes;
}
