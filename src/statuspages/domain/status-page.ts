/**
 * The status page aggregate (`status-page-<id>`): `decide(state, command) -> events` and
 * `evolve(state, event) -> state`. Rules that need other streams or views (the slug is free,
 * every component names an endpoint of the team) are checked by the application before it
 * decides; this module holds what one page's own history decides.
 *
 * Decisions:
 * - An update that changes nothing appends nothing (the history stays the truth).
 * - A deleted page stays deleted: every later command on it is refused as not found.
 */
import type { RecordedEvent } from '../../platform/event-store/event-store.port.js';
import {
  STATUS_PAGE_CREATED,
  STATUS_PAGE_DELETED,
  STATUS_PAGE_UPDATED,
  type StatusPageComponent,
  type StatusPageCreatedData,
  type StatusPageDeletedData,
  type StatusPageFields,
  type StatusPageUpdatedData,
} from './events.js';

export const SLUG_PATTERN = /^[a-z0-9-]{1,64}$/;
export const DEFAULT_HISTORY_DAYS = 90;
export const LIMITS = {
  title: { min: 1, max: 200 },
  description: { max: 2000 },
  component_name: { min: 1, max: 200 },
  components: { max: 100 },
  history_days: { min: 1, max: 90 },
} as const;

export interface StatusPageState extends StatusPageFields {
  exists: boolean;
  deleted: boolean;
  page_id: number;
  team_id: number;
  created_at: string;
  updated_at: string;
}

export type StatusPageEvent =
  | { type: typeof STATUS_PAGE_CREATED; data: StatusPageCreatedData }
  | { type: typeof STATUS_PAGE_UPDATED; data: StatusPageUpdatedData }
  | { type: typeof STATUS_PAGE_DELETED; data: StatusPageDeletedData };

export type StatusPageCommand =
  | { kind: 'create'; page_id: number; team_id: number; fields: StatusPageFields; at: string }
  | { kind: 'update'; team_id: number; patch: Partial<StatusPageFields>; at: string }
  | { kind: 'delete'; team_id: number; at: string };

export type Decision = { ok: true; events: StatusPageEvent[] } | { ok: false; reason: 'not_found' | 'already_exists' };

export function initialState(): StatusPageState {
  return { exists: false, deleted: false, page_id: 0, team_id: 0, slug: '', title: '', description: '', components: [], history_days: DEFAULT_HISTORY_DAYS, publish_automatic_incidents: false, created_at: '', updated_at: '' };
}

export function evolve(state: StatusPageState, event: Pick<RecordedEvent, 'type' | 'data'>): StatusPageState {
  switch (event.type) {
    case STATUS_PAGE_CREATED: {
      const data = event.data as StatusPageCreatedData;
      return { ...state, ...data, exists: true, deleted: false, updated_at: data.created_at };
    }
    case STATUS_PAGE_UPDATED: {
      const data = event.data as StatusPageUpdatedData;
      return { ...state, ...data.changes, updated_at: data.updated_at };
    }
    case STATUS_PAGE_DELETED:
      return { ...state, deleted: true, updated_at: (event.data as StatusPageDeletedData).deleted_at };
    default:
      return state;
  }
}

export const statusPageAggregate = { initial: initialState, evolve };

const sameComponents = (a: StatusPageComponent[], b: StatusPageComponent[]) =>
  a.length === b.length && a.every((component, i) => component.endpoint_id === b[i].endpoint_id && component.name === b[i].name);

/** Only the fields whose value differs from the page's. */
export function changesOf(state: StatusPageState, patch: Partial<StatusPageFields>): Partial<StatusPageFields> {
  const changes: Partial<StatusPageFields> = {};
  if (patch.slug !== undefined && patch.slug !== state.slug) changes.slug = patch.slug;
  if (patch.title !== undefined && patch.title !== state.title) changes.title = patch.title;
  if (patch.description !== undefined && patch.description !== state.description) changes.description = patch.description;
  if (patch.history_days !== undefined && patch.history_days !== state.history_days) changes.history_days = patch.history_days;
  if (patch.publish_automatic_incidents !== undefined && patch.publish_automatic_incidents !== state.publish_automatic_incidents) {
    changes.publish_automatic_incidents = patch.publish_automatic_incidents;
  }
  if (patch.components !== undefined && !sameComponents(patch.components, state.components)) changes.components = patch.components;
  return changes;
}

const live = (state: StatusPageState, teamId: number) => state.exists && !state.deleted && state.team_id === teamId;

export function decide(state: StatusPageState, command: StatusPageCommand): Decision {
  switch (command.kind) {
    case 'create':
      if (state.exists) return { ok: false, reason: 'already_exists' };
      return {
        ok: true,
        events: [{ type: STATUS_PAGE_CREATED, data: { page_id: command.page_id, team_id: command.team_id, ...command.fields, created_at: command.at } }],
      };
    case 'update': {
      if (!live(state, command.team_id)) return { ok: false, reason: 'not_found' };
      const changes = changesOf(state, command.patch);
      if (Object.keys(changes).length === 0) return { ok: true, events: [] };
      return { ok: true, events: [{ type: STATUS_PAGE_UPDATED, data: { page_id: state.page_id, team_id: state.team_id, changes, updated_at: command.at } }] };
    }
    case 'delete':
      if (!live(state, command.team_id)) return { ok: false, reason: 'not_found' };
      return { ok: true, events: [{ type: STATUS_PAGE_DELETED, data: { page_id: state.page_id, team_id: state.team_id, slug: state.slug, deleted_at: command.at } }] };
  }
}
